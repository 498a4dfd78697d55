#include "flow/runtime/formats/value_text.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "flow/runtime/common/civil.h"

namespace flow::rt {
namespace {

constexpr char kBase64Alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

struct DurationUnit {
  std::string_view name;
  int64_t ms;
};
// Largest first, for formatting; "ms" is matched before "m" when parsing.
constexpr DurationUnit kUnits[] = {
    {"d", 86400000}, {"h", 3600000}, {"m", 60000}, {"s", 1000}, {"ms", 1}};

}  // namespace

void AppendBase64(std::string_view bytes, std::string* out) {
  size_t i = 0;
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t v = (uint32_t{p[i]} << 16) | (uint32_t{p[i + 1]} << 8) | p[i + 2];
    out->push_back(kBase64Alphabet[v >> 18]);
    out->push_back(kBase64Alphabet[(v >> 12) & 63]);
    out->push_back(kBase64Alphabet[(v >> 6) & 63]);
    out->push_back(kBase64Alphabet[v & 63]);
  }
  size_t rest = bytes.size() - i;
  if (rest == 1) {
    uint32_t v = uint32_t{p[i]} << 16;
    out->push_back(kBase64Alphabet[v >> 18]);
    out->push_back(kBase64Alphabet[(v >> 12) & 63]);
    out->append("==");
  } else if (rest == 2) {
    uint32_t v = (uint32_t{p[i]} << 16) | (uint32_t{p[i + 1]} << 8);
    out->push_back(kBase64Alphabet[v >> 18]);
    out->push_back(kBase64Alphabet[(v >> 12) & 63]);
    out->push_back(kBase64Alphabet[(v >> 6) & 63]);
    out->push_back('=');
  }
}

bool DecodeBase64(std::string_view text, std::string* out) {
  out->clear();
  size_t len = text.size();
  if (len % 4 == 0 && len >= 4) {
    if (text[len - 1] == '=') --len;
    if (text[len - 1] == '=') --len;
  }
  if (len % 4 == 1) return false;
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < len; ++i) {
    int v = Base64Value(text[i]);
    if (v < 0) return false;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out->push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  // Leftover bits must be zero, so every byte string has exactly one encoding.
  return (acc & ((1u << bits) - 1)) == 0;
}

void AppendDuration(DurationMs d, std::string* out) {
  if (d == 0) {
    out->append("0ms");
    return;
  }
  // Work on the magnitude as unsigned so INT64_MIN does not overflow.
  uint64_t rest = d < 0 ? 0 - static_cast<uint64_t>(d) : static_cast<uint64_t>(d);
  if (d < 0) out->push_back('-');
  char buf[24];
  for (const auto& u : kUnits) {
    uint64_t n = rest / static_cast<uint64_t>(u.ms);
    if (n == 0) continue;
    rest -= n * static_cast<uint64_t>(u.ms);
    auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, n);
    out->append(buf, ptr);
    out->append(u.name);
  }
}

namespace {

// "00".."99": two digits per table load instead of a division per digit.
constexpr std::array<char, 200> MakeTwoDigits() {
  std::array<char, 200> t{};
  for (int i = 0; i < 100; ++i) {
    t[2 * i] = static_cast<char>('0' + i / 10);
    t[2 * i + 1] = static_cast<char>('0' + i % 10);
  }
  return t;
}
constexpr std::array<char, 200> kTwoDigits = MakeTwoDigits();

void PutTwo(char* at, int64_t v) {
  std::memcpy(at, &kTwoDigits[2 * v], 2);
}

}  // namespace

void AppendTimestamp(TimestampMs ts, std::string* out) {
  // The hot path of every encoded timestamp: digits by hand instead of snprintf, and the date
  // part of the previous call's day reused (a stream's timestamps mostly share their day; the
  // calendar conversion was most of this function). Years outside 0..9999 are rare and take
  // FormatTimestamp's general path.
  struct DayText {
    int64_t day = INT64_MIN;
    char text[11];  // "YYYY-MM-DDT"
  };
  thread_local DayText last;
  const int64_t days = FloorDiv(ts, 86400000);
  const int64_t ms_of_day = ts - days * 86400000;
  if (days != last.day) {
    const CivilDate c = CivilFromDays(days);
    if (c.year < 0 || c.year > 9999) {
      out->append(FormatTimestamp(ts));
      return;
    }
    PutTwo(last.text, c.year / 100);
    PutTwo(last.text + 2, c.year % 100);
    last.text[4] = '-';
    PutTwo(last.text + 5, c.month);
    last.text[7] = '-';
    PutTwo(last.text + 8, c.day);
    last.text[10] = 'T';
    last.day = days;
  }
  char buf[24];
  std::memcpy(buf, last.text, sizeof last.text);
  const int64_t seconds = ms_of_day / 1000;
  const int64_t millis = ms_of_day - seconds * 1000;
  PutTwo(buf + 11, seconds / 3600);
  buf[13] = ':';
  PutTwo(buf + 14, seconds / 60 % 60);
  buf[16] = ':';
  PutTwo(buf + 17, seconds % 60);
  buf[19] = '.';
  buf[20] = static_cast<char>('0' + millis / 100);
  PutTwo(buf + 21, millis % 100);
  buf[23] = 'Z';
  out->append(buf, sizeof buf);
}

bool ParseInt64(std::string_view text, int64_t* out) {
  if (!text.empty() && text[0] == '+') text.remove_prefix(1);
  if (text.empty()) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

bool ParseDouble(std::string_view text, double* out) {
  if (!text.empty() && text[0] == '+') text.remove_prefix(1);
  if (text.empty()) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

void AppendDouble(double v, std::string* out) {
  char buf[32];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out->append(buf, ptr);
}

}  // namespace flow::rt
