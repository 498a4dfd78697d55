#pragma once
// WindowAggregateOperator<Key, In, Acc, Out>: `key by k | window tumbling/sliding | aggregate ...`.
//
// Semantics (see docs/windows-and-state.md):
// - Each record goes into one pane accumulator (pane = gcd(size, slide)) of its key; a window
//   [s, e) fires ONCE, when the watermark reaches e - 1 + allowed_lateness, emitting
//   make_output(key, s, e, merged result) with timestamp e - 1. Its panes that no later window
//   needs are then removed, so after end of input (watermark kMaxWatermark) no state remains.
// - A record is late when every window containing it has fired; it is counted in
//   counters().late_records_dropped and handed to the late-record handler, if one is set.
//   A record whose earlier windows fired but whose later ones are open counts in the open ones.
// - Processing-time mode: records are stamped with the clock on arrival and OnProcessingTime()
//   fires every window due at the clock's time: at clock c every record stamped c - 1 or earlier
//   is in (more records may still be stamped c), so c acts as the watermark c - 1 and a window
//   fires once the clock reaches end + allowed_lateness; no record is ever late.
// - Zone-aligned windows (SlidingWindows::InZone) keep panes and timers in the zone's wall-clock
//   time (window_clock.h); `s`, `e` and the result's timestamp are converted back to instants.
//
// Threading: one subtask thread. Errors: only RestoreState fails (Corruption/InvalidArgument).

#include <algorithm>
#include <functional>
#include <span>
#include <utility>

#include "flow/runtime/operators/accumulator.h"
#include "flow/runtime/operators/collector.h"
#include "flow/runtime/operators/keyed_operator_core.h"
#include "flow/runtime/operators/window_clock.h"
#include "flow/runtime/operators/window_spec.h"

namespace flow::rt {

template <StateKey Key, typename In, Accumulator<In> Acc, typename Out>
class WindowAggregateOperator {
 public:
  using KeyFn = std::function<Key(const In&)>;
  using MakeOutputFn = std::function<Out(const Key&, TimestampMs start, TimestampMs end,
                                         const AccumulatorResult<Acc>&)>;
  using LateFn = std::function<void(const In&, TimestampMs)>;

  // `out` must outlive the operator. `options` must be valid (Validate()).
  WindowAggregateOperator(SlidingWindows windows, KeyFn key_of, MakeOutputFn make_output,
                          Collector<Out>* out, KeyedOperatorOptions options = {})
      : windows_(windows),
        key_of_(std::move(key_of)),
        make_output_(std::move(make_output)),
        out_(out),
        core_(SlidingWindowSignature("window_aggregate", windows, options.allowed_lateness),
              std::move(options)),
        clock_(&windows_, &core_),
        panes_(core_.backend().template CreateMapState<Key, TimestampMs, Acc>("panes")),
        timers_(core_.backend().template CreateTimerService<Key>("window_timers")) {}

  void SetLateRecordHandler(LateFn fn) { late_ = std::move(fn); }

  void ProcessElement(const In& record, TimestampMs timestamp) {
    std::optional<TimestampMs> t = core_.RecordTime(timestamp);
    if (!t) return;
    TimestampMs w = windows_.WindowTime(*t);
    if (clock_.Fired(windows_.LastWindowStart(w) + windows_.size())) {
      ++core_.counters().late_records_dropped;
      if (late_) late_(record, timestamp);
      return;
    }
    Key key = key_of_(record);
    std::optional<uint32_t> kg = core_.OwnedKeyGroup(key);
    if (!kg) return;
    TimestampMs pane = windows_.PaneStart(w);
    bool created = false;
    Acc& acc = panes_->GetOrInsert(key, *kg, pane, &created);
    // A new pane: its first open window must fire; firing that one schedules the next.
    if (created) timers_->Register(key, clock_.Timer(clock_.FirstOpenWindowEnd(pane)));
    acc.Add(record);
  }

  void ProcessBatch(std::span<const In> records, std::span<const TimestampMs> timestamps) {
    assert(records.size() == timestamps.size() && "one timestamp per record");
    for (size_t i = 0; i < records.size(); ++i) ProcessElement(records[i], timestamps[i]);
  }

  void OnWatermark(TimestampMs watermark) {
    if (!core_.AdvanceWatermark(watermark)) return;
    timers_->Advance(clock_.TimerWatermark(), [this](const Key& key, const VoidNamespace&,
                                                     TimestampMs fire) { FireWindow(key, fire); });
  }

  // Processing-time mode: fires the windows due at the clock's current time (watermark now - 1).
  void OnProcessingTime() { OnWatermark(core_.ProcessingTimeNow() - 1); }

  void SnapshotState(BinaryWriter* out) const { core_.Snapshot(out); }
  [[nodiscard]] Status RestoreState(BinaryReader* in) { return core_.Restore(in); }

  // When the next window fires (as a watermark or processing time); kMaxWatermark when none is
  // pending. Lets the engine schedule OnProcessingTime() in processing-time mode.
  TimestampMs NextFireTime() { return clock_.TimerInstant(timers_->NextTimestamp()); }

  const OperatorCounters& counters() const { return core_.counters(); }
  // Entries held (panes + timers); 0 after end of input.
  size_t StateSize() const { return core_.backend().TotalEntries(); }

 private:
  void FireWindow(const Key& key, TimestampMs timer) {
    TimestampMs end = clock_.WindowEnd(timer);
    TimestampMs start = end - windows_.size();
    uint32_t kg = core_.backend().KeyGroupFor(key);
    std::optional<Acc> merged;
    for (TimestampMs p = start; p < end; p += windows_.pane()) {
      Acc* acc = panes_->Get(key, kg, p);
      if (acc == nullptr) continue;
      if (merged) {
        merged->Merge(*acc);
      } else {
        merged = *acc;
      }
    }
    // Panes in [start, start + slide) belong to no later window.
    for (TimestampMs p = start; p < start + windows_.slide(); p += windows_.pane()) {
      panes_->Remove(key, kg, p);
    }
    if (merged) {
      TimestampMs end_instant = windows_.Instant(end);
      out_->Collect(make_output_(key, windows_.Instant(start), end_instant, merged->Result()),
                    end_instant - 1);
    }
    // Schedule the next window that holds one of the key's remaining panes (empty windows in
    // between are skipped).
    std::optional<TimestampMs> first_pane;
    panes_->ForEach(key, [&](const TimestampMs& p, Acc&) {
      if (!first_pane || p < *first_pane) first_pane = p;
    });
    if (first_pane) {
      TimestampMs next = std::max(end + windows_.slide(), windows_.FirstWindowEnd(*first_pane));
      timers_->Register(key, clock_.Timer(next));
    }
  }

  SlidingWindows windows_;
  KeyFn key_of_;
  MakeOutputFn make_output_;
  Collector<Out>* out_;
  LateFn late_;
  KeyedOperatorCore core_;
  WindowClock clock_;
  MapState<Key, TimestampMs, Acc>* panes_;
  TimerService<Key>* timers_;
};

}  // namespace flow::rt
