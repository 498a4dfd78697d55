// Time zones of the IANA database (the system's /usr/share/zoneinfo, read by the date library's
// tz.h), for the time functions' `zone` argument.

#include "flow/stdlib/time_zone.h"

#include <date/tz.h>

#include <chrono>
#include <map>
#include <mutex>
#include <string>

#include "flow/runtime/common/time.h"

namespace flow::fn::impl {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

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

int64_t ToLocal(int64_t utc_ms, const date::time_zone* zone) {
  if (zone == nullptr) return utc_ms;
  int64_t s = rt::FloorDiv(utc_ms, 1000);
  if (zone != cache.zone || s < cache.begin_s || s >= cache.end_s) {
    date::sys_info info = zone->get_info(date::sys_seconds{seconds{s}});
    if (zone == cache.zone) {
      cache.begin_s = info.begin.time_since_epoch().count();
      cache.end_s = info.end.time_since_epoch().count();
      cache.offset_ms = info.offset.count() * 1000;
    } else {
      return utc_ms + info.offset.count() * 1000;
    }
  }
  return utc_ms + cache.offset_ms;
}

int64_t FromLocal(int64_t local_ms, const date::time_zone* zone) {
  if (zone == nullptr) return local_ms;
  int64_t s = rt::FloorDiv(local_ms, 1000);
  date::local_info info = zone->get_info(date::local_seconds{seconds{s}});
  switch (info.result) {
    case date::local_info::unique:
    case date::local_info::ambiguous:  // the earlier of the two instants
      return local_ms - info.first.offset.count() * 1000;
    case date::local_info::nonexistent:  // skipped by a transition: the transition's instant
      return info.second.begin.time_since_epoch().count() * 1000;
  }
  return local_ms - info.first.offset.count() * 1000;
}

}  // namespace flow::fn::impl
