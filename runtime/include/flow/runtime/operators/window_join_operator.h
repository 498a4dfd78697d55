#pragma once
// WindowJoinOperator<Key, L, R, Out>: joins a left and a right stream on equal keys within the same
// tumbling or sliding window: for each window [s, e) and key, every (left, right) pair of records
// in it is emitted as join(key, s, e, left, right) with timestamp e - 1 when the window fires
// (watermark >= e - 1 + allowed_lateness). A pair that shares several sliding windows is emitted
// once per window, as the definition says.
//
// Records are buffered once, in the pane (gcd(size, slide)) that holds them, per side and key;
// a firing window gathers its panes. Lateness as in WindowAggregateOperator: a record whose
// windows all fired is counted and dropped; after end of input no state remains. Zone-aligned
// windows as in WindowAggregateOperator (window_clock.h).
//
// Threading: one subtask thread. Errors: only RestoreState fails.

#include <algorithm>
#include <functional>
#include <utility>
#include <vector>

#include "flow/runtime/operators/collector.h"
#include "flow/runtime/operators/keyed_operator_core.h"
#include "flow/runtime/operators/window_clock.h"
#include "flow/runtime/operators/window_spec.h"

namespace flow::rt {

template <StateKey Key, Serializable L, Serializable R, typename Out>
class WindowJoinOperator {
 public:
  using LeftKeyFn = std::function<Key(const L&)>;
  using RightKeyFn = std::function<Key(const R&)>;
  using JoinFn =
      std::function<Out(const Key&, TimestampMs start, TimestampMs end, const L&, const R&)>;

  WindowJoinOperator(SlidingWindows windows, LeftKeyFn left_key, RightKeyFn right_key, JoinFn join,
                     Collector<Out>* out, KeyedOperatorOptions options = {})
      : windows_(windows),
        left_key_(std::move(left_key)),
        right_key_(std::move(right_key)),
        join_(std::move(join)),
        out_(out),
        core_(SlidingWindowSignature("window_join", windows, options.allowed_lateness),
              std::move(options)),
        clock_(&windows_, &core_),
        left_(core_.backend().template CreateMapState<Key, TimestampMs, std::vector<L>>("left")),
        right_(core_.backend().template CreateMapState<Key, TimestampMs, std::vector<R>>("right")),
        timers_(core_.backend().template CreateTimerService<Key>("window_timers")) {}

  void ProcessLeft(const L& record, TimestampMs timestamp) {
    Process(left_key_(record), record, timestamp, left_);
  }
  void ProcessRight(const R& record, TimestampMs timestamp) {
    Process(right_key_(record), record, timestamp, right_);
  }

  void OnWatermark(TimestampMs watermark) {
    if (!core_.AdvanceWatermark(watermark)) return;
    timers_->Advance(clock_.TimerWatermark(), [this](const Key& key, const VoidNamespace&,
                                                     TimestampMs fire) { FireWindow(key, fire); });
  }

  void SnapshotState(BinaryWriter* out) const { core_.Snapshot(out); }
  [[nodiscard]] Status RestoreState(BinaryReader* in) { return core_.Restore(in); }

  // When the next window fires (as a watermark or processing time); kMaxWatermark when none is
  // pending. Lets the engine schedule OnProcessingTime() in processing-time mode.
  TimestampMs NextFireTime() { return clock_.TimerInstant(timers_->NextTimestamp()); }

  const OperatorCounters& counters() const { return core_.counters(); }
  size_t StateSize() const { return core_.backend().TotalEntries(); }

 private:
  template <typename T>
  void Process(const Key& key, const T& record, TimestampMs timestamp,
               MapState<Key, TimestampMs, std::vector<T>>* side) {
    std::optional<TimestampMs> t = core_.RecordTime(timestamp);
    if (!t) return;
    TimestampMs w = windows_.WindowTime(*t);
    if (clock_.Fired(windows_.LastWindowStart(w) + windows_.size())) {
      ++core_.counters().late_records_dropped;
      return;
    }
    std::optional<uint32_t> kg = core_.OwnedKeyGroup(key);
    if (!kg) return;
    TimestampMs pane = windows_.PaneStart(w);
    bool created = false;
    std::vector<T>& records = side->GetOrInsert(key, *kg, pane, &created);
    // Its first open window must fire; firing that one schedules the next (see FireWindow).
    if (created) timers_->Register(key, clock_.Timer(clock_.FirstOpenWindowEnd(pane)));
    records.push_back(record);
  }

  void FireWindow(const Key& key, TimestampMs timer) {
    TimestampMs end = clock_.WindowEnd(timer);
    TimestampMs start = end - windows_.size();
    uint32_t kg = core_.backend().KeyGroupFor(key);
    std::vector<const std::vector<L>*> lefts;
    std::vector<const std::vector<R>*> rights;
    for (TimestampMs p = start; p < end; p += windows_.pane()) {
      if (const std::vector<L>* l = left_->Get(key, kg, p)) lefts.push_back(l);
      if (const std::vector<R>* r = right_->Get(key, kg, p)) rights.push_back(r);
    }
    TimestampMs start_instant = windows_.Instant(start), end_instant = windows_.Instant(end);
    for (const auto* ls : lefts) {
      for (const L& l : *ls) {
        for (const auto* rs : rights) {
          for (const R& r : *rs) {
            out_->Collect(join_(key, start_instant, end_instant, l, r), end_instant - 1);
          }
        }
      }
    }
    for (TimestampMs p = start; p < start + windows_.slide(); p += windows_.pane()) {
      left_->Remove(key, kg, p);
      right_->Remove(key, kg, p);
    }
    // Schedule the next window holding one of the key's remaining panes.
    std::optional<TimestampMs> first_pane;
    auto earliest = [&](const TimestampMs& p, const auto&) {
      if (!first_pane || p < *first_pane) first_pane = p;
    };
    left_->ForEach(key, earliest);
    right_->ForEach(key, earliest);
    if (first_pane) {
      TimestampMs next = std::max(end + windows_.slide(), windows_.FirstWindowEnd(*first_pane));
      timers_->Register(key, clock_.Timer(next));
    }
  }

  SlidingWindows windows_;
  LeftKeyFn left_key_;
  RightKeyFn right_key_;
  JoinFn join_;
  Collector<Out>* out_;
  KeyedOperatorCore core_;
  WindowClock clock_;
  MapState<Key, TimestampMs, std::vector<L>>* left_;
  MapState<Key, TimestampMs, std::vector<R>>* right_;
  TimerService<Key>* timers_;
};

}  // namespace flow::rt
