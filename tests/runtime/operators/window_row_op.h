#pragma once
// The window aggregate the window tests run: count, sum and max of the values per key, emitted
// as WindowRows (the emitted timestamp left 0 for the tests to fill in).

#include <memory>
#include <tuple>
#include <vector>

#include "flow/runtime/operators/window_aggregate_operator.h"
#include "operator_test_util.h"

namespace flow::rt::testing {

using WindowRowOp = WindowAggregateOperator<int64_t, Event, CountSumMax, WindowRow>;

inline std::unique_ptr<WindowRowOp> MakeWindowRowOp(const SlidingWindows& windows,
                                                    KeyedOperatorOptions options,
                                                    VectorCollector<WindowRow>* out) {
  return std::make_unique<WindowRowOp>(
      windows, [](const Event& e) { return e.key; },
      [](const int64_t& key, TimestampMs start, TimestampMs end,
         const std::tuple<int64_t, int64_t, int64_t>& r) {
        return WindowRow{key, start, end, std::get<0>(r), std::get<1>(r), std::get<2>(r), 0};
      },
      out, std::move(options));
}

// Event time, the key groups of `range`, `lateness`.
inline std::unique_ptr<WindowRowOp> MakeWindowRowOp(const SlidingWindows& windows,
                                                    KeyGroupSpan range, DurationMs lateness,
                                                    VectorCollector<WindowRow>* out) {
  KeyedOperatorOptions options;
  options.key_groups = range;
  options.allowed_lateness = lateness;
  return MakeWindowRowOp(windows, std::move(options), out);
}

// Runs `steps` through the operator under every phase plan (snapshots and rescaling between
// phases) and expects the rows `want` (sorted, emitted timestamps filled in), `late` records
// dropped, and no state left.
inline void ExpectEveryPhasePlanGives(const std::vector<Step>& steps, const SlidingWindows& windows,
                                      DurationMs lateness, const std::vector<WindowRow>& want,
                                      uint64_t late) {
  for (const auto& plan : PhasePlans(steps.size())) {
    VectorCollector<WindowRow> out;
    uint64_t dropped = 0;
    auto ops = RunPhases<WindowRowOp>(
        steps, plan,
        [&](KeyGroupSpan range) { return MakeWindowRowOp(windows, range, lateness, &out); },
        [](WindowRowOp& op, const Step& s) { op.ProcessElement(s.event, s.timestamp); }, &dropped);
    std::vector<WindowRow> rows;
    for (auto& [row, ts] : out.records) {
      std::get<6>(row) = ts;
      rows.push_back(row);
    }
    EXPECT_EQ(Sorted(rows), want) << "phases " << plan.size();
    EXPECT_EQ(dropped, late);
    for (auto& op : ops) EXPECT_EQ(op->StateSize(), 0u);
  }
}

}  // namespace flow::rt::testing
