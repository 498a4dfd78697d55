#pragma once
// JSON codecs: one type per Flow type, each with
//   static Status Read(JsonValue& v, Value* out)      -- used by JsonDecoder::Read<Codec>
//   static void Write(const Value& v, JsonEncoder* e)  -- used by JsonEncoder::Field<Codec>
// The code generator maps a Flow type to a codec type expression:
//   int -> JsonInt (int64_t)            float -> JsonFloat (double; JSON ints accepted)
//   bool -> JsonBool                    string -> JsonString (std::string, UTF-8)
//   bytes -> JsonBytes (std::string holding raw bytes; JSON text is standard base64)
//   timestamp -> JsonTimestamp (TimestampMs; RFC 3339 string or integer epoch milliseconds)
//   duration -> JsonDuration (DurationMs; integer milliseconds or a string like "1h30m", "250ms")
//   list<T> -> JsonList<codec of T> (std::vector)
//   T? -> JsonNullable<codec of T> (std::optional; JSON null -> nullopt)
// Read errors are kInvalidArgument without the field name (JsonDecoder adds it):
//   "expected int, found string", "expected int, found integer out of int64 range",
//   "element 2: expected string, found int", "invalid base64", "invalid timestamp \"x\"".

#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "flow/runtime/common/status.h"
#include "flow/runtime/common/time.h"
#include "flow/runtime/formats/json_decoder.h"
#include "flow/runtime/formats/json_encoder.h"

namespace flow::rt {

namespace json_internal {
Status BadText(std::string_view what, std::string_view text);
Status ElementError(size_t index, const Status& inner);
Status ReadTimestampString(std::string_view text, TimestampMs* out);
Status ReadDurationString(std::string_view text, DurationMs* out);
Status ReadBase64(std::string_view text, std::string* out);
}  // namespace json_internal

struct JsonInt {
  using Value = int64_t;
  static Status Read(JsonValue& v, int64_t* out) {
    if (v.get_int64().get(*out)) [[unlikely]]
      return JsonTypeError("int", v);
    return Status::Ok();
  }
  static void Write(int64_t v, JsonEncoder* e) { e->Int(v); }
};

struct JsonFloat {
  using Value = double;
  static Status Read(JsonValue& v, double* out) {
    if (v.get_double().get(*out)) [[unlikely]]
      return JsonTypeError("float", v);
    return Status::Ok();
  }
  static void Write(double v, JsonEncoder* e) { e->Float(v); }
};

struct JsonBool {
  using Value = bool;
  static Status Read(JsonValue& v, bool* out) {
    if (v.get_bool().get(*out)) [[unlikely]]
      return JsonTypeError("bool", v);
    return Status::Ok();
  }
  static void Write(bool v, JsonEncoder* e) { e->Bool(v); }
};

struct JsonString {
  using Value = std::string;
  static Status Read(JsonValue& v, std::string* out) {
    std::string_view s;
    if (auto err = v.get_string().get(s)) [[unlikely]] {
      if (err == simdjson::INCORRECT_TYPE) return JsonTypeError("string", v);
      return JsonSyntaxError(err);
    }
    out->assign(s.data(), s.size());
    return Status::Ok();
  }
  static void Write(const std::string& v, JsonEncoder* e) { e->String(v); }
};

struct JsonBytes {
  using Value = std::string;
  static Status Read(JsonValue& v, std::string* out) {
    std::string_view s;
    if (auto err = v.get_string().get(s)) [[unlikely]] {
      if (err == simdjson::INCORRECT_TYPE) return JsonTypeError("bytes (base64 string)", v);
      return JsonSyntaxError(err);
    }
    return json_internal::ReadBase64(s, out);
  }
  static void Write(const std::string& v, JsonEncoder* e) { e->Bytes(v); }
};

struct JsonTimestamp {
  using Value = TimestampMs;
  static Status Read(JsonValue& v, TimestampMs* out) {
    std::string_view s;
    if (!v.get_string().get(s)) return json_internal::ReadTimestampString(s, out);
    if (v.get_int64().get(*out)) [[unlikely]] {
      return JsonTypeError("timestamp (RFC 3339 string or epoch milliseconds)", v);
    }
    return Status::Ok();
  }
  static void Write(TimestampMs v, JsonEncoder* e) { e->Timestamp(v); }
};

struct JsonDuration {
  using Value = DurationMs;
  static Status Read(JsonValue& v, DurationMs* out) {
    std::string_view s;
    if (!v.get_string().get(s)) return json_internal::ReadDurationString(s, out);
    if (v.get_int64().get(*out)) [[unlikely]] {
      return JsonTypeError("duration (milliseconds or a string like \"1h30m\")", v);
    }
    return Status::Ok();
  }
  static void Write(DurationMs v, JsonEncoder* e) { e->Duration(v); }
};

template <typename Elem>
struct JsonList {
  using Value = std::vector<typename Elem::Value>;
  static Status Read(JsonValue& v, Value* out) {
    simdjson::ondemand::array array;
    if (v.get_array().get(array)) [[unlikely]]
      return JsonTypeError("list", v);
    size_t n = 0;
    for (auto element : array) {
      JsonValue ev;
      if (auto err = element.get(ev)) [[unlikely]]
        return JsonSyntaxError(err);
      if constexpr (std::is_same_v<typename Elem::Value, bool>) {
        bool b = false;
        Status s = Elem::Read(ev, &b);
        if (!s.ok()) [[unlikely]]
          return json_internal::ElementError(n, s);
        if (n == out->size()) out->emplace_back();
        (*out)[n] = b;
      } else {
        // Reuses existing elements (and their string capacity) from the previous record.
        if (n == out->size()) out->emplace_back();
        Status s = Elem::Read(ev, &(*out)[n]);
        if (!s.ok()) [[unlikely]]
          return json_internal::ElementError(n, s);
      }
      ++n;
    }
    out->resize(n);
    return Status::Ok();
  }
  static void Write(const Value& v, JsonEncoder* e) {
    e->BeginArray();
    for (const auto& x : v) Elem::Write(x, e);
    e->EndArray();
  }
};

template <typename Elem>
struct JsonNullable {
  using Value = std::optional<typename Elem::Value>;
  static Status Read(JsonValue& v, Value* out) {
    bool is_null = false;
    if (auto err = v.is_null().get(is_null)) [[unlikely]]
      return JsonSyntaxError(err);
    if (is_null) {
      out->reset();
      return Status::Ok();
    }
    if (!out->has_value()) out->emplace();
    return Elem::Read(v, &**out);
  }
  static void Write(const Value& v, JsonEncoder* e) {
    if (v.has_value()) {
      Elem::Write(*v, e);
    } else {
      e->Null();
    }
  }
};

}  // namespace flow::rt
