// Time zones of the IANA database (the system's /usr/share/zoneinfo, read by the date library's
// tz.h): the time functions' `zone` argument and windows aligned to a zone.

#include "flow/runtime/common/time_zone.h"

#include <date/tz.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <string>

namespace flow::rt {
namespace {

using std::chrono::seconds;

// The date library's calendar ends at the year 32767; the zone rules are read for instants in
// years 1..9999 and the offset in force at either end holds beyond it.
constexpr int64_t kFirstZoneSecond = -62135596800;  // 0001-01-01T00:00:00Z
constexpr int64_t kLastZoneSecond = 253402300799;   // 9999-12-31T23:59:59Z

int64_t ZoneSecond(int64_t ms) {
  return std::clamp(FloorDiv(ms, 1000), kFirstZoneSecond, kLastZoneSecond);
}
bool InZoneRange(int64_t s) {
  return s >= kFirstZoneSecond && s <= kLastZoneSecond;
}
int64_t Ms(seconds s) {
  return s.count() * 1000;
}

// The last zone a thread asked for, and the period of its last offset: consecutive records are
// mostly in one zone and one period, so most calls need no lookup.
struct ZoneCache {
  std::string name;
  const date::time_zone* zone = nullptr;
  int64_t begin_s = 1, end_s = 0;  // [begin, end) of the cached offset; empty at first
  int64_t offset_ms = 0;
};
thread_local ZoneCache cache;

}  // namespace

const date::time_zone* FindZone(std::string_view name) {
  if (name == cache.name && cache.zone != nullptr) return cache.zone;
  // locate_zone throws for unknown names (and when the database cannot be read); a map of
  // answers keeps an unknown name from throwing on every record.
  static std::mutex mu;
  static std::map<std::string, const date::time_zone*, std::less<>> known;
  const date::time_zone* zone = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = known.find(name);
    if (it == known.end()) {
      try {
        zone = date::locate_zone(name);
      } catch (const std::exception&) {
        zone = nullptr;
      }
      known.emplace(std::string(name), zone);
    } else {
      zone = it->second;
    }
  }
  if (zone != nullptr && name != cache.name) {
    cache = ZoneCache{};
    cache.name = std::string(name);
    cache.zone = zone;
  }
  return zone;
}

bool IsTimeZone(std::string_view name) {
  return FindZone(name) != nullptr;
}

std::vector<std::string> ZoneNames() {
  std::vector<std::string> names;
  try {
    const date::tzdb& db = date::get_tzdb();
    for (const date::time_zone& z : db.zones) names.emplace_back(z.name());
  } catch (const std::exception&) {
    names.clear();
  }
  return names;
}

int64_t ToLocal(int64_t utc_ms, const date::time_zone* zone) {
  if (zone == nullptr) return utc_ms;
  int64_t s = FloorDiv(utc_ms, 1000);
  if (zone != cache.zone || s < cache.begin_s || s >= cache.end_s) {
    date::sys_info info = zone->get_info(date::sys_seconds{seconds{ZoneSecond(utc_ms)}});
    if (zone != cache.zone || !InZoneRange(s)) {
      return SaturatingAdd(utc_ms, Ms(info.offset));
    }
    cache.begin_s = info.begin.time_since_epoch().count();
    cache.end_s = info.end.time_since_epoch().count();
    cache.offset_ms = Ms(info.offset);
  }
  return SaturatingAdd(utc_ms, cache.offset_ms);
}

int64_t FromLocal(int64_t local_ms, const date::time_zone* zone) {
  if (zone == nullptr) return local_ms;
  date::local_info info = zone->get_info(date::local_seconds{seconds{ZoneSecond(local_ms)}});
  switch (info.result) {
    case date::local_info::unique:
    case date::local_info::ambiguous:  // the earlier of the two instants
      return SaturatingAdd(local_ms, -Ms(info.first.offset));
    case date::local_info::nonexistent:  // skipped by a transition: the transition's instant
      return Ms(info.second.begin.time_since_epoch());
  }
  return SaturatingAdd(local_ms, -Ms(info.first.offset));
}

void WallClock::Load(TimestampMs instant) {
  int64_t s = FloorDiv(instant, 1000);
  date::sys_info info = zone_->get_info(date::sys_seconds{seconds{ZoneSecond(instant)}});
  offset_ = Ms(info.offset);
  repeat_end_ = kMinWatermark;
  if (!InZoneRange(s)) {  // beyond the rules: this offset, not cached
    begin_ = instant;
    end_ = SaturatingAdd(instant, 1);
    return;
  }
  int64_t begin_s = info.begin.time_since_epoch().count();
  int64_t end_s = info.end.time_since_epoch().count();
  begin_ = begin_s < kFirstZoneSecond ? kMinWatermark : begin_s * 1000;
  end_ = end_s > kLastZoneSecond ? kMaxWatermark : end_s * 1000;
  if (begin_s <= kFirstZoneSecond) return;
  // The clock went back at begin_ by (previous offset - offset): its first instants show
  // readings the previous period already showed, and hold at the last of those.
  date::sys_info before = zone_->get_info(info.begin - seconds{1});
  int64_t back = Ms(before.offset) - offset_;
  if (back > 0) {
    repeat_end_ = begin_ + back;
    repeat_reading_ = begin_ + Ms(before.offset) - 1;
  }
}

}  // namespace flow::rt
