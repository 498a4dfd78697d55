#include "parse/literals.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "flow/runtime/common/time.h"

namespace flow::parse {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
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
  // The lexer admits only <digits><unit>, so what the runtime's parser refuses is out of range.
  if (!rt::ParseDuration(text, millis)) {
    *error = "duration literal is too large";
    return false;
  }
  return true;
}

bool ParseTimestamp(std::string_view t, int64_t* millis, std::string* error) {
  if (!rt::ParseTimestamp(t, millis, rt::TimestampText::kDateTimeOrDate)) {
    *error = "invalid timestamp `" + std::string(t.substr(0, 40)) +
             "`; expected ISO-8601 such as `2024-01-01T00:00:00Z`, `2024-01-01T12:30:00.250+02:00` "
             "or `2024-01-01`";
    return false;
  }
  error->clear();
  return true;
}

}  // namespace flow::parse
