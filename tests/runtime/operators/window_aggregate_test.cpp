#include "flow/runtime/operators/window_aggregate_operator.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>

#include "operator_test_util.h"
#include "window_row_op.h"

namespace flow::rt {
namespace {

using testing::CountSumMax;
using testing::Event;
using testing::Step;
using testing::WindowRow;
using Op = testing::WindowRowOp;

// Reference: for each record, the windows containing it by definition (every k with
// k*slide <= t < k*slide + size, found by scanning k), minus those whose fire time had passed
// when it arrived; then group and aggregate.
struct Reference {
  std::vector<WindowRow> rows;
  uint64_t late = 0;
};

Reference Naive(const std::vector<Step>& steps, DurationMs size, DurationMs slide,
                DurationMs lateness) {
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::vector<int64_t>> groups;
  Reference ref;
  TimestampMs watermark = kMinWatermark;
  for (const Step& s : steps) {
    if (s.kind == Step::Kind::kWatermark) {
      watermark = std::max(watermark, s.timestamp);
      continue;
    }
    TimestampMs t = s.timestamp;
    bool any = false;
    for (int64_t k = t / slide - size / slide - 2; k <= t / slide + 2; ++k) {
      TimestampMs start = k * slide, end = start + size;
      if (!(start <= t && t < end)) continue;
      if (end - 1 + lateness <= watermark) continue;  // this window already fired
      groups[{s.event.key, start, end}].push_back(s.event.value);
      any = true;
    }
    if (!any) ++ref.late;
  }
  for (const auto& [g, values] : groups) {
    auto [key, start, end] = g;
    int64_t sum = 0, max = INT64_MIN;
    for (int64_t v : values) {
      sum += v;
      max = std::max(max, v);
    }
    ref.rows.emplace_back(key, start, end, static_cast<int64_t>(values.size()), sum, max, end - 1);
  }
  ref.rows = testing::Sorted(ref.rows);
  return ref;
}

std::unique_ptr<Op> MakeOp(SlidingWindows w, KeyGroupSpan range, DurationMs lateness,
                           VectorCollector<WindowRow>* out) {
  return testing::MakeWindowRowOp(w, range, lateness, out);
}

// Runs every phase plan and compares against the reference; also checks no state is left.
// Returns the reference's late count so callers can check their input exercised lateness.
uint64_t CheckAgainstReference(DurationMs size, DurationMs slide, DurationMs lateness,
                               const testing::StreamShape& shape, uint32_t seed) {
  SCOPED_TRACE("size " + std::to_string(size) + " slide " + std::to_string(slide) + " lateness " +
               std::to_string(lateness) + " seed " + std::to_string(seed));
  std::vector<Step> steps = testing::GenerateStream(seed, shape);
  const Reference ref = Naive(steps, size, slide, lateness);
  EXPECT_GT(ref.rows.size(), 100u);
  testing::ExpectEveryPhasePlanGives(steps, SlidingWindows::Sliding(size, slide).value(), lateness,
                                     ref.rows, ref.late);
  return ref.late;
}

TEST(WindowAggregateTest, TumblingMatchesReference) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    CheckAgainstReference(10, 10, 0, {}, seed);
    CheckAgainstReference(37, 37, 0, {}, seed);
  }
}

TEST(WindowAggregateTest, SlidingMatchesReference) {
  const std::pair<DurationMs, DurationMs> shapes[] = {{10, 5}, {10, 3},   {7, 3}, {12, 8},
                                                      {30, 1}, {100, 15}, {9, 9}, {25, 10}};
  for (uint32_t seed : {11u, 12u}) {
    for (auto [size, slide] : shapes) CheckAgainstReference(size, slide, 0, {}, seed);
  }
}

TEST(WindowAggregateTest, LateRecordsWithinLatenessCountBeyondAreDropped) {
  testing::StreamShape shape;
  shape.late_percent = 20;
  shape.extra_delay = 80;
  for (uint32_t seed : {21u, 22u, 23u}) {
    uint64_t late_without_lateness = 0, late_with_lateness = 0;
    for (DurationMs lateness : {0, 15, 50}) {
      uint64_t late = CheckAgainstReference(20, 20, lateness, shape, seed);
      CheckAgainstReference(20, 6, lateness, shape, seed);
      if (lateness == 0) late_without_lateness = late;
      if (lateness == 50) late_with_lateness = late;
    }
    // The input really has late records, and lateness really admits some of them.
    EXPECT_GT(late_without_lateness, 20u);
    EXPECT_LT(late_with_lateness, late_without_lateness);
  }
}

