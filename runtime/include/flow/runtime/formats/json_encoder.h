#pragma once
// JsonEncoder: writes one JSON document per record into a reusable buffer. Generated encode
// functions call it in schema order, so output field order is deterministic:
//
//   void EncodeClickJson(const Click& r, JsonEncoder* e) {
//     e->BeginObject();
//     e->Field<JsonString>("user", r.user);
//     e->Field<JsonList<JsonString>>("tags", r.tags);
//     e->Field<JsonNullable<JsonString>>("ref", r.ref);
//     e->Field<JsonTimestamp>("ts", r.ts);
//     e->EndObject();
//   }
//
// Output rules: strings are escaped by AppendJsonString (common/json_escape.h, JsonControls::
// kRequired): '"', '\\' and every control character below 0x20 (\b \f \n \r \t by name, the rest
// as \u00XX); valid UTF-8 passes through unchanged and each invalid byte becomes U+FFFD, so the
// output is always valid JSON. Doubles use the shortest text that parses back to the
// same value; NaN and +-Inf become null. Timestamps are RFC 3339 UTC strings with milliseconds,
// durations integer milliseconds, bytes standard padded base64 strings.
// Threading: one encoder per thread. No errors: every value is encodable.

#include <cstdint>
#include <string>
#include <string_view>

#include "flow/runtime/common/time.h"

namespace flow::rt {

class JsonEncoder {
 public:
  // Forgets the previous document, keeping the buffer's capacity.
  void Clear() {
    out_.clear();
    need_comma_ = false;
  }
  // The encoded text since the last Clear().
  std::string_view view() const { return out_; }
  std::string& buffer() { return out_; }

  void BeginObject() {
    Separate();
    out_.push_back('{');
    need_comma_ = false;
  }
  void EndObject() {
    out_.push_back('}');
    need_comma_ = true;
  }
  void BeginArray() {
    Separate();
    out_.push_back('[');
    need_comma_ = false;
  }
  void EndArray() {
    out_.push_back(']');
    need_comma_ = true;
  }
  // Writes `"name":`; the next value call writes the field's value.
  void Key(std::string_view name) {
    Separate();
    AppendString(name);
    out_.push_back(':');
    need_comma_ = false;
  }
  // Key + value through a codec from json_codecs.h.
  template <typename Codec, typename V>
  void Field(std::string_view name, const V& value) {
    Key(name);
    Codec::Write(value, this);
  }
  // The same with the key already written as JSON: `quoted_key` is the name as a JSON string
  // followed by ':' (generated encoders escape their field names once, when the job is built).
  template <typename Codec, typename V>
  void QuotedField(std::string_view quoted_key, const V& value) {
    Separate();
    out_.append(quoted_key);
    need_comma_ = false;
    Codec::Write(value, this);
  }

  void Null() {
    Separate();
    out_.append("null");
  }
  void Bool(bool v) {
    Separate();
    out_.append(v ? "true" : "false");
  }
  void Int(int64_t v);
  void Float(double v);
  void String(std::string_view v) {
    Separate();
    AppendString(v);
  }
  void Bytes(std::string_view v);
  void Timestamp(TimestampMs v);
  void Duration(DurationMs v) { Int(v); }

 private:
  void Separate() {
    if (need_comma_) out_.push_back(',');
    need_comma_ = true;
  }
  void AppendString(std::string_view s);

  std::string out_;
  bool need_comma_ = false;
};

}  // namespace flow::rt
