#pragma once
// CsvEncoder: writes one CSV record (RFC 4180) per call sequence, without a line end (sinks add
// '\n'). A field is quoted when it contains the delimiter, '"', '\r' or '\n', or when it is the
// empty string (so it stays distinct from null, which is written as nothing); quotes inside are
// doubled. Values use the text forms listed in csv_decoder.h; doubles are shortest round-trip text,
// timestamps RFC 3339 UTC with milliseconds. Generated shape:
//
//   void EncodeClickCsv(const Click& r, CsvEncoder* e) {
//     e->Clear();
//     e->Field<CsvString>(r.user);
//     e->Field<CsvInt>(r.bytes);
//     e->Field<CsvNullable<CsvString>>(r.ref);
//   }
//
// Threading: one encoder per thread. No errors.

#include <string>
#include <string_view>

#include "flow/runtime/formats/csv_decoder.h"

namespace flow::rt {

class CsvEncoder {
 public:
  explicit CsvEncoder(char delimiter = ',') : delimiter_(delimiter) {}

  void Clear() {
    out_.clear();
    first_ = true;
  }
  std::string_view view() const { return out_; }

  template <typename Codec, typename V>
  void Field(const V& value) {
    Codec::Write(value, this);
  }

  // Low-level: one field, quoted when needed.
  void Text(std::string_view text);
  // One field that needs no quoting check (numbers), or an empty (null) field.
  void Plain(std::string_view text) {
    Separate();
    out_.append(text);
  }
  void Null() { Separate(); }
  // A header row from names.
  void Header(std::span<const std::string_view> names) {
    for (auto n : names) Text(n);
  }

 private:
  void Separate() {
    if (!first_) out_.push_back(delimiter_);
    first_ = false;
  }

  char delimiter_;
  std::string out_;
  bool first_ = true;
};

template <typename Elem>
void CsvNullable<Elem>::Write(const Value& v, CsvEncoder* e) {
  if (v.has_value()) {
    Elem::Write(*v, e);
  } else {
    e->Null();
  }
}

}  // namespace flow::rt