TEST(WindowAggregateTest, LateRecordsReachTheSideHandlerAndCounts) {
  VectorCollector<WindowRow> out;
  auto op = MakeOp(SlidingWindows::Tumbling(10).value(), KeyGroupSpan::All(), 5, &out);
  std::vector<int64_t> late_ids;
  op->SetLateRecordHandler([&](const Event& e, TimestampMs) { late_ids.push_back(e.id); });
  op->ProcessElement(Event{1, 1, 100}, 3);
  op->OnWatermark(13);  // window [0,10) fires at 9 + 5 = 14: not yet
  EXPECT_TRUE(out.records.empty());
  op->ProcessElement(Event{1, 2, 101}, 9);  // late but within lateness: counted in
  op->OnWatermark(14);
  ASSERT_EQ(out.records.size(), 1u);
  EXPECT_EQ(out.records[0].first, (WindowRow{1, 0, 10, 2, 3, 2, 0}));
  EXPECT_EQ(out.records[0].second, 9);
  op->ProcessElement(Event{1, 4, 102}, 0);   // its only window fired: dropped
  op->ProcessElement(Event{1, 8, 103}, 10);  // window [10,20) still open
  op->OnWatermark(kMaxWatermark);
  EXPECT_EQ(late_ids, std::vector<int64_t>{102});
  EXPECT_EQ(op->counters().late_records_dropped, 1u);
  ASSERT_EQ(out.records.size(), 2u);
  EXPECT_EQ(out.records[1].first, (WindowRow{1, 10, 20, 1, 8, 8, 0}));
  EXPECT_EQ(op->StateSize(), 0u);
}

TEST(WindowAggregateTest, ProcessingTimeFiresOnTheClock) {
  TimestampMs now = 1000;
  KeyedOperatorOptions options;
  options.time_domain = TimeDomain::kProcessingTime;
  options.clock = [&now] { return now; };
  VectorCollector<WindowRow> out;
  auto owned = testing::MakeWindowRowOp(SlidingWindows::Tumbling(100).value(), options, &out);
  Op& op = *owned;
  op.ProcessElement(Event{1, 5, 0}, /*event time ignored*/ 123456);
  now = 1050;
  op.ProcessElement(Event{1, 6, 1}, 0);
  op.OnProcessingTime();
  EXPECT_TRUE(out.records.empty());
  now = 1100;
  op.ProcessElement(Event{1, 7, 2}, 0);
  op.OnProcessingTime();
  ASSERT_EQ(out.records.size(), 1u);
  EXPECT_EQ(out.records[0].first, (WindowRow{1, 1000, 1100, 2, 11, 6, 0}));
  op.OnWatermark(kMaxWatermark);
  ASSERT_EQ(out.records.size(), 2u);
  EXPECT_EQ(out.records[1].first, (WindowRow{1, 1100, 1200, 1, 7, 7, 0}));
}

TEST(WindowAggregateTest, ExtremeTimestampsAreRejectedOrHandledWithoutOverflow) {
  VectorCollector<WindowRow> out;
  auto op = MakeOp(SlidingWindows::Sliding(kMaxWindowDuration, kMaxWindowDuration / 4).value(),
                   KeyGroupSpan::All(), kMaxWindowDuration, &out);
  op->ProcessElement(Event{1, 1, 0}, INT64_MIN);
  op->ProcessElement(Event{1, 1, 1}, INT64_MAX);
  op->ProcessElement(Event{1, 1, 2}, kMaxEventTime + 1);
  EXPECT_EQ(op->counters().invalid_timestamps, 3u);
  op->ProcessElement(Event{1, 2, 3}, kMaxEventTime);
  op->ProcessElement(Event{1, 3, 4}, -kMaxEventTime);
  EXPECT_LT(op->NextFireTime(), kMaxWatermark);
  op->OnWatermark(kMaxWatermark);
  EXPECT_EQ(out.records.size(), 8u);  // each record is in size/slide = 4 windows
  EXPECT_EQ(op->StateSize(), 0u);
  EXPECT_EQ(op->NextFireTime(), kMaxWatermark);
}

