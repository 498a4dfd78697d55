#include <gtest/gtest.h>

#include <map>

#include "flow/runtime/operators/interval_join_operator.h"
#include "flow/runtime/operators/window_join_operator.h"
#include "operator_test_util.h"

namespace flow::rt {
namespace {

using testing::Event;
using testing::Step;
// Interval join rows: (left id, right id, key, output timestamp).
using PairRow = std::tuple<int64_t, int64_t, int64_t, int64_t>;
using IOp = IntervalJoinOperator<int64_t, Event, Event, PairRow>;
// Window join rows: (key, start, end, left id, right id, output timestamp).
using WinRow = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t>;
using WOp = WindowJoinOperator<int64_t, Event, Event, WinRow>;

std::unique_ptr<IOp> MakeIntervalOp(DurationMs bound, KeyGroupSpan range,
                                    VectorCollector<PairRow>* out) {
  KeyedOperatorOptions options;
  options.key_groups = range;
  return std::make_unique<IOp>(
      bound, [](const Event& e) { return e.key; }, [](const Event& e) { return e.key; },
      [](const int64_t& key, const Event& l, TimestampMs, const Event& r, TimestampMs) {
        return PairRow{l.id, r.id, key, 0};
      },
      out, options);
}

std::vector<PairRow> Rows(const VectorCollector<PairRow>& out) {
  std::vector<PairRow> rows;
  for (auto [row, ts] : out.records) {
    std::get<3>(row) = ts;
    rows.push_back(row);
  }
  return testing::Sorted(rows);
}

// Reference: records that were not behind the watermark on arrival, paired by brute force.
std::vector<PairRow> NaiveInterval(const std::vector<Step>& steps, DurationMs bound,
                                   uint64_t* late) {
  std::vector<const Step*> kept[2];
  TimestampMs watermark = kMinWatermark;
  *late = 0;
  for (const Step& s : steps) {
    if (s.kind == Step::Kind::kWatermark) {
      watermark = std::max(watermark, s.timestamp);
    } else if (s.timestamp <= watermark) {
      ++*late;
    } else {
      kept[s.side].push_back(&s);
    }
  }
  std::vector<PairRow> rows;
  for (const Step* l : kept[0]) {
    for (const Step* r : kept[1]) {
      if (l->event.key == r->event.key && std::abs(l->timestamp - r->timestamp) <= bound) {
        rows.emplace_back(l->event.id, r->event.id, l->event.key,
                          std::max(l->timestamp, r->timestamp));
      }
    }
  }
  return testing::Sorted(rows);
}

TEST(IntervalJoinTest, MatchesReferenceAcrossArrivalOrdersAndRescaling) {
  testing::StreamShape shape;
  shape.records = 1500;
  shape.late_percent = 10;
  for (uint32_t seed : {1u, 2u, 3u}) {
    std::vector<Step> steps = testing::GenerateStream(seed, shape);
    for (DurationMs bound : {0, 3, 10, 40}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " bound " + std::to_string(bound));
      uint64_t ref_late = 0;
      std::vector<PairRow> ref = NaiveInterval(steps, bound, &ref_late);
      EXPECT_GT(ref.size(), 15u);
      EXPECT_GT(ref_late, 0u);
      for (const auto& plan : testing::PhasePlans(steps.size())) {
        VectorCollector<PairRow> out;
        uint64_t late = 0;
        auto ops = testing::RunPhases<IOp>(
            steps, plan, [&](KeyGroupSpan range) { return MakeIntervalOp(bound, range, &out); },
            [](IOp& op, const Step& s) {
              if (s.side == 0) {
                op.ProcessLeft(s.event, s.timestamp);
              } else {
                op.ProcessRight(s.event, s.timestamp);
              }
            },
            &late);
        EXPECT_EQ(Rows(out), ref) << "phases " << plan.size();
        EXPECT_EQ(late, ref_late);
        for (auto& op : ops) EXPECT_EQ(op->StateSize(), 0u);
      }
    }
  }
}

TEST(IntervalJoinTest, BoundariesAreInclusiveInBothArrivalOrders) {
  for (bool left_first : {true, false}) {
    VectorCollector<PairRow> out;
    auto op = MakeIntervalOp(5, KeyGroupSpan::All(), &out);
    auto left = [&](int64_t id, TimestampMs t) { op->ProcessLeft(Event{1, 0, id}, t); };
    auto right = [&](int64_t id, TimestampMs t) { op->ProcessRight(Event{1, 0, id}, t); };
    if (left_first) {
      left(1, 100);
      right(2, 105);  // |dt| == 5: joins
      right(3, 94);   // |dt| == 6: does not
      right(4, 95);   // |dt| == 5: joins
    } else {
      right(2, 105);
      right(3, 94);
      right(4, 95);
      left(1, 100);
    }
    op->OnWatermark(kMaxWatermark);
    EXPECT_EQ(Rows(out), (std::vector<PairRow>{{1, 2, 1, 105}, {1, 4, 1, 100}}));
    EXPECT_EQ(op->StateSize(), 0u);
  }
}

TEST(IntervalJoinTest, StateIsEvictedAsTheWatermarkPassesTPlusBound) {
  VectorCollector<PairRow> out;
  auto op = MakeIntervalOp(10, KeyGroupSpan::All(), &out);
  op->ProcessLeft(Event{1, 0, 1}, 100);
  op->ProcessLeft(Event{1, 0, 2}, 120);
  op->OnWatermark(109);
  EXPECT_EQ(op->StateSize(), 3u);  // the key's left buffer and two cleanup timers
  op->OnWatermark(110);
  EXPECT_EQ(op->StateSize(), 2u);         // the record at 100 and its timer are gone
  op->ProcessRight(Event{1, 0, 3}, 111);  // 11 after 100 (evicted, and out of range anyway)
  op->OnWatermark(kMaxWatermark);
  EXPECT_EQ(Rows(out), (std::vector<PairRow>{{2, 3, 1, 120}}));
  EXPECT_EQ(op->StateSize(), 0u);
  EXPECT_EQ(IOp::ValidateBound(-1).code(), StatusCode::kInvalidArgument);
}

std::unique_ptr<WOp> MakeWindowOp(SlidingWindows w, KeyGroupSpan range,
                                  VectorCollector<WinRow>* out) {
  KeyedOperatorOptions options;
  options.key_groups = range;
  return std::make_unique<WOp>(
      w, [](const Event& e) { return e.key; }, [](const Event& e) { return e.key; },
      [](const int64_t& key, TimestampMs start, TimestampMs end, const Event& l, const Event& r) {
        return WinRow{key, start, end, l.id, r.id, 0};
      },
      out, options);
}

// Reference: per record, the windows containing it by definition that had not fired on arrival;
// then every left x right pair per (key, window).
std::vector<WinRow> NaiveWindowJoin(const std::vector<Step>& steps, DurationMs size,
                                    DurationMs slide, uint64_t* late) {
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::vector<int64_t>> sides[2];
  TimestampMs watermark = kMinWatermark;
  *late = 0;
  for (const Step& s : steps) {
    if (s.kind == Step::Kind::kWatermark) {
      watermark = std::max(watermark, s.timestamp);
      continue;
    }
    bool any = false;
    for (int64_t k = s.timestamp / slide - size / slide - 2; k <= s.timestamp / slide + 2; ++k) {
      TimestampMs start = k * slide, end = start + size;
      if (start <= s.timestamp && s.timestamp < end && end - 1 > watermark) {
        sides[s.side][{s.event.key, start, end}].push_back(s.event.id);
        any = true;
      }
    }
    if (!any) ++*late;
  }
  std::vector<WinRow> rows;
  for (const auto& [w, lefts] : sides[0]) {
    auto it = sides[1].find(w);
    if (it == sides[1].end()) continue;
    auto [key, start, end] = w;
    for (int64_t l : lefts) {
      for (int64_t r : it->second) rows.emplace_back(key, start, end, l, r, end - 1);
    }
  }
  return testing::Sorted(rows);
}

TEST(WindowJoinTest, MatchesReferenceForTumblingAndSlidingWindows) {
  testing::StreamShape shape;
  shape.records = 1200;
  shape.late_percent = 10;
  const std::pair<DurationMs, DurationMs> shapes[] = {{10, 10}, {20, 5}, {14, 6}, {9, 4}};
  for (uint32_t seed : {4u, 5u}) {
    std::vector<Step> steps = testing::GenerateStream(seed, shape);
    for (auto [size, slide] : shapes) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " size " + std::to_string(size) + " slide " +
                   std::to_string(slide));
      uint64_t ref_late = 0;
      std::vector<WinRow> ref = NaiveWindowJoin(steps, size, slide, &ref_late);
      EXPECT_GT(ref.size(), 50u);
      SlidingWindows windows = SlidingWindows::Sliding(size, slide).value();
      for (const auto& plan : testing::PhasePlans(steps.size())) {
        VectorCollector<WinRow> out;
        uint64_t late = 0;
        auto ops = testing::RunPhases<WOp>(
            steps, plan, [&](KeyGroupSpan range) { return MakeWindowOp(windows, range, &out); },
            [](WOp& op, const Step& s) {
              if (s.side == 0) {
                op.ProcessLeft(s.event, s.timestamp);
              } else {
                op.ProcessRight(s.event, s.timestamp);
              }
            },
            &late);
        std::vector<WinRow> rows;
        for (auto [row, ts] : out.records) {
          std::get<5>(row) = ts;
          rows.push_back(row);
        }
        EXPECT_EQ(testing::Sorted(rows), ref) << "phases " << plan.size();
        EXPECT_EQ(late, ref_late);
        for (auto& op : ops) EXPECT_EQ(op->StateSize(), 0u);
      }
    }
  }
}

}  // namespace
}  // namespace flow::rt
