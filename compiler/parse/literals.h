#pragma once
// Decoding literal spellings. Each returns false and sets *error (and *error_offset, a byte offset
// into the spelling) on bad input; no exceptions.

#include <cstdint>
#include <string>
#include <string_view>

namespace flow::parse {

// Appends the UTF-8 encoding of code point `cp` (callers pass valid scalar values, <= 0x10FFFF).
void AppendUtf8(uint32_t cp, std::string* out);

// "abc\n" (with quotes) -> abc<newline>. Escapes: \n \t \r \0 \\ \" \' \u{hex, 1-6 digits}.
bool UnescapeString(std::string_view quoted, std::string* out, std::string* error,
                    size_t* error_offset);
bool ParseInt(std::string_view text, int64_t* out, std::string* error);
bool ParseFloat(std::string_view text, double* out, std::string* error);
// `250ms`, `5s`, `1m`, `2h`, `1d` -> milliseconds (rt::ParseDuration, the runtime's reading).
bool ParseDuration(std::string_view text, int64_t* millis, std::string* error);
// ISO-8601 in UTC or with an offset: `2024-01-01`, `2024-01-01T12:00:00Z`,
// `2024-01-01T12:00:00.250+02:00` -> milliseconds since the Unix epoch (rt::ParseTimestamp with
// bare dates allowed, so a literal reads as the same text does at run time).
bool ParseTimestamp(std::string_view text, int64_t* millis, std::string* error);

}  // namespace flow::parse
