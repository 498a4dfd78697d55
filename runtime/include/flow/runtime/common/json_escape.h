#pragma once
// Writing text as a JSON string: the one escaper for the runtime's JSON encoder and the compiler's
// JSON output (diagnostics, the language server).
//
// Output: a quoted string. '"' and '\' are escaped; \b \f \n \r \t by name; every other byte below
// 0x20 as \u00XX (lowercase hex). Valid UTF-8 passes through unchanged; each byte that does not
// start a valid sequence (Utf8Check::kStrict) becomes U+FFFD, so the output is always valid JSON
// and valid UTF-8. No errors.

#include <string>
#include <string_view>

namespace flow::rt {

// Which control characters are escaped.
enum class JsonControls {
  // U+0000-U+001F, what RFC 8259 requires: records' JSON matches other encoders byte for byte.
  kRequired,
  // DEL (0x7F) too, as \u007f: for text shown in terminals and editors, where it is invisible.
  kAlsoDel,
};

// Appends `s` as a quoted JSON string to `*out`.
void AppendJsonString(std::string_view s, std::string* out,
                      JsonControls controls = JsonControls::kRequired);

// `s` as a quoted JSON string.
std::string JsonQuoted(std::string_view s, JsonControls controls = JsonControls::kRequired);

}  // namespace flow::rt
