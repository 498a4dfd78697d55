#include "engine_adapter.h"

#include <gtest/gtest.h>

#include "flow/runtime/operators/interval_join_operator.h"
#include "flow/runtime/operators/window_aggregate_operator.h"
#include "operator_test_util.h"

namespace flow::rt {
namespace {

using testing::CountSumMax;
using testing::Event;
using testing::WindowRow;
using WinOp = WindowAggregateOperator<int64_t, Event, CountSumMax, WindowRow>;
using Adapter = KeyedOneInputOperator<WinOp, Event, WindowRow>;
using PairRow = std::pair<int64_t, int64_t>;
using JoinOp = IntervalJoinOperator<int64_t, Event, Event, PairRow>;
using JoinAdapter = KeyedTwoInputOperator<JoinOp, Event, Event, PairRow>;

// Keeps every record handed downstream.
template <typename T>
class Sink final : public BatchConsumer<T> {
 public:
  Status ConsumeView(const Batch<T>& batch) override {
    for (size_t i = 0; i < batch.size(); ++i)
      rows.emplace_back(batch.records[i], batch.timestamps[i]);
    return Status::Ok();
  }
  Status OnWatermark(TimestampMs) override { return Status::Ok(); }
  Status OnIdle(bool) override { return Status::Ok(); }
  Status OnBarrier(int64_t) override { return Status::Ok(); }
  Status OnEnd(bool) override { return Status::Ok(); }
  std::vector<std::pair<T, TimestampMs>> rows;
};

std::unique_ptr<WinOp> MakeWindowOp(Collector<WindowRow>* out, KeyedOperatorOptions o) {
  return std::make_unique<WinOp>(
      SlidingWindows::Sliding(10, 5).value(), [](const Event& e) { return e.key; },
      [](const int64_t& k, TimestampMs s, TimestampMs e,
         const std::tuple<int64_t, int64_t, int64_t>& r) {
        return WindowRow{k, s, e, std::get<0>(r), std::get<1>(r), std::get<2>(r), 0};
      },
      out, std::move(o));
}

OperatorContext Context(uint32_t subtask, uint32_t parallelism) {
  OperatorContext ctx;
  ctx.name = "agg";
  ctx.subtask = subtask;
  ctx.parallelism = parallelism;
  ctx.key_groups = KeyGroupsOfSubtask(subtask, parallelism, kDefaultMaxParallelism);
  return ctx;
}

TEST(EngineAdapterTest, WindowAggregateThroughTheEngineInterfaceMatchesDirectUse) {
  std::vector<testing::Step> steps = testing::GenerateStream(9, {});
  // Direct use, one subtask.
  VectorCollector<WindowRow> direct_out;
  auto direct = MakeWindowOp(&direct_out, {});
  for (const auto& s : steps) {
    if (s.kind == testing::Step::Kind::kWatermark) {
      direct->OnWatermark(s.timestamp);
    } else {
      direct->ProcessElement(s.event, s.timestamp);
    }
  }
  std::vector<std::pair<WindowRow, TimestampMs>> expected = direct_out.records;

  // Two adapted subtasks, fed batches; a snapshot and restore into fresh adapters half way.
  Sink<WindowRow> sink;
  std::vector<std::unique_ptr<Adapter>> subtasks;
  std::vector<OperatorContext> contexts = {Context(0, 2), Context(1, 2)};
  auto open_all = [&] {
    subtasks.clear();
    for (auto& ctx : contexts) {
      subtasks.push_back(std::make_unique<Adapter>(MakeWindowOp));
      ASSERT_TRUE(subtasks.back()->Open(ctx).ok());
    }
  };
  open_all();
  std::vector<Batch<Event>> pending(2);
  std::vector<Output<WindowRow>> outs;
  for (int i = 0; i < 2; ++i) outs.emplace_back(&sink, 7, nullptr);
  auto flush_batches = [&] {
    for (int i = 0; i < 2; ++i) {
      ASSERT_TRUE(subtasks[i]->ProcessBatch(pending[i], outs[i]).ok());
      pending[i].Clear();
    }
  };
  for (size_t n = 0; n < steps.size(); ++n) {
    const auto& s = steps[n];
    if (n == steps.size() / 2) {
      flush_batches();
      std::vector<std::string> snaps;
      for (auto& op : subtasks) {
        BinaryWriter w;
        ASSERT_TRUE(op->SnapshotState(&w).ok());
        snaps.push_back(w.Release());
      }
      open_all();
      for (auto& op : subtasks) {
        for (const auto& snap : snaps) {
          BinaryReader r(snap);
          ASSERT_TRUE(op->RestoreState(&r).ok());
        }
      }
    }
    if (s.kind == testing::Step::Kind::kWatermark) {
      flush_batches();
      for (int i = 0; i < 2; ++i) ASSERT_TRUE(subtasks[i]->OnWatermark(s.timestamp, outs[i]).ok());
    } else {
      uint32_t kg = KeyGroupOf(s.event.key, kDefaultMaxParallelism);
      pending[SubtaskForKeyGroup(kg, kDefaultMaxParallelism, 2)].Add(s.event, s.timestamp);
    }
  }
  for (auto& out : outs) ASSERT_TRUE(out.Flush().ok());
  EXPECT_GT(expected.size(), 100u);
  EXPECT_EQ(testing::Sorted(sink.rows), testing::Sorted(expected));
  for (auto& op : subtasks) EXPECT_EQ(op->op()->StateSize(), 0u);
}

TEST(EngineAdapterTest, JoinAdapterRoutesInputsAndCountsLateRecords) {
  MetricsRegistry registry;
  OperatorContext ctx = Context(0, 1);
  ctx.metrics = MetricGroup(&registry, "join", 0);
  JoinAdapter join([](Collector<PairRow>* out, KeyedOperatorOptions o) {
    return std::make_unique<JoinOp>(
        2, [](const Event& e) { return e.key; }, [](const Event& e) { return e.key; },
        [](const int64_t&, const Event& l, TimestampMs, const Event& r, TimestampMs) {
          return PairRow{l.id, r.id};
        },
        out, std::move(o));
  });
  BinaryWriter early;
  EXPECT_EQ(join.SnapshotState(&early).code(), StatusCode::kInternal);
  ASSERT_TRUE(join.Open(ctx).ok());
  Sink<PairRow> sink;
  Output<PairRow> out(&sink, 16, nullptr);
  Batch<Event> left, right;
  left.Add(Event{1, 0, 10}, 100);
  left.Add(Event{2, 0, 11}, 100);
  right.Add(Event{1, 0, 20}, 102);
  right.Add(Event{2, 0, 21}, 103);
  ASSERT_TRUE(join.ProcessBatch1(left, out).ok());
  ASSERT_TRUE(join.ProcessBatch2(right, out).ok());
  ASSERT_TRUE(join.OnWatermark(200, out).ok());
  Batch<Event> late;
  late.Add(Event{1, 0, 30}, 150);
  ASSERT_TRUE(join.ProcessBatch2(late, out).ok());
  ASSERT_TRUE(out.Flush().ok());
  EXPECT_EQ(sink.rows, (std::vector<std::pair<PairRow, TimestampMs>>{{{10, 20}, 102}}));
  EXPECT_EQ(registry.Sum("flow_late_records_dropped_total"), 1);
}

TEST(EngineAdapterTest, EmptyKeyGroupRangeIsAnError) {
  OperatorContext ctx;
  ctx.name = "agg";
  ctx.key_groups = {5, 5};
  Adapter op(MakeWindowOp);
  Status s = op.Open(ctx);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("agg"), std::string::npos);
}

}  // namespace
}  // namespace flow::rt
