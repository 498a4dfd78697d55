#include "flow/runtime/formats/json_decoder.h"

#include <cstring>

#include <fmt/format.h>

namespace flow::rt {
namespace {

std::string_view TypeName(simdjson::ondemand::json_type t) {
  using simdjson::ondemand::json_type;
  switch (t) {
    case json_type::array:
      return "list";
    case json_type::object:
      return "object";
    case json_type::number:
      return "number";
    case json_type::string:
      return "string";
    case json_type::boolean:
      return "bool";
    case json_type::null:
      return "null";
  }
  return "unknown";
}

bool IsJsonSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

}  // namespace

Status JsonSyntaxError(simdjson::error_code code) {
  if (code == simdjson::UTF8_ERROR) return Status::InvalidArgument("invalid UTF-8");
  if (code == simdjson::EMPTY) return Status::InvalidArgument("malformed JSON: empty payload");
  return Status::InvalidArgument(fmt::format("malformed JSON: {}", simdjson::error_message(code)));
}

Status JsonTypeError(std::string_view expected, JsonValue& value) {
  simdjson::ondemand::json_type t;
  if (auto err = value.type().get(t)) return JsonSyntaxError(err);
  std::string_view found = TypeName(t);
  if (t == simdjson::ondemand::json_type::number) {
    simdjson::ondemand::number_type nt;
    if (!value.get_number_type().get(nt)) {
      if (nt == simdjson::ondemand::number_type::floating_point_number) {
        found = "float";
      } else if (nt == simdjson::ondemand::number_type::unsigned_integer) {
        found = "integer out of int64 range";
      } else {
        found = "int";
      }
    }
  }
  return Status::InvalidArgument(fmt::format("expected {}, found {}", expected, found));
}

Status JsonDecoder::Begin(std::string_view payload) {
  // Reuse the buffer: grows to the largest record seen, then never allocates again.
  padded_.resize(payload.size() + kJsonPadding);
  if (!payload.empty()) std::memcpy(padded_.data(), payload.data(), payload.size());
  return StartDocument(std::string_view(padded_.data(), padded_.size()), payload.size());
}

Status JsonDecoder::BeginPadded(std::string_view payload) {
  return StartDocument(std::string_view(payload.data(), payload.size() + kJsonPadding),
                       payload.size());
}

Status JsonDecoder::StartDocument(std::string_view padded, size_t len) {
  // The root must be an object, so after trailing whitespace the last byte must be '}'; this
  // catches trailing garbage that On-Demand would not look at.
  size_t end = len;
  while (end > 0 && IsJsonSpace(padded[end - 1])) --end;
  if (end == 0) return JsonSyntaxError(simdjson::EMPTY);
  if (auto err = parser_.iterate(padded.data(), len, padded.size()).get(doc_)) {
    return JsonSyntaxError(err);
  }
  simdjson::ondemand::json_type t;
  if (auto err = doc_.type().get(t)) return JsonSyntaxError(err);
  if (t != simdjson::ondemand::json_type::object) {
    return Status::InvalidArgument(
        fmt::format("expected a JSON object per record, found {}", TypeName(t)));
  }
  if (padded[end - 1] != '}') {
    return Status::InvalidArgument("malformed JSON: trailing content after the object");
  }
  simdjson::ondemand::object object;
  if (auto err = doc_.get_object().get(object)) return JsonSyntaxError(err);
  return root_.Begin(std::move(object));
}

Status JsonObjectReader::Begin(JsonValue& value) {
  simdjson::ondemand::object object;
  if (value.get_object().get(object)) return JsonTypeError("object", value);
  return Begin(std::move(object));
}

Status JsonObjectReader::Begin(simdjson::ondemand::object object) {
  started_ = false;
  error_ = Status::Ok();
  object_ = std::move(object);
  if (auto err = object_.begin().get(it_)) return JsonSyntaxError(err);
  if (auto err = object_.end().get(end_)) return JsonSyntaxError(err);
  return Status::Ok();
}

bool JsonObjectReader::NextField(std::string_view* key) {
  if (started_) ++it_;
  started_ = true;
  if (!(it_ != end_)) return false;
  simdjson::simdjson_result<simdjson::ondemand::field> field = *it_;
  if (auto err = field.error()) {
    error_ = JsonSyntaxError(err);
    return false;
  }
  if (auto err = field.unescaped_key().get(*key)) {
    error_ = JsonSyntaxError(err);
    return false;
  }
  value_ = std::move(field.value_unsafe()).value();
  return true;
}

Status JsonObjectReader::FieldError(std::string_view field, const Status& inner) {
  return Status(inner.code(), fmt::format("field `{}`: {}", field, inner.message()));
}

Status JsonObjectReader::MissingField(std::string_view field) {
  return Status::InvalidArgument(fmt::format("field `{}`: missing", field));
}

}  // namespace flow::rt
