#include "parse/literals.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace flow::parse {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Reads exactly `n` digits at text[*pos]; false if fewer.
bool Digits(std::string_view text, size_t* pos, int n, int* value) {
  int v = 0;
  for (int i = 0; i < n; ++i) {
    if (*pos >= text.size() || text[*pos] < '0' || text[*pos] > '9') return false;
    v = v * 10 + (text[(*pos)++] - '0');
  }
  *value = v;
  return true;
}

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's civil algorithm).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

bool IsLeap(int y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

}  // namespace

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

bool UnescapeString(std::string_view quoted, std::string* out, std::string* error,
                    size_t* error_offset) {
  out->clear();
  if (quoted.size() < 2) {
    *error = "malformed string literal";
    *error_offset = 0;
    return false;
  }
  std::string_view body = quoted.substr(1, quoted.size() - 2);
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c != '\\') {
      out->push_back(c);
      continue;
    }
    size_t at = i + 1;  // offset of the backslash within `quoted`
    if (i + 1 >= body.size()) {
      *error = "a string cannot end with a lone `\\`";
      *error_offset = at;
      return false;
    }
    char e = body[++i];
    switch (e) {
      case 'n':
        out->push_back('\n');
        break;
      case 't':
        out->push_back('\t');
        break;
      case 'r':
        out->push_back('\r');
        break;
      case '0':
        out->push_back('\0');
        break;
      case '\\':
        out->push_back('\\');
        break;
      case '"':
        out->push_back('"');
        break;
      case '\'':
        out->push_back('\'');
        break;
      case 'u': {
        if (i + 1 >= body.size() || body[i + 1] != '{') {
          *error = "`\\u` must be followed by `{hex}`, e.g. `\\u{e9}`";
          *error_offset = at;
          return false;
        }
        size_t j = i + 2;
        uint32_t cp = 0;
        int digits = 0;
        while (j < body.size() && HexValue(body[j]) >= 0 && digits < 7) {
          cp = cp * 16 + HexValue(body[j]);
          ++j;
          ++digits;
        }
        if (j >= body.size() || body[j] != '}' || digits == 0 || digits > 6 || cp > 0x10FFFF ||
            (cp >= 0xD800 && cp <= 0xDFFF)) {
          *error =
              "invalid unicode escape; expected `\\u{...}` with 1 to 6 hex digits naming a code "
              "point";
          *error_offset = at;
          return false;
        }
        AppendUtf8(cp, out);
        i = j;
        break;
      }
      default: {
        *error = "unknown escape sequence `\\" + std::string(1, e) +
                 "`; valid are \\n \\t \\r \\0 \\\\ \\\" \\' \\u{...}";
        if (static_cast<unsigned char>(e) >= 0x80)
          *error = "unknown escape sequence; valid are \\n \\t \\r \\0 \\\\ \\\" \\' \\u{...}";
        *error_offset = at;
        return false;
      }
    }
  }
  return true;
}

bool ParseInt(std::string_view text, int64_t* out, std::string* error) {
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  if (ec == std::errc::result_out_of_range) {
    *error = "integer literal is too large for int (64-bit, at most 9223372036854775807)";
    return false;
  }
  if (ec != std::errc() || p != text.data() + text.size()) {
    *error = "malformed integer literal";
    return false;
  }
  return true;
}

bool ParseFloat(std::string_view text, double* out, std::string* error) {
  std::string s(text);
  errno = 0;
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) {
    *error = "malformed float literal";
    return false;
  }
  if (!std::isfinite(*out)) {
    *error = "float literal is too large";
    return false;
  }
  return true;
}

bool ParseDuration(std::string_view text, int64_t* millis, std::string* error) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  std::string_view unit = text.substr(digits);
  int64_t scale = unit == "ms"  ? 1
                  : unit == "s" ? 1000
                  : unit == "m" ? 60000
                  : unit == "h" ? 3600000
                  : unit == "d" ? 86400000
                                : 0;
  int64_t n = 0;
  if (scale == 0 || !ParseInt(text.substr(0, digits), &n, error)) {
    *error = "malformed duration literal";
    return false;
  }
  if (n > std::numeric_limits<int64_t>::max() / scale) {
    *error = "duration literal is too large";
    return false;
  }
  *millis = n * scale;
  return true;
}

bool ParseTimestamp(std::string_view t, int64_t* millis, std::string* error) {
  *error = "invalid timestamp `" + std::string(t.substr(0, 40)) +
           "`; expected ISO-8601 such as `2024-01-01T00:00:00Z`, `2024-01-01T12:30:00.250+02:00` "
           "or `2024-01-01`";
  size_t pos = 0;
  int year, month, day, hour = 0, minute = 0, second = 0, ms = 0;
  if (!Digits(t, &pos, 4, &year) || pos >= t.size() || t[pos++] != '-' ||
      !Digits(t, &pos, 2, &month) || pos >= t.size() || t[pos++] != '-' ||
      !Digits(t, &pos, 2, &day)) {
    return false;
  }
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month < 1 || month > 12) return false;
  int max_day = kDays[month - 1] + (month == 2 && IsLeap(year) ? 1 : 0);
  if (day < 1 || day > max_day) return false;
  int offset_minutes = 0;
  if (pos < t.size()) {
    if (t[pos] != 'T' && t[pos] != ' ') return false;
    ++pos;
    if (!Digits(t, &pos, 2, &hour) || pos >= t.size() || t[pos++] != ':' ||
        !Digits(t, &pos, 2, &minute) || pos >= t.size() || t[pos++] != ':' ||
        !Digits(t, &pos, 2, &second)) {
      return false;
    }
    if (hour > 23 || minute > 59 || second > 59) return false;
    if (pos < t.size() && t[pos] == '.') {
      ++pos;
      int n = 0;
      int scale = 100;
      while (pos < t.size() && t[pos] >= '0' && t[pos] <= '9') {
        if (n < 3) ms += (t[pos] - '0') * scale;
        scale /= 10;
        ++n;
        ++pos;
      }
      if (n == 0) return false;
    }
    if (pos >= t.size()) return false;  // a time needs a zone: Z or +hh:mm
    if (t[pos] == 'Z') {
      ++pos;
    } else if (t[pos] == '+' || t[pos] == '-') {
      int sign = t[pos++] == '+' ? 1 : -1;
      int oh, om;
      if (!Digits(t, &pos, 2, &oh) || pos >= t.size() || t[pos++] != ':' ||
          !Digits(t, &pos, 2, &om) || oh > 23 || om > 59) {
        return false;
      }
      offset_minutes = sign * (oh * 60 + om);
    } else {
      return false;
    }
    if (pos != t.size()) return false;
  }
  int64_t days = DaysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  int64_t seconds = days * 86400 + hour * 3600 + minute * 60 + second - offset_minutes * 60;
  *millis = seconds * 1000 + ms;
  error->clear();
  return true;
}

}  // namespace flow::parse
