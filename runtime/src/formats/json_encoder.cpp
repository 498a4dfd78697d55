#include "flow/runtime/formats/json_encoder.h"

#include <charconv>
#include <cmath>

#include "flow/runtime/common/json_escape.h"
#include "flow/runtime/formats/value_text.h"

namespace flow::rt {

void JsonEncoder::Int(int64_t v) {
  Separate();
  char buf[24];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out_.append(buf, ptr);
}

void JsonEncoder::Float(double v) {
  Separate();
  if (!std::isfinite(v)) {
    out_.append("null");
    return;
  }
  AppendDouble(v, &out_);
}

void JsonEncoder::Bytes(std::string_view v) {
  Separate();
  out_.push_back('"');
  AppendBase64(v, &out_);
  out_.push_back('"');
}

void JsonEncoder::Timestamp(TimestampMs v) {
  Separate();
  out_.push_back('"');
  AppendTimestamp(v, &out_);
  out_.push_back('"');
}

void JsonEncoder::AppendString(std::string_view s) {
  AppendJsonString(s, &out_);
}

}  // namespace flow::rt
