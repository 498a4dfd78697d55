#pragma once
// Text forms of Flow values shared by the JSON and CSV formats: base64 for bytes, duration
// strings, timestamps. Pure functions; thread-safe.

#include <cstdint>
#include <string>
#include <string_view>

#include "flow/runtime/common/time.h"

namespace flow::rt {

// Standard base64 (RFC 4648 section 4, alphabet A-Z a-z 0-9 + /) with '=' padding.
void AppendBase64(std::string_view bytes, std::string* out);
// Accepts standard base64 with or without trailing '=' padding; no whitespace. False when
// `text` is not valid base64 (then `*out` is unspecified).
bool DecodeBase64(std::string_view text, std::string* out);

// Durations as text are parsed by ParseDuration (common/time.h).
// Appends the canonical form: the largest units first ("1h30m", "1500ms" -> "1s500ms", "0ms").
void AppendDuration(DurationMs d, std::string* out);

// Appends FormatTimestamp(ts) ("2026-11-29T14:41:15.123Z") without a temporary string.
void AppendTimestamp(TimestampMs ts, std::string* out);

// Parses a whole decimal int64 ("-12", "+7"); false on empty, junk or overflow.
bool ParseInt64(std::string_view text, int64_t* out);
// Parses a whole decimal double (also "inf", "nan"); false on empty or junk.
bool ParseDouble(std::string_view text, double* out);
// Appends the shortest text that parses back to exactly `v` ("0.1", "1e+300", "nan", "inf").
void AppendDouble(double v, std::string* out);

}  // namespace flow::rt
