#pragma once
// RunningAggregateOperator<Key, In, Acc, Out>: unwindowed `key by k | aggregate ...`. Every input
// record updates its key's accumulator and emits make_output(key, result) with the record's
// timestamp: a changelog of the latest result per key.
//
// State: one accumulator per key. Optional TTL (options `ttl`) forgets keys idle for that long
// (processing or event time); a forgotten key starts again from an empty accumulator. At end of
// input (watermark kMaxWatermark) the state is dropped: no record can update it any more.
//
// Threading: one subtask thread. Errors: only RestoreState fails.

#include <functional>
#include <span>
#include <utility>

#include "flow/runtime/operators/accumulator.h"
#include "flow/runtime/operators/collector.h"
#include "flow/runtime/operators/keyed_operator_core.h"

namespace flow::rt {

template <StateKey Key, typename In, Accumulator<In> Acc, typename Out>
class RunningAggregateOperator {
 public:
  using KeyFn = std::function<Key(const In&)>;
  using MakeOutputFn = std::function<Out(const Key&, const AccumulatorResult<Acc>&)>;

  // ttl Default: none (keys are kept until end of input).
  RunningAggregateOperator(KeyFn key_of, MakeOutputFn make_output, Collector<Out>* out,
                           KeyedOperatorOptions options = {}, StateTtl ttl = {})
      : key_of_(std::move(key_of)),
        make_output_(std::move(make_output)),
        out_(out),
        core_("running_aggregate", std::move(options)),
        accs_(core_.backend().template CreateValueState<Key, Acc>("accumulators", ttl)),
        ttl_(ttl) {}

  void ProcessElement(const In& record, TimestampMs timestamp) {
    Key key = key_of_(record);
    std::optional<uint32_t> kg = core_.OwnedKeyGroup(key);
    if (!kg) return;
    Acc& acc = accs_->GetOrInsert(key, *kg);
    acc.Add(record);
    out_->Collect(make_output_(key, acc.Result()), timestamp);
  }

  void ProcessBatch(std::span<const In> records, std::span<const TimestampMs> timestamps) {
    assert(records.size() == timestamps.size() && "one timestamp per record");
    for (size_t i = 0; i < records.size(); ++i) ProcessElement(records[i], timestamps[i]);
  }

  void OnWatermark(TimestampMs watermark) {
    if (!core_.AdvanceWatermark(watermark)) return;
    if (watermark == kMaxWatermark) {
      core_.backend().Clear();
    } else if (ttl_.enabled()) {
      // A full scan; fine at watermark frequency for the key counts unwindowed aggregates hold.
      core_.backend().CleanupExpired();
    }
  }

  void SnapshotState(BinaryWriter* out) const { core_.Snapshot(out); }
  [[nodiscard]] Status RestoreState(BinaryReader* in) { return core_.Restore(in); }

  const OperatorCounters& counters() const { return core_.counters(); }
  size_t StateSize() const { return core_.backend().TotalEntries(); }

 private:
  KeyFn key_of_;
  MakeOutputFn make_output_;
  Collector<Out>* out_;
  KeyedOperatorCore core_;
  ValueState<Key, Acc>* accs_;
  StateTtl ttl_;
};

}  // namespace flow::rt
