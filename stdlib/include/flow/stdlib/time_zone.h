#pragma once
// Time zones for the time functions' `zone` argument (docs/functions.md): IANA names such as
// "Europe/Berlin", "America/New_York" or "UTC", from the system's time zone database
// (/usr/share/zoneinfo, Debian's tzdata), through the date library (howardhinnant-date's tz.h).
// Daylight saving time is applied as the database says for each instant.
// Threading: thread-safe (a lock for new names; a per-thread cache of the last zone and offset).

#include <cstdint>
#include <string_view>

namespace date {
class time_zone;
}  // namespace date

namespace flow::fn::impl {

// The zone called `name`, or null when the database has no such zone (or cannot be read).
const date::time_zone* FindZone(std::string_view name);
bool IsTimeZone(std::string_view name);
// The wall-clock time in `zone` at the instant `utc_ms`, as milliseconds of a UTC-like calendar
// (so the UTC calendar functions read its fields). A null zone is UTC.
int64_t ToLocal(int64_t utc_ms, const date::time_zone* zone);
// The instant at which `zone`'s wall clock shows `local_ms`: for a time shown twice (the hour
// when clocks go back) the earlier; for a time never shown (the hour they go forward) the
// instant of the change. A null zone is UTC.
int64_t FromLocal(int64_t local_ms, const date::time_zone* zone);

}  // namespace flow::fn::impl