TEST(WindowAggregateTest, SnapshotOfAnotherOperatorKindIsRejected) {
  VectorCollector<WindowRow> out;
  auto op = MakeOp(SlidingWindows::Tumbling(10).value(), KeyGroupSpan::All(), 0, &out);
  KeyedOperatorCore other("session_window", {});
  BinaryWriter w;
  other.Snapshot(&w);
  BinaryReader r(w.data());
  Status s = op->RestoreState(&r);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("session_window"), std::string::npos) << s.message();
}

TEST(WindowAggregateTest, ChangedWindowParametersAreRejectedOnRestore) {
  VectorCollector<WindowRow> out;
  auto op = MakeOp(SlidingWindows::Sliding(10, 5).value(), KeyGroupSpan::All(), 0, &out);
  op->ProcessElement(Event{1, 1, 0}, 3);
  BinaryWriter w;
  op->SnapshotState(&w);
  auto other_lateness =
      MakeOp(SlidingWindows::Sliding(10, 5).value(), KeyGroupSpan::All(), 7, &out);
  auto other_slide = MakeOp(SlidingWindows::Sliding(10, 2).value(), KeyGroupSpan::All(), 0, &out);
  auto same = MakeOp(SlidingWindows::Sliding(10, 5).value(), KeyGroupSpan::All(), 0, &out);
  BinaryReader r1(w.data()), r2(w.data()), r3(w.data());
  EXPECT_EQ(other_lateness->RestoreState(&r1).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(other_slide->RestoreState(&r2).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(same->RestoreState(&r3).ok());
}

TEST(WindowAggregateTest, InvalidSpecsAndCorruptSnapshotsAreErrors) {
  EXPECT_EQ(SlidingWindows::Sliding(10, 0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(SlidingWindows::Sliding(10, 11).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(SlidingWindows::Tumbling(-1).status().code(), StatusCode::kInvalidArgument);
  KeyedOperatorOptions bad;
  bad.allowed_lateness = -1;
  EXPECT_EQ(bad.Validate().code(), StatusCode::kInvalidArgument);

  VectorCollector<WindowRow> out;
  auto op = MakeOp(SlidingWindows::Sliding(10, 5).value(), KeyGroupSpan::All(), 0, &out);
  for (int i = 0; i < 50; ++i) op->ProcessElement(Event{i % 5, i, i}, i);
  BinaryWriter w;
  op->SnapshotState(&w);
  const std::string bytes = w.data();
  for (size_t cut = 0; cut < bytes.size(); cut += 7) {
    auto fresh = MakeOp(SlidingWindows::Sliding(10, 5).value(), KeyGroupSpan::All(), 0, &out);
    BinaryReader r(std::string_view(bytes).substr(0, cut));
    EXPECT_FALSE(fresh->RestoreState(&r).ok());
  }
  // Layout: u32 magic, u32 version, u64 signature length, signature, i64 watermark, backend.
  uint64_t signature_length = 0;
  std::memcpy(&signature_length, bytes.data() + 8, sizeof signature_length);
  const size_t watermark_at = 16 + signature_length;
  std::mt19937 rng(5);
  for (int i = 0; i < 200; ++i) {
    std::string flipped = bytes;
    size_t at = rng() % flipped.size();
    flipped[at] ^= static_cast<char>(1 + rng() % 255);
    auto fresh = MakeOp(SlidingWindows::Sliding(10, 5).value(), KeyGroupSpan::All(), 0, &out);
    BinaryReader r(flipped);
    // Only the watermark field has no checksum: a flip there restores (a different watermark).
    Status s = fresh->RestoreState(&r);
    if (s.ok()) {
      EXPECT_TRUE(at >= watermark_at && at < watermark_at + 8) << "flip at " << at;
    }
  }
}

}  // namespace
}  // namespace flow::rt
