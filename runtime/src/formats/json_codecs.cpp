#include "flow/runtime/formats/json_codecs.h"

#include <fmt/format.h>

#include "flow/runtime/formats/value_text.h"

namespace flow::rt::json_internal {
namespace {

// Bad values are quoted in messages, shortened so a huge payload does not become a huge error.
std::string Excerpt(std::string_view text) {
  constexpr size_t kMax = 40;
  if (text.size() <= kMax) return std::string(text);
  return std::string(text.substr(0, kMax)) + "...";
}

}  // namespace

Status BadText(std::string_view what, std::string_view text) {
  return Status::InvalidArgument(fmt::format("invalid {} \"{}\"", what, Excerpt(text)));
}

Status ElementError(size_t index, const Status& inner) {
  return Status(inner.code(), fmt::format("element {}: {}", index, inner.message()));
}

Status ReadTimestampString(std::string_view text, TimestampMs* out) {
  if (!ParseTimestamp(text, out)) [[unlikely]] {
    return BadText("timestamp (want RFC 3339 like 2026-11-29T14:41:15.123Z)", text);
  }
  return Status::Ok();
}

Status ReadDurationString(std::string_view text, DurationMs* out) {
  if (!ParseDuration(text, out)) [[unlikely]] {
    return BadText("duration (want e.g. 1h30m, 10s, 250ms)", text);
  }
  return Status::Ok();
}

Status ReadBase64(std::string_view text, std::string* out) {
  if (!DecodeBase64(text, out)) [[unlikely]]
    return BadText("base64", text);
  return Status::Ok();
}

}  // namespace flow::rt::json_internal
