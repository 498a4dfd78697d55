#pragma once
// JsonDecoder: parses one JSON object per record (simdjson On-Demand) and lets generated code pull
// only its schema's fields, in whatever order they appear. Unknown fields are skipped without being
// materialized. Values are read through the codecs in json_codecs.h. The generated shape:
//
//   inline constexpr JsonFieldTable<3> kClickFields{{"user", "bytes", "ref"},
//                                                   {true, true, false}};
//   Status DecodeClickJson(JsonDecoder& d, std::string_view payload, Click* out) {
//     FLOW_RETURN_IF_ERROR(d.Begin(payload));
//     std::bitset<3> seen;
//     std::string_view key;
//     while (d.NextField(&key)) {
//       switch (kClickFields.Find(key)) {
//         case 0: FLOW_RETURN_IF_ERROR(d.Read<JsonString>("user", &out->user)); seen.set(0); break;
//         case 1: FLOW_RETURN_IF_ERROR(d.Read<JsonInt>("bytes", &out->bytes)); seen.set(1); break;
//         case 2: FLOW_RETURN_IF_ERROR(d.Read<JsonNullable<JsonString>>("ref", &out->ref));
//                 seen.set(2); break;
//         default: break;  // not in the schema: skipped
//       }
//     }
//     FLOW_RETURN_IF_ERROR(d.End());
//     if (!seen[2]) out->ref.reset();  // missing nullable field -> null
//     return d.CheckRequired(kClickFields, seen);
//   }
//
// Errors: Status kInvalidArgument naming the field and problem, e.g.
//   "field `bytes`: expected int, found string", "field `tags`: element 2: expected string, found
//   int", "field `url`: missing", "malformed JSON: ...", "invalid UTF-8".
// Malformed input never crashes. On-Demand parsing validates UTF-8 and structure of what is read;
// values of skipped fields are only checked for balanced nesting, and an extra closing brace right
// after the root object is not detected.
// Padding: simdjson reads up to 64 bytes past the input; Begin() copies the payload into an
// internal padded buffer (reused, so no allocation per record); BeginPadded() skips the copy when
// the caller guarantees kJsonPadding readable bytes after the payload. Threading: one decoder per
// thread (it owns a simdjson parser); reuse it for every record.

#include <array>
#include <bitset>
#include <cstddef>
#include <string>
#include <string_view>

// simdjson's class layouts depend on these macros, and its On-Demand code is inlined here, so every
// translation unit (the runtime library and generated code, whatever their build type or -pthread
// setting) must agree: pin them to what the Debian libsimdjson was built with. Include this header
// before any other use of simdjson.
#ifndef SIMDJSON_THREADS_ENABLED
#define SIMDJSON_THREADS_ENABLED 1
#endif
#ifndef SIMDJSON_DEVELOPMENT_CHECKS
#define SIMDJSON_DEVELOPMENT_CHECKS 0
#endif
#include <simdjson.h>
static_assert(SIMDJSON_DEVELOPMENT_CHECKS == 0,
              "flow formats need SIMDJSON_DEVELOPMENT_CHECKS=0 in every translation unit");

#include "flow/runtime/common/status.h"

namespace flow::rt {

inline constexpr size_t kJsonPadding = simdjson::SIMDJSON_PADDING;

using JsonValue = simdjson::ondemand::value;

// The schema's field names (in declaration order) and which are required (non-nullable).
template <size_t N>
struct JsonFieldTable {
  std::array<std::string_view, N> names;
  std::array<bool, N> required;

  // Index of `key` in `names`, or -1. Linear scan: schemas are small and the length check rejects
  // most candidates without touching the bytes.
  constexpr int Find(std::string_view key) const {
    for (size_t i = 0; i < N; ++i) {
      if (names[i].size() == key.size() && names[i] == key) return static_cast<int>(i);
    }
    return -1;
  }
};

// Reads the fields of one JSON object. JsonDecoder uses one for the root object; generated codecs
// for nested record types use one over a field's value (see JsonDecodeTest's Geo codec).
class JsonObjectReader {
 public:
  // Starts reading `value`, which must be an object ("expected object, found list" otherwise).
  [[nodiscard]] Status Begin(JsonValue& value);
  [[nodiscard]] Status Begin(simdjson::ondemand::object object);

  // Moves to the next field and returns its (unescaped) name; false when the object is exhausted
  // or broken (End() then reports why). A field whose value was not Read() is skipped.
  bool NextField(std::string_view* key);

  // Reads the current field's value with `Codec` into `*out`; `field` names it in errors.
  template <typename Codec, typename V>
  [[nodiscard]] Status Read(std::string_view field, V* out) {
    Status s = Codec::Read(value_, out);
    if (!s.ok()) [[unlikely]]
      return FieldError(field, s);
    return s;
  }

  // The error that stopped NextField(), or OK.
  [[nodiscard]] Status End() { return std::move(error_); }

  // "field `x`: missing" for the first required field not in `seen`.
  template <size_t N>
  [[nodiscard]] Status CheckRequired(const JsonFieldTable<N>& table, const std::bitset<N>& seen) {
    for (size_t i = 0; i < N; ++i) {
      if (table.required[i] && !seen[i]) [[unlikely]]
        return MissingField(table.names[i]);
    }
    return Status::Ok();
  }

 private:
  static Status FieldError(std::string_view field, const Status& inner);
  static Status MissingField(std::string_view field);

  simdjson::ondemand::object object_;
  simdjson::ondemand::object_iterator it_;
  simdjson::ondemand::object_iterator end_;
  JsonValue value_;
  Status error_;
  bool started_ = false;
};

class JsonDecoder {
 public:
  // Starts decoding `payload`, which must hold one JSON object.
  [[nodiscard]] Status Begin(std::string_view payload);
  // Like Begin(), without copying; `payload.data()` must have kJsonPadding readable bytes after
  // `payload.size()`.
  [[nodiscard]] Status BeginPadded(std::string_view payload);

  // The root object's fields: see JsonObjectReader.
  bool NextField(std::string_view* key) { return root_.NextField(key); }
  template <typename Codec, typename V>
  [[nodiscard]] Status Read(std::string_view field, V* out) {
    return root_.Read<Codec>(field, out);
  }
  [[nodiscard]] Status End() { return root_.End(); }
  template <size_t N>
  [[nodiscard]] Status CheckRequired(const JsonFieldTable<N>& table, const std::bitset<N>& seen) {
    return root_.CheckRequired(table, seen);
  }

 private:
  Status StartDocument(std::string_view padded, size_t len);

  simdjson::ondemand::parser parser_;
  simdjson::ondemand::document doc_;
  JsonObjectReader root_;
  std::string padded_;
};

// Error helpers used by the codecs (cold path). "expected int, found string".
Status JsonTypeError(std::string_view expected, JsonValue& value);
// Describes a simdjson error code in words.
Status JsonSyntaxError(simdjson::error_code code);

}  // namespace flow::rt
