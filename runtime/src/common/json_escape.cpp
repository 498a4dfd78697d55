#include "flow/runtime/common/json_escape.h"

#include <array>

#include "flow/runtime/common/utf8.h"

namespace flow::rt {
namespace {

constexpr char kHex[] = "0123456789abcdef";

// Bytes that need more than a plain copy: control characters, '"', '\\', non-ASCII, and DEL when
// it is escaped. A table per JsonControls keeps the per-byte test one load.
constexpr std::array<bool, 256> NeedsCare(bool del) {
  std::array<bool, 256> t{};
  for (int c = 0; c < 256; ++c)
    t[c] = c < 0x20 || c == '"' || c == '\\' || c >= 0x80 || (del && c == 0x7F);
  return t;
}
constexpr std::array<bool, 256> kNeedsCare = NeedsCare(false);
constexpr std::array<bool, 256> kNeedsCareWithDel = NeedsCare(true);

}  // namespace

void AppendJsonString(std::string_view s, std::string* out, JsonControls controls) {
  const std::array<bool, 256>& needs_care =
      controls == JsonControls::kAlsoDel ? kNeedsCareWithDel : kNeedsCare;
  out->push_back('"');
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    // Runs of plain characters are copied at once: most text is mostly plain.
    size_t run = i;
    while (run < n && !needs_care[static_cast<unsigned char>(s[run])]) ++run;
    out->append(s.data() + i, run - i);
    i = run;
    if (i == n) break;
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const size_t len = Utf8SequenceLength(s, i);
      if (len == 0) {
        out->append("\xEF\xBF\xBD");  // U+FFFD for one invalid byte
        i += 1;
      } else {
        out->append(s.data() + i, len);
        i += len;
      }
      continue;
    }
    out->push_back('\\');
    switch (c) {
      case '"':
        out->push_back('"');
        break;
      case '\\':
        out->push_back('\\');
        break;
      case '\b':
        out->push_back('b');
        break;
      case '\f':
        out->push_back('f');
        break;
      case '\n':
        out->push_back('n');
        break;
      case '\r':
        out->push_back('r');
        break;
      case '\t':
        out->push_back('t');
        break;
      default:
        out->append("u00");
        out->push_back(kHex[c >> 4]);
        out->push_back(kHex[c & 15]);
    }
    ++i;
  }
  out->push_back('"');
}

std::string JsonQuoted(std::string_view s, JsonControls controls) {
  std::string out;
  out.reserve(s.size() + 2);
  AppendJsonString(s, &out, controls);
  return out;
}

}  // namespace flow::rt
