#include "flow/runtime/operators/session_window_operator.h"

#include <gtest/gtest.h>

#include <map>

#include "operator_test_util.h"

namespace flow::rt {
namespace {

using testing::CountSumMax;
using testing::Event;
using testing::Step;
using testing::WindowRow;
using Op = SessionWindowOperator<int64_t, Event, CountSumMax, WindowRow>;

// Reference by definition: per key, sort the records by time and cut wherever two neighbours are
// `gap` or more apart; a session is [first, last + gap).
std::vector<WindowRow> Naive(const std::vector<Step>& steps, DurationMs gap) {
  std::map<int64_t, std::vector<std::pair<TimestampMs, int64_t>>> by_key;
  for (const Step& s : steps) {
    if (s.kind == Step::Kind::kRecord) by_key[s.event.key].emplace_back(s.timestamp, s.event.value);
  }
  std::vector<WindowRow> rows;
  for (auto& [key, recs] : by_key) {
    std::sort(recs.begin(), recs.end());
    size_t first = 0;
    for (size_t i = 1; i <= recs.size(); ++i) {
      if (i < recs.size() && recs[i].first - recs[i - 1].first < gap) continue;
      int64_t sum = 0, max = INT64_MIN;
      for (size_t j = first; j < i; ++j) {
        sum += recs[j].second;
        max = std::max(max, recs[j].second);
      }
      TimestampMs start = recs[first].first, end = recs[i - 1].first + gap;
      rows.emplace_back(key, start, end, static_cast<int64_t>(i - first), sum, max, end - 1);
      first = i;
    }
  }
  return testing::Sorted(rows);
}

std::unique_ptr<Op> MakeOp(DurationMs gap, KeyGroupSpan range, DurationMs lateness,
                           VectorCollector<WindowRow>* out) {
  KeyedOperatorOptions options;
  options.key_groups = range;
  options.allowed_lateness = lateness;
  return std::make_unique<Op>(
      SessionWindows::WithGap(gap).value(), [](const Event& e) { return e.key; },
      [](const int64_t& key, TimestampMs start, TimestampMs end,
         const std::tuple<int64_t, int64_t, int64_t>& r) {
        return WindowRow{key, start, end, std::get<0>(r), std::get<1>(r), std::get<2>(r), 0};
      },
      out, options);
}

std::vector<WindowRow> Rows(const VectorCollector<WindowRow>& out) {
  std::vector<WindowRow> rows;
  for (auto [row, ts] : out.records) {
    std::get<6>(row) = ts;
    rows.push_back(row);
  }
  return testing::Sorted(rows);
}

TEST(SessionWindowTest, MatchesReferenceOnOutOfOrderInput) {
  for (uint32_t seed : {1u, 2u, 3u, 4u}) {
    std::vector<Step> steps = testing::GenerateStream(seed, {});
    for (DurationMs gap : {3, 12, 30, 200}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " gap " + std::to_string(gap));
      std::vector<WindowRow> ref = Naive(steps, gap);
      for (const auto& plan : testing::PhasePlans(steps.size())) {
        VectorCollector<WindowRow> out;
        uint64_t late = 0;
        auto ops = testing::RunPhases<Op>(
            steps, plan, [&](KeyGroupSpan range) { return MakeOp(gap, range, 0, &out); },
            [](Op& op, const Step& s) { op.ProcessElement(s.event, s.timestamp); }, &late);
        EXPECT_EQ(Rows(out), ref) << "phases " << plan.size();
        EXPECT_EQ(late, 0u);
        for (auto& op : ops) EXPECT_EQ(op->StateSize(), 0u);
      }
    }
  }
}

TEST(SessionWindowTest, RecordsExactlyGapApartDoNotMergeCloserOnesBridge) {
  VectorCollector<WindowRow> out;
  auto op = MakeOp(10, KeyGroupSpan::All(), 0, &out);
  op->ProcessElement(Event{1, 1, 0}, 0);
  op->ProcessElement(Event{1, 2, 1}, 20);
  op->ProcessElement(Event{1, 4, 2}, 35);  // 15 after 20: its own session
  op->ProcessElement(Event{2, 7, 3}, 5);   // another key
  op->ProcessElement(Event{1, 8, 4}, 10);  // exactly `gap` from 0 and from 20: bridges nothing
  op->OnWatermark(kMaxWatermark);
  EXPECT_EQ(Rows(out), testing::Sorted(std::vector<WindowRow>{{1, 0, 10, 1, 1, 1, 9},
                                                              {1, 10, 20, 1, 8, 8, 19},
                                                              {1, 20, 30, 1, 2, 2, 29},
                                                              {1, 35, 45, 1, 4, 4, 44},
                                                              {2, 5, 15, 1, 7, 7, 14}}));
  VectorCollector<WindowRow> out2;
  auto op2 = MakeOp(10, KeyGroupSpan::All(), 0, &out2);
  op2->ProcessElement(Event{1, 1, 0}, 0);
  op2->ProcessElement(Event{1, 2, 1}, 18);
  op2->ProcessElement(Event{1, 8, 4}, 9);  // 9 apart from both: one session [0, 28)
  op2->OnWatermark(kMaxWatermark);
  EXPECT_EQ(Rows(out2), (std::vector<WindowRow>{{1, 0, 28, 3, 11, 8, 27}}));
  EXPECT_EQ(op2->StateSize(), 0u);
}

TEST(SessionWindowTest, LatenessKeepsSessionsOpenAndDropsBeyond) {
  VectorCollector<WindowRow> out;
  auto op = MakeOp(10, KeyGroupSpan::All(), 5, &out);
  std::vector<int64_t> late_ids;
  op->SetLateRecordHandler([&](const Event& e, TimestampMs) { late_ids.push_back(e.id); });
  op->ProcessElement(Event{1, 1, 0}, 0);  // [0,10): fires at 9 + 5 = 14
  op->OnWatermark(12);
  op->ProcessElement(Event{1, 2, 1}, 3);  // behind the watermark, within lateness: joins
  op->OnWatermark(16);                    // [0,13) fires at 12 + 5 = 17: not yet
  EXPECT_TRUE(out.records.empty());
  op->OnWatermark(17);
  EXPECT_EQ(Rows(out), (std::vector<WindowRow>{{1, 0, 13, 2, 3, 2, 12}}));
  op->ProcessElement(Event{1, 4, 2}, 2);   // [2,12) fires at 16 <= 17: late, dropped
  op->ProcessElement(Event{1, 8, 3}, 12);  // [12,22) open: new session, never merged into fired
  op->OnWatermark(kMaxWatermark);
  EXPECT_EQ(late_ids, std::vector<int64_t>{2});
  EXPECT_EQ(op->counters().late_records_dropped, 1u);
  EXPECT_EQ(Rows(out), (std::vector<WindowRow>{{1, 0, 13, 2, 3, 2, 12}, {1, 12, 22, 1, 8, 8, 21}}));
  EXPECT_EQ(op->StateSize(), 0u);
}

// A growing session keeps the timer of its first record, which fires early and re-arms: the
// session must still fire exactly when the watermark reaches its end - 1, and only then; sessions
// of one key created out of time order fire in time order.
TEST(SessionWindowTest, GrowingSessionFiresAtItsEndNotAtItsFirstTimer) {
  VectorCollector<WindowRow> out;
  auto op = MakeOp(10, KeyGroupSpan::All(), 0, &out);
  for (int64_t t = 0; t < 100; t += 3) op->ProcessElement(Event{1, 1, t}, t);  // [0, 109)
  op->OnWatermark(9);  // the first record's timer (end 10): nothing is due
  op->OnWatermark(50);
  EXPECT_TRUE(out.records.empty());
  op->ProcessElement(Event{1, 2, 200}, 205);  // a later session, created after
  op->ProcessElement(Event{1, 3, 201}, 120);  // an earlier one, created last: [120, 130)
  op->OnWatermark(107);
  EXPECT_TRUE(out.records.empty());
  op->OnWatermark(108);
  ASSERT_EQ(out.records.size(), 1u);
  EXPECT_EQ(out.records[0].first, (WindowRow{1, 0, 109, 34, 34, 1, 0}));
  EXPECT_EQ(out.records[0].second, 108);
  op->OnWatermark(214);
  ASSERT_EQ(out.records.size(), 3u);
  EXPECT_EQ(std::get<1>(out.records[1].first), 120);  // [120, 130) before [205, 215)
  EXPECT_EQ(std::get<1>(out.records[2].first), 205);
  EXPECT_EQ(op->StateSize(), 0u);
}

}  // namespace
}  // namespace flow::rt
