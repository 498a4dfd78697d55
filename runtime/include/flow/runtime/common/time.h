#pragma once
// Event time and durations in the runtime: int64 milliseconds since the Unix epoch, UTC.

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace flow::rt {

using TimestampMs = int64_t;
using DurationMs = int64_t;

// A watermark of kMinWatermark means "nothing known yet"; kMaxWatermark means "end of input":
// every window fires and every timer is due.
inline constexpr TimestampMs kMinWatermark = std::numeric_limits<int64_t>::min();
inline constexpr TimestampMs kMaxWatermark = std::numeric_limits<int64_t>::max();

// Milliseconds of the monotonic clock (durations, deadlines) and of the wall clock (event time,
// ages shown to people).
inline int64_t SteadyNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
inline TimestampMs WallNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Floor division that rounds toward negative infinity (window starts before 1970 stay aligned).
inline int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// t + d, held at kMinWatermark/kMaxWatermark instead of overflowing.
inline TimestampMs SaturatingAdd(TimestampMs t, DurationMs d) {
  if (d > 0 && t > kMaxWatermark - d) return kMaxWatermark;
  if (d < 0 && t < kMinWatermark - d) return kMinWatermark;
  return t + d;
}

// Start of the epoch-aligned window of length `size` that contains `ts`.
inline TimestampMs AlignedStart(TimestampMs ts, DurationMs size) {
  return FloorDiv(ts, size) * size;
}

// Durations as text: one or more <integer><unit> groups with unit ms, s, m, h or d ("250ms",
// "10s", "1h30m"), an optional leading '-'. False on anything else (a bare number has no unit)
// or on overflow. The one duration parser of the runtime and the compiler (whose literals are a
// single group).
bool ParseDuration(std::string_view text, DurationMs* out);

// A duration setting (job parameters, checkpoint flags, generator arguments): ParseDuration's
// text or a plain integer of milliseconds ("1500"); false when negative.
bool ParseDurationOrMillis(std::string_view text, DurationMs* out);

// RFC 3339 UTC with milliseconds: "2026-11-29T14:41:15.123Z".
std::string FormatTimestamp(TimestampMs ts);

// What ParseTimestamp accepts.
enum class TimestampText {
  kDateTime,        // an RFC 3339 date-time: data, job parameters, function arguments
  kDateTimeOrDate,  // also a bare date ("2024-01-01", midnight UTC): the compiler's literals
};
// Accepts RFC 3339 ("2026-11-29T14:41:15Z", 't' or ' ' for 'T', fractional seconds of which
// milliseconds are kept, 'Z', 'z' or "+02:00" offsets, second 60 for a leap second) and, with
// kDateTimeOrDate, a bare date. The date must exist (no February 30). False if not.
bool ParseTimestamp(std::string_view text, TimestampMs* out,
                    TimestampText accepts = TimestampText::kDateTime);

}  // namespace flow::rt
