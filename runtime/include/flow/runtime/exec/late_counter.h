#pragma once
// LateCounter: publishes an operator's `counters().late_records_dropped` (every late record) as
// the subtask's `flow_late_records_dropped_total` metric, or as `flow_late_records_routed_total`
// when the window sends its late records to a late sink (`on late into ...`; docs/language.md,
// "Lateness"): each late record counts in exactly one of the two. The generated adapters call
// Report after every call that can see late records.
// Threading: one subtask thread (the metric itself is atomic).

#include <cstdint>

#include "flow/runtime/engine/operator.h"

namespace flow::exec {

class LateCounter {
 public:
  void Open(rt::OperatorContext& ctx, bool routed = false) {
    metric_ = routed ? ctx.metrics.Counter(
                           "flow_late_records_routed_total",
                           "records sent to the late sink because their windows had fired")
                     : ctx.metrics.Counter(rt::kMetricLateRecordsDropped,
                                           "records dropped because their windows had fired");
    reported_ = 0;
  }
  // `late`: the operator's running count; adds what is new since the last call.
  void Report(uint64_t late) {
    if (metric_ != nullptr && late > reported_)
      metric_->Add(static_cast<int64_t>(late - reported_));
    reported_ = late;
  }

 private:
  rt::Metric* metric_ = nullptr;
  uint64_t reported_ = 0;
};

}  // namespace flow::exec
