#include "flow/runtime/operators/running_aggregate_operator.h"

#include <gtest/gtest.h>

#include <map>

#include "operator_test_util.h"

namespace flow::rt {
namespace {

using testing::CountSumMax;
using testing::Event;
using testing::Step;
// (record id, key, count, sum, max, timestamp)
using Row = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t>;
struct Update {
  int64_t id, key, count, sum, max;
};
using Op = RunningAggregateOperator<int64_t, Event, CountSumMax, Update>;

std::unique_ptr<Op> MakeOp(KeyGroupSpan range, VectorCollector<Update>* out, StateTtl ttl = {},
                           ProcessingClock clock = nullptr) {
  KeyedOperatorOptions options;
  options.key_groups = range;
  options.clock = std::move(clock);
  // The output is built from the key and result only; the record id is filled by the test from
  // the arrival order, so this make-output cannot see it.
  return std::make_unique<Op>(
      [](const Event& e) { return e.key; },
      [](const int64_t& key, const std::tuple<int64_t, int64_t, int64_t>& r) {
        return Update{0, key, std::get<0>(r), std::get<1>(r), std::get<2>(r)};
      },
      out, options, ttl);
}

TEST(RunningAggregateTest, EmitsTheUpdatedResultPerRecordAcrossRescaling) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    std::vector<Step> steps = testing::GenerateStream(seed, {});
    // Reference: prefix aggregates per key in arrival order.
    std::map<int64_t, std::vector<int64_t>> seen;
    std::vector<Row> ref;
    for (const Step& s : steps) {
      if (s.kind != Step::Kind::kRecord) continue;
      auto& v = seen[s.event.key];
      v.push_back(s.event.value);
      int64_t sum = 0, max = INT64_MIN;
      for (int64_t x : v) {
        sum += x;
        max = std::max(max, x);
      }
      ref.emplace_back(s.event.id, s.event.key, static_cast<int64_t>(v.size()), sum, max,
                       s.timestamp);
    }
    for (const auto& plan : testing::PhasePlans(steps.size())) {
      VectorCollector<Update> out;
      std::vector<Row> rows;
      uint64_t late = 0;
      auto ops = testing::RunPhases<Op>(
          steps, plan, [&](KeyGroupSpan range) { return MakeOp(range, &out); },
          [&](Op& op, const Step& s) {
            size_t before = out.records.size();
            op.ProcessElement(s.event, s.timestamp);
            ASSERT_EQ(out.records.size(), before + 1);
            const auto& [u, ts] = out.records.back();
            rows.emplace_back(s.event.id, u.key, u.count, u.sum, u.max, ts);
          },
          &late);
      EXPECT_EQ(rows, ref);
      for (auto& op : ops) EXPECT_EQ(op->StateSize(), 0u);
    }
  }
}

TEST(RunningAggregateTest, TtlForgetsIdleKeys) {
  TimestampMs now = 0;
  VectorCollector<Update> out;
  auto op = MakeOp(KeyGroupSpan::All(), &out, StateTtl{100}, [&now] { return now; });
  op->ProcessElement(Event{1, 5, 0}, 0);
  op->ProcessElement(Event{2, 1, 1}, 0);
  now = 60;
  op->ProcessElement(Event{1, 5, 2}, 0);  // key 1 lives until 160 now
  now = 120;
  op->OnWatermark(10);  // cleanup pass: key 2 (idle since 0) is gone
  EXPECT_EQ(op->StateSize(), 1u);
  op->ProcessElement(Event{1, 5, 3}, 0);
  op->ProcessElement(Event{2, 1, 4}, 0);
  ASSERT_EQ(out.records.size(), 5u);
  EXPECT_EQ(out.records[3].first.count, 3);  // key 1 kept its count
  EXPECT_EQ(out.records[4].first.count, 1);  // key 2 started again
}

}  // namespace
}  // namespace flow::rt
