// Time functions of flow::fn: calendar arithmetic in UTC on int64 millisecond timestamps.

#include <chrono>
#include <limits>

#include "flow/runtime/common/civil.h"
#include "flow/runtime/common/time.h"
#include "flow/runtime/common/time_zone.h"
#include "flow/stdlib/scalar.h"

namespace flow::fn {
namespace impl {

using rt::CivilDate;
using rt::CivilFromDays;
using rt::DaysFromCivil;
using rt::FindZone;
using rt::FromLocal;
using rt::ToLocal;

namespace {

constexpr int64_t kMsPerDay = 86400000;

// 0 = Monday ... 6 = Sunday; 1970-01-01 was a Thursday.
int64_t WeekdayIndex(int64_t days) {
  return days - rt::FloorDiv(days + 3, 7) * 7 + 3;
}

// Milliseconds into the UTC day (0..86399999), without overflow even at INT64_MIN.
int64_t MsOfDay(int64_t ts) {
  int64_t r = ts % kMsPerDay;
  return r < 0 ? r + kMsPerDay : r;
}

// `units * scale` in ms; clamped to the int64 range, where truncating the most extreme
// timestamps would otherwise overflow.
int64_t ScaleClamped(int64_t units, int64_t scale) {
  __int128 v = static_cast<__int128>(units) * scale;
  if (v < std::numeric_limits<int64_t>::min()) return std::numeric_limits<int64_t>::min();
  if (v > std::numeric_limits<int64_t>::max()) return std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(v);
}

void AppendPadded(std::string* out, int64_t v, int width) {
  std::string digits = std::to_string(v < 0 ? -v : v);
  if (v < 0) out->push_back('-');
  for (int i = static_cast<int>(digits.size()); i < width; ++i) out->push_back('0');
  out->append(digits);
}

}  // namespace

int64_t DateTruncImpl::operator()(std::string_view unit, int64_t ts) const {
  auto floor_to = [ts](int64_t step) { return ScaleClamped(rt::FloorDiv(ts, step), step); };
  if (unit == "second") return floor_to(1000);
  if (unit == "minute") return floor_to(60000);
  if (unit == "hour") return floor_to(3600000);
  int64_t days = rt::FloorDiv(ts, kMsPerDay);
  if (unit == "day") return ScaleClamped(days, kMsPerDay);
  if (unit == "week") return ScaleClamped(days - WeekdayIndex(days), kMsPerDay);
  CivilDate c = CivilFromDays(days);
  if (unit == "month") return ScaleClamped(DaysFromCivil(c.year, c.month, 1), kMsPerDay);
  if (unit == "year") return ScaleClamped(DaysFromCivil(c.year, 1, 1), kMsPerDay);
  return ts;  // unknown unit: documented to leave the value unchanged
}

int64_t ExtractPart(int64_t ts, TimePart part) {
  int64_t days = rt::FloorDiv(ts, kMsPerDay);
  int64_t ms = MsOfDay(ts);
  switch (part) {
    case TimePart::kHour:
      return ms / 3600000;
    case TimePart::kMinute:
      return ms / 60000 % 60;
    case TimePart::kSecond:
      return ms / 1000 % 60;
    case TimePart::kDayOfWeek:
      return WeekdayIndex(days) + 1;
    default:
      break;
  }
  CivilDate c = CivilFromDays(days);
  if (part == TimePart::kYear) return c.year;
  if (part == TimePart::kMonth) return c.month;
  return c.day;
}

std::string FormatTimestampImpl::operator()(int64_t ts, std::string_view pattern) const {
  int64_t days = rt::FloorDiv(ts, kMsPerDay);
  int64_t ms = MsOfDay(ts);
  CivilDate c = CivilFromDays(days);
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 == pattern.size()) {
      out.push_back(pattern[i]);
      continue;
    }
    char spec = pattern[++i];
    switch (spec) {
      case 'Y':
        AppendPadded(&out, c.year, 4);
        break;
      case 'm':
        AppendPadded(&out, c.month, 2);
        break;
      case 'd':
        AppendPadded(&out, c.day, 2);
        break;
      case 'H':
        AppendPadded(&out, ms / 3600000, 2);
        break;
      case 'M':
        AppendPadded(&out, ms / 60000 % 60, 2);
        break;
      case 'S':
        AppendPadded(&out, ms / 1000 % 60, 2);
        break;
      case 'L':
        AppendPadded(&out, ms % 1000, 3);
        break;
      case '%':
        out.push_back('%');
        break;
      default:  // not a known specifier: copied as written
        out.push_back('%');
        out.push_back(spec);
    }
  }
  return out;
}

std::optional<int64_t> ParseTimestampImpl::operator()(std::string_view s) const {
  rt::TimestampMs ts = 0;
  if (!rt::ParseTimestamp(s, &ts)) return std::nullopt;
  return ts;
}

// Zoned forms: the UTC calendar of the zone's wall clock (ToLocal), and back (FromLocal).
int64_t DateTruncImpl::operator()(std::string_view unit, int64_t ts, std::string_view zone) const {
  const date::time_zone* z = FindZone(zone);
  return FromLocal((*this)(unit, ToLocal(ts, z)), z);
}

int64_t ExtractZonedPart(int64_t ts, TimePart part, std::string_view zone) {
  return ExtractPart(ToLocal(ts, FindZone(zone)), part);
}

std::string FormatTimestampImpl::operator()(int64_t ts, std::string_view pattern,
                                            std::string_view zone) const {
  return (*this)(ToLocal(ts, FindZone(zone)), pattern);
}

std::optional<int64_t> ParseTimestampImpl::operator()(std::string_view s,
                                                      std::string_view zone) const {
  rt::TimestampMs ts = 0;
  if (rt::ParseTimestamp(s, &ts)) return ts;  // an offset or Z of its own
  // Without one the text is the zone's wall clock: read it as if it were UTC, then convert.
  if (!rt::ParseTimestamp(std::string(s) + "Z", &ts)) return std::nullopt;
  return FromLocal(ts, FindZone(zone));
}

std::string FormatTimestampRfc3339(int64_t ms) {
  return rt::FormatTimestamp(ms);
}

}  // namespace impl

int64_t Now() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace flow::fn
