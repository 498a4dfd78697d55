#pragma once
// Raw format: the whole payload is one string field (schema `{ value: string }` or any one-string
// schema); encoding writes the field's bytes unchanged. No validation, no errors: a raw payload
// may hold any bytes, including invalid UTF-8. Header-only and allocation-free beyond the copy.

#include <string>
#include <string_view>

#include "flow/runtime/common/status.h"

namespace flow::rt {

struct RawFormat {
  [[nodiscard]] static Status Decode(std::string_view payload, std::string* out) {
    out->assign(payload.data(), payload.size());
    return Status::Ok();
  }
  static std::string_view Encode(const std::string& value) { return value; }
};

}  // namespace flow::rt
