#include "flow/runtime/common/json_escape.h"

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>

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

constexpr uint64_t kOnes = 0x0101010101010101ULL;
constexpr uint64_t kHighBits = 0x8080808080808080ULL;

// The high bit of each byte of `x` that is zero; exact for the lowest such byte (a borrow can
// only mark bytes above a true zero byte), which is the only one PlainRun uses.
constexpr uint64_t ZeroBytes(uint64_t x) {
  return (x - kOnes) & ~x & kHighBits;
}

// Length of the prefix of [p, p+n) that needs no care, 8 bytes at a time (SWAR): records' text
// fields are mostly plain, and a byte-at-a-time table test was a sixth of q1's time.
size_t PlainRun(const char* p, size_t n, bool del, const std::array<bool, 256>& needs_care) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t x;
    std::memcpy(&x, p + i, 8);
    uint64_t care = (x & kHighBits)                          // non-ASCII
                    | ((x - 0x20 * kOnes) & ~x & kHighBits)  // below 0x20
                    | ZeroBytes(x ^ ('"' * kOnes)) | ZeroBytes(x ^ ('\\' * kOnes));
    if (del) care |= ZeroBytes(x ^ (0x7F * kOnes));
    if (care != 0) {
      // Byte order: the lowest address is the lowest byte on little-endian machines.
      if constexpr (std::endian::native == std::endian::little) {
        return i + static_cast<size_t>(std::countr_zero(care)) / 8;
      } else {
        break;
      }
    }
  }
  while (i < n && !needs_care[static_cast<unsigned char>(p[i])]) ++i;
  return i;
}

}  // namespace

void AppendJsonString(std::string_view s, std::string* out, JsonControls controls) {
  const std::array<bool, 256>& needs_care =
      controls == JsonControls::kAlsoDel ? kNeedsCareWithDel : kNeedsCare;
  out->push_back('"');
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    // Runs of plain characters are copied at once: most text is mostly plain.
    const size_t run =
        i + PlainRun(s.data() + i, n - i, controls == JsonControls::kAlsoDel, needs_care);
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
