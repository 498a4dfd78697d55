#include "flow/runtime/formats/json_encoder.h"

#include <array>
#include <charconv>
#include <cmath>

#include "flow/runtime/formats/utf8.h"
#include "flow/runtime/formats/value_text.h"

namespace flow::rt {
namespace {

constexpr char kHex[] = "0123456789abcdef";

// Bytes that need more than a plain copy: control chars, '"', '\\', and non-ASCII.
constexpr std::array<bool, 256> kNeedsCare = [] {
  std::array<bool, 256> t{};
  for (int c = 0; c < 256; ++c) t[c] = c < 0x20 || c == '"' || c == '\\' || c >= 0x80;
  return t;
}();

inline bool NeedsCare(unsigned char c) { return kNeedsCare[c]; }

}  // namespace

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
  out_.push_back('"');
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    size_t run = i;
    while (run < n && !NeedsCare(p[run])) ++run;
    out_.append(s.data() + i, run - i);
    i = run;
    if (i == n) break;
    unsigned char c = p[i];
    if (c >= 0x80) {
      size_t len = Utf8SequenceLength(p + i, n - i);
      if (len == 0) {
        out_.append("\xEF\xBF\xBD");  // U+FFFD for one invalid byte
        i += 1;
      } else {
        out_.append(s.data() + i, len);
        i += len;
      }
      continue;
    }
    out_.push_back('\\');
    switch (c) {
      case '"': out_.push_back('"'); break;
      case '\\': out_.push_back('\\'); break;
      case '\b': out_.push_back('b'); break;
      case '\f': out_.push_back('f'); break;
      case '\n': out_.push_back('n'); break;
      case '\r': out_.push_back('r'); break;
      case '\t': out_.push_back('t'); break;
      default:
        out_.append("u00");
        out_.push_back(kHex[c >> 4]);
        out_.push_back(kHex[c & 15]);
    }
    ++i;
  }
  out_.push_back('"');
}

}  // namespace flow::rt
