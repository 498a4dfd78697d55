#pragma once
// Time zones: IANA names such as "Europe/Berlin", "America/New_York" or "UTC", from the system's
// time zone database (/usr/share/zoneinfo, Debian's tzdata), through the date library
// (howardhinnant-date's tz.h). Daylight saving time is applied as the database says for each
// instant. Used by the time functions' `zone` argument (docs/functions.md) and by windows aligned
// to a zone (`window tumbling 1d zone "Europe/Berlin"`, operators/window_spec.h).
// Threading: the functions are thread-safe (a lock for new names; a per-thread cache of the last
// zone and offset); a WallClock belongs to one thread.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "flow/runtime/common/time.h"

namespace date {
class time_zone;
}  // namespace date

namespace flow::rt {

// The zone called `name`, or null when the database has no such zone (or cannot be read).
const date::time_zone* FindZone(std::string_view name);
bool IsTimeZone(std::string_view name);
// Every zone name of the database (for "did you mean"); empty when it cannot be read.
std::vector<std::string> ZoneNames();
// The wall-clock time in `zone` at the instant `utc_ms`, as milliseconds of a UTC-like calendar
// (so the UTC calendar functions read its fields). A null zone is UTC.
int64_t ToLocal(int64_t utc_ms, const date::time_zone* zone);
// The instant at which `zone`'s wall clock shows `local_ms`: for a time shown twice (the hour
// when clocks go back) the earlier; for a time never shown (the hour they go forward) the
// instant of the change. A null zone is UTC.
int64_t FromLocal(int64_t local_ms, const date::time_zone* zone);

// A zone's wall clock as a time line that never goes back, for aligning windows to it.
// Read(t) is the clock's reading at instant t (ToLocal), except while the clock repeats an hour
// after going back: then it stays at the last millisecond before the repeated hour ends, so
// every instant of the repeat counts as the end of the repeated stretch. Instant(w) is FromLocal.
// They are each other's inverse in the sense windows need:
//   Read(t) >= w  <=>  t >= Instant(w)   (for every instant t and reading w),
// so the readings [a, b) cover exactly the instants [Instant(a), Instant(b)): windows aligned to
// the wall clock cut the time line into consecutive, non-overlapping spans (a local day around a
// clock change is 23 or 25 hours long; spans inside a skipped hour are empty).
// Times beyond the year 9999 use the offset in force then. Not thread-safe: a cache of the
// current offset period makes most Read calls two comparisons.
class WallClock {
 public:
  explicit WallClock(const date::time_zone* zone = nullptr) : zone_(zone) {}

  const date::time_zone* zone() const { return zone_; }
  TimestampMs Read(TimestampMs instant) {
    if (zone_ == nullptr) return instant;
    if (instant < begin_ || instant >= end_) Load(instant);
    return instant < repeat_end_ ? repeat_reading_ : SaturatingAdd(instant, offset_);
  }
  TimestampMs Instant(TimestampMs reading) const {
    return zone_ == nullptr ? reading : FromLocal(reading, zone_);
  }

 private:
  void Load(TimestampMs instant);

  const date::time_zone* zone_;
  // The offset period containing the last instant read: [begin_, end_) with offset_; its first
  // instants up to repeat_end_ repeat readings of the period before and read repeat_reading_.
  TimestampMs begin_ = 1, end_ = 0;
  TimestampMs offset_ = 0;
  TimestampMs repeat_end_ = kMinWatermark, repeat_reading_ = 0;
};

}  // namespace flow::rt
