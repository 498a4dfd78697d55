// Windows aligned to a time zone's wall clock (SlidingWindows::InZone). The reference is the C
// library's reading of the same zone database (localtime_r with TZ set): a window whose wall-clock
// bounds are [a, b) holds the instants from the first instant the clock reads a or later to the
// first instant it reads b or later. Boundaries are found by scanning every minute (the zones'
// changes fall on whole minutes), not through the runtime's conversions.

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <map>
#include <numeric>
#include <string>

#include "flow/runtime/common/time_zone.h"
#include "flow/runtime/operators/window_aggregate_operator.h"
#include "flow/runtime/operators/window_join_operator.h"
#include "operator_test_util.h"
#include "window_row_op.h"

namespace flow::rt {
namespace {

using testing::CountSumMax;
using testing::Event;
using testing::Step;
using testing::WindowRow;
using Op = testing::WindowRowOp;

constexpr int64_t kMinute = 60'000, kHour = 60 * kMinute, kDay = 24 * kHour;
// 2026-03-29T01:00:00Z: Europe/Berlin goes from 02:00 CET to 03:00 CEST.
constexpr int64_t kBerlinSpring = 1774746000000;
// 2026-10-25T01:00:00Z: Europe/Berlin goes back from 03:00 CEST to 02:00 CET.
constexpr int64_t kBerlinAutumn = 1792890000000;

// The zone's wall clock per the C library, as milliseconds of a UTC-like calendar.
class CLibraryClock {
 public:
  explicit CLibraryClock(const char* zone) {
    setenv("TZ", zone, 1);
    tzset();
  }
  ~CLibraryClock() {
    unsetenv("TZ");
    tzset();
  }
  int64_t Reading(int64_t instant) const {
    time_t s = static_cast<time_t>(FloorDiv(instant, 1000));
    struct tm tm {};
    localtime_r(&s, &tm);
    return static_cast<int64_t>(timegm(&tm)) * 1000 + (instant - FloorDiv(instant, 1000) * 1000);
  }
};

struct Window {
  int64_t start, end;  // instants
};

// The windows of `size` every `slide` (wall-clock lengths, whole minutes) around [from, to), as
// instants. Scans the minutes of [from - 2 days, to + 2 days): a wall-clock time w is first
// reached at the first minute whose reading is w or later.
std::vector<Window> ReferenceWindows(const CLibraryClock& clock, int64_t size, int64_t slide,
                                     int64_t from, int64_t to) {
  const int64_t grid = std::gcd(size, slide);
  std::map<int64_t, int64_t> first;  // wall-clock grid point -> first instant reaching it
  int64_t lo = FloorDiv(from - 2 * kDay, kMinute) * kMinute, hi = to + 2 * kDay;
  int64_t reached = clock.Reading(lo);
  int64_t next = (FloorDiv(reached, grid) + 1) * grid;
  for (int64_t t = lo + kMinute; t < hi; t += kMinute) {
    reached = std::max(reached, clock.Reading(t));
    for (; next <= reached; next += grid) first[next] = t;
  }
  std::vector<Window> out;
  for (const auto& [wall, start] : first) {
    if (FloorDiv(wall, slide) * slide != wall) continue;
    auto end = first.find(wall + size);
    if (end != first.end() && start < end->second) out.push_back({start, end->second});
  }
  return out;
}

SlidingWindows Zoned(int64_t size, int64_t slide, const char* zone) {
  return SlidingWindows::Sliding(size, slide).value().InZone(FindZone(zone), zone);
}

std::unique_ptr<Op> MakeOp(const SlidingWindows& w, KeyGroupSpan range, DurationMs lateness,
                           VectorCollector<WindowRow>* out) {
  return testing::MakeWindowRowOp(w, range, lateness, out);
}

// Generated out-of-order streams stretched to `scale` per millisecond and moved to `base`, run
// through the operator (with snapshots and rescaling between phases) and compared with the
// windows computed by the C library.
void CheckZone(const char* zone, int64_t base, int64_t scale, int64_t size, int64_t slide,
               int64_t lateness, uint32_t seed) {
  SCOPED_TRACE(std::string(zone) + " size " + std::to_string(size) + " slide " +
               std::to_string(slide) + " lateness " + std::to_string(lateness));
  testing::StreamShape shape;
  shape.start = 0;
  shape.late_percent = 10;
  std::vector<Step> steps = testing::GenerateStream(seed, shape);
  int64_t from = INT64_MAX, to = INT64_MIN;
  for (Step& s : steps) {
    if (s.timestamp == kMaxWatermark) continue;
    s.timestamp = base + s.timestamp * scale;
    if (s.kind == Step::Kind::kRecord) {
      from = std::min(from, s.timestamp);
      to = std::max(to, s.timestamp + 1);
    }
  }
  // The reference: each record in every window holding its instant whose fire time had not
  // passed when it arrived.
  std::vector<Window> windows;
  {
    CLibraryClock clock(zone);
    windows = ReferenceWindows(clock, size, slide, from, to);
  }
  std::map<std::tuple<int64_t, int64_t, int64_t>, CountSumMax> groups;
  uint64_t late = 0;
  TimestampMs watermark = kMinWatermark;
  for (const Step& s : steps) {
    if (s.kind == Step::Kind::kWatermark) {
      watermark = std::max(watermark, s.timestamp);
      continue;
    }
    bool counted = false;
    for (const Window& w : windows) {
      if (w.start <= s.timestamp && s.timestamp < w.end && w.end - 1 + lateness > watermark) {
        groups[{s.event.key, w.start, w.end}].Add(s.event);
        counted = true;
      }
    }
    if (!counted) ++late;
  }
  std::vector<WindowRow> expected;
  for (const auto& [g, acc] : groups) {
    auto [key, start, end] = g;
    expected.emplace_back(key, start, end, acc.count, acc.sum, acc.max, end - 1);
  }
  ASSERT_GT(expected.size(), 20u);

  testing::ExpectEveryPhasePlanGives(steps, Zoned(size, slide, zone), lateness,
                                     testing::Sorted(expected), late);
}

TEST(WindowZoneTest, DaysAndHoursAcrossClockChangesMatchTheCLibrary) {
  // ~2000 records 2-3 minutes apart: about four days around each change.
  const int64_t two_days = 2 * kDay;
  for (uint32_t seed : {1u, 2u}) {
    CheckZone("Europe/Berlin", kBerlinAutumn - two_days, 2 * kMinute, kDay, kDay, 0, seed);
    CheckZone("Europe/Berlin", kBerlinSpring - two_days, 2 * kMinute, kDay, kDay, 30 * kMinute,
              seed);
    CheckZone("Europe/Berlin", kBerlinAutumn - 3 * kHour, kMinute / 4, kHour, kHour, 0, seed);
    CheckZone("Europe/Berlin", kBerlinAutumn - 3 * kHour, kMinute / 4, 30 * kMinute, 30 * kMinute,
              0, seed);
    CheckZone("Europe/Berlin", kBerlinSpring - 3 * kHour, kMinute / 4, 30 * kMinute, 30 * kMinute,
              0, seed);
    CheckZone("America/New_York", kBerlinAutumn + 7 * kDay, 2 * kMinute, kDay, 6 * kHour, 0, seed);
    CheckZone("Europe/Berlin", kBerlinAutumn - 4 * kHour, kMinute / 4, 2 * kHour, 30 * kMinute,
              10 * kMinute, seed);
  }
}

TEST(WindowZoneTest, HalfHourOffsetsAndHalfHourClockChanges) {
  // Lord Howe moves its clocks by 30 minutes (2026-04-05 and 2026-10-04); Kolkata is UTC+05:30.
  const int64_t lord_howe_april = 1775314800000;  // 2026-04-04T15:00:00Z: 02:00 -> 01:30 local
  for (uint32_t seed : {3u, 4u}) {
    CheckZone("Australia/Lord_Howe", lord_howe_april - 2 * kDay, 2 * kMinute, kDay, kDay, 0, seed);
    CheckZone("Australia/Lord_Howe", lord_howe_april - 2 * kHour, kMinute / 4, kHour, kHour, 0,
              seed);
    CheckZone("Asia/Kolkata", kBerlinAutumn, 2 * kMinute, kDay, kDay, 0, seed);
    CheckZone("America/St_Johns", kBerlinAutumn + 7 * kDay, kMinute, 3 * kHour, kHour, 0, seed);
  }
}

TEST(WindowZoneTest, ABerlinDayAroundItsClockChangesHas23And25Hours) {
  VectorCollector<WindowRow> out;
  auto op = MakeOp(Zoned(kDay, kDay, "Europe/Berlin"), KeyGroupSpan::All(), 0, &out);
  // 2026-03-29 in Berlin starts 2026-03-28T23:00Z and ends 2026-03-29T22:00Z.
  const int64_t spring_day = kBerlinSpring - 2 * kHour;
  op->ProcessElement(Event{1, 5, 0}, spring_day - 1);  // 23:59:59.999 the day before
  op->ProcessElement(Event{1, 7, 1}, spring_day);
  op->ProcessElement(Event{1, 9, 2}, spring_day + 23 * kHour - 1);
  op->ProcessElement(Event{1, 11, 3}, spring_day + 23 * kHour);
  // 2026-10-25 starts 2026-10-24T22:00Z and ends 2026-10-25T23:00Z.
  const int64_t autumn_day = kBerlinAutumn - 3 * kHour;
  op->ProcessElement(Event{2, 1, 4}, autumn_day + 25 * kHour - 1);
  op->ProcessElement(Event{2, 2, 5}, autumn_day + kHour * 7 / 2);  // 02:30 shown a second time
  op->OnWatermark(spring_day + 23 * kHour - 2);
  ASSERT_EQ(out.records.size(), 1u);  // only the day before
  EXPECT_EQ(std::get<2>(out.records[0].first), spring_day);
  op->OnWatermark(spring_day + 23 * kHour - 1);
  ASSERT_EQ(out.records.size(), 2u);
  EXPECT_EQ(out.records[1].first, (WindowRow{1, spring_day, spring_day + 23 * kHour, 2, 16, 9, 0}));
  EXPECT_EQ(out.records[1].second, spring_day + 23 * kHour - 1);
  op->OnWatermark(kMaxWatermark);
  ASSERT_EQ(out.records.size(), 4u);
  EXPECT_EQ(out.records[3].first, (WindowRow{2, autumn_day, autumn_day + 25 * kHour, 2, 3, 2, 0}));
  EXPECT_EQ(op->StateSize(), 0u);
}

TEST(WindowZoneTest, ProcessingTimeWindowsFireAtTheZonesMidnight) {
  TimestampMs now = kBerlinAutumn - 2 * kHour;  // 2026-10-25 01:00 CEST
  KeyedOperatorOptions options;
  options.time_domain = TimeDomain::kProcessingTime;
  options.clock = [&now] { return now; };
  VectorCollector<WindowRow> out;
  auto owned = testing::MakeWindowRowOp(Zoned(kDay, kDay, "Europe/Berlin"), options, &out);
  Op& op = *owned;
  op.ProcessElement(Event{1, 5, 0}, 0);
  const int64_t midnight = kBerlinAutumn + 22 * kHour;  // 2026-10-26 00:00 CET
  EXPECT_EQ(op.NextFireTime(), midnight - 1);
  now = midnight - 1;
  op.OnProcessingTime();
  EXPECT_TRUE(out.records.empty());
  now = midnight;
  op.OnProcessingTime();
  ASSERT_EQ(out.records.size(), 1u);
  EXPECT_EQ(out.records[0].first, (WindowRow{1, kBerlinAutumn - 3 * kHour, midnight, 1, 5, 5, 0}));
}

TEST(WindowZoneTest, WindowJoinsPairRecordsOfTheSameLocalDay) {
  using JoinRow = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>;
  VectorCollector<JoinRow> out;
  WindowJoinOperator<int64_t, Event, Event, JoinRow> op(
      Zoned(kDay, kDay, "America/New_York"), [](const Event& e) { return e.key; },
      [](const Event& e) { return e.key; },
      [](const int64_t& k, TimestampMs s, TimestampMs e, const Event& l, const Event& r) {
        return JoinRow{k, s, e, l.id, r.id};
      },
      &out);
  // New York is UTC-4 in summer: its 2026-07-01 runs from 04:00Z to 04:00Z the next day.
  const int64_t day = 1782878400000;  // 2026-07-01T04:00:00Z
  op.ProcessLeft(Event{1, 0, 10}, day + 1);
  op.ProcessRight(Event{1, 0, 20}, day + kDay - 1);  // same local day, the next UTC day
  op.ProcessRight(Event{1, 0, 21}, day - 1);         // the local day before
  op.OnWatermark(kMaxWatermark);
  ASSERT_EQ(out.records.size(), 1u);
  EXPECT_EQ(out.records[0].first, (JoinRow{1, day, day + kDay, 10, 20}));
  EXPECT_EQ(out.records[0].second, day + kDay - 1);
}

TEST(WindowZoneTest, SnapshotsRestoreOnlyUnderTheSameZone) {
  VectorCollector<WindowRow> out;
  auto berlin = MakeOp(Zoned(kDay, kDay, "Europe/Berlin"), KeyGroupSpan::All(), 0, &out);
  berlin->ProcessElement(Event{1, 1, 0}, kBerlinAutumn);
  BinaryWriter w;
  berlin->SnapshotState(&w);
  auto utc = MakeOp(SlidingWindows::Tumbling(kDay).value(), KeyGroupSpan::All(), 0, &out);
  auto tokyo = MakeOp(Zoned(kDay, kDay, "Asia/Tokyo"), KeyGroupSpan::All(), 0, &out);
  auto same = MakeOp(Zoned(kDay, kDay, "Europe/Berlin"), KeyGroupSpan::All(), 0, &out);
  BinaryReader r1(w.data()), r2(w.data()), r3(w.data());
  EXPECT_EQ(utc->RestoreState(&r1).code(), StatusCode::kInvalidArgument);
  Status other = tokyo->RestoreState(&r2);
  EXPECT_EQ(other.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(other.message().find("Europe/Berlin"), std::string::npos) << other.message();
  EXPECT_TRUE(same->RestoreState(&r3).ok());
}

TEST(WindowZoneTest, TheWallClockNeverGoesBackAndInvertsInstant) {
  for (const char* name : {"Europe/Berlin", "Australia/Lord_Howe", "America/St_Johns"}) {
    WallClock clock(FindZone(name));
    CLibraryClock reference(name);
    int64_t previous = kMinWatermark;
    for (int64_t t = kBerlinSpring - 200 * kDay; t < kBerlinAutumn + 200 * kDay; t += 7 * kMinute) {
      int64_t r = clock.Read(t);
      EXPECT_GE(r, previous) << name << " at " << t;
      previous = r;
      // Outside a repeated stretch the reading is the C library's.
      if (reference.Reading(t) == r) continue;
      EXPECT_LT(reference.Reading(t), r) << name << " at " << t;
    }
    // Read(t) >= w <=> t >= Instant(w), sampled around both Berlin changes.
    for (int64_t t = kBerlinSpring - 3 * kHour; t < kBerlinSpring + 3 * kHour; t += 5 * kMinute) {
      for (int64_t w = t - 3 * kHour; w < t + 5 * kHour; w += 15 * kMinute) {
        EXPECT_EQ(clock.Read(t) >= w, t >= clock.Instant(w)) << name << " " << t << " " << w;
      }
    }
    for (int64_t t = kBerlinAutumn - 3 * kHour; t < kBerlinAutumn + 3 * kHour; t += 5 * kMinute) {
      for (int64_t w = t - 3 * kHour; w < t + 5 * kHour; w += 15 * kMinute) {
        EXPECT_EQ(clock.Read(t) >= w, t >= clock.Instant(w)) << name << " " << t << " " << w;
      }
    }
  }
  // Far from the zone rules' years the offset in force holds, without overflow.
  WallClock berlin(FindZone("Europe/Berlin"));
  EXPECT_EQ(berlin.Read(kMaxEventTime), kMaxEventTime + kHour);
  EXPECT_EQ(berlin.Read(-kMaxEventTime) <= berlin.Read(-kMaxEventTime + 1), true);
  EXPECT_EQ(berlin.Instant(kMaxEventTime + kHour), kMaxEventTime);
  EXPECT_EQ(berlin.Read(kMaxWatermark), kMaxWatermark);
}

}  // namespace
}  // namespace flow::rt
