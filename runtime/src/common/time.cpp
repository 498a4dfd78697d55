#include "flow/runtime/common/time.h"

#include <charconv>
#include <cstdio>
#include <string_view>

#include "flow/runtime/common/civil.h"

namespace flow::rt {
namespace {

bool Digits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

}  // namespace

bool ParseDuration(std::string_view text, DurationMs* out) {
  bool negative = false;
  size_t pos = 0;
  if (!text.empty() && text[0] == '-') {
    negative = true;
    pos = 1;
  }
  if (pos == text.size()) return false;
  int64_t total = 0;
  while (pos < text.size()) {
    size_t start = pos;
    int64_t n = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      if (__builtin_mul_overflow(n, 10, &n) || __builtin_add_overflow(n, text[pos] - '0', &n)) {
        return false;
      }
      ++pos;
    }
    if (pos == start) return false;
    int64_t unit = 0;
    std::string_view rest = text.substr(pos);
    if (rest.starts_with("ms")) {
      unit = 1;
      pos += 2;
    } else if (!rest.empty()) {
      switch (rest[0]) {
        case 's':
          unit = 1000;
          break;
        case 'm':
          unit = 60000;
          break;
        case 'h':
          unit = 3600000;
          break;
        case 'd':
          unit = 86400000;
          break;
        default:
          return false;
      }
      pos += 1;
    }
    if (unit == 0) return false;  // every number needs a unit ("10", "1h30")
    int64_t part;
    if (__builtin_mul_overflow(n, unit, &part) || __builtin_add_overflow(total, part, &total)) {
      return false;
    }
  }
  *out = negative ? -total : total;
  return true;
}

std::string FormatTimestamp(TimestampMs ts) {
  // ts % day rather than ts - days * day: the product overflows for timestamps near INT64_MIN.
  int64_t days = FloorDiv(ts, 86400000);
  int64_t ms_of_day = ts % 86400000;
  if (ms_of_day < 0) ms_of_day += 86400000;
  const CivilDate c = CivilFromDays(days);
  char buf[64];
  std::snprintf(
      buf, sizeof buf, "%04lld-%02u-%02uT%02lld:%02lld:%02lld.%03lldZ",
      static_cast<long long>(c.year), c.month, c.day, static_cast<long long>(ms_of_day / 3600000),
      static_cast<long long>(ms_of_day / 60000 % 60), static_cast<long long>(ms_of_day / 1000 % 60),
      static_cast<long long>(ms_of_day % 1000));
  return buf;
}

bool ParseDurationOrMillis(std::string_view text, DurationMs* out) {
  DurationMs d = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
  const bool plain = ec == std::errc() && end == text.data() + text.size() && !text.empty();
  if ((!plain && !ParseDuration(text, &d)) || d < 0) return false;
  *out = d;
  return true;
}

bool ParseTimestamp(std::string_view s, TimestampMs* out, TimestampText accepts) {
  int year, mon, day, hh = 0, mm = 0, ss = 0;
  if (!Digits(s, 0, 4, &year) || s.size() < 10 || s[4] != '-' || !Digits(s, 5, 2, &mon) ||
      s[7] != '-' || !Digits(s, 8, 2, &day)) {
    return false;
  }
  if (mon < 1 || mon > 12 || day < 1 ||
      static_cast<unsigned>(day) > DaysInMonth(year, static_cast<unsigned>(mon))) {
    return false;
  }
  const int64_t days = DaysFromCivil(year, static_cast<unsigned>(mon), static_cast<unsigned>(day));
  if (s.size() == 10 && accepts == TimestampText::kDateTimeOrDate) {
    *out = days * 86400000;
    return true;
  }
  if (s.size() < 19 || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || !Digits(s, 11, 2, &hh) ||
      s[13] != ':' || !Digits(s, 14, 2, &mm) || s[16] != ':' || !Digits(s, 17, 2, &ss)) {
    return false;
  }
  if (hh > 23 || mm > 59 || ss > 60) return false;
  size_t pos = 19;
  int64_t millis = 0;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    int scale = 100;
    size_t start = pos;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      millis += (s[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
    if (pos == start) return false;
  }
  int64_t offset_min = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh, om;
    if (!Digits(s, pos + 1, 2, &oh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
        !Digits(s, pos + 4, 2, &om) || oh > 23 || om > 59) {
      return false;
    }
    offset_min = (oh * 60 + om) * (s[pos] == '+' ? 1 : -1);
    pos += 6;
  } else {
    return false;
  }
  if (pos != s.size()) return false;
  *out = ((days * 24 + hh) * 60 + mm) * 60000 + static_cast<int64_t>(ss) * 1000 + millis -
         offset_min * 60000;
  return true;
}

}  // namespace flow::rt
