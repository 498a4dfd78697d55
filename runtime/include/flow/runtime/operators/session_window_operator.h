#pragma once
// SessionWindowOperator<Key, In, Acc, Out>: `key by k | window session gap G | aggregate ...`.
//
// Semantics (see docs/windows-and-state.md):
// - A record at t opens the session [t, t + G). Sessions of one key that overlap (start < other
//   end and other start < end) merge: the union's start and end, accumulators merged. So records
//   less than G apart share a session; a silence of G or more closes it.
// - A session [s, e) fires ONCE when the watermark reaches e - 1 + allowed_lateness, emitting
//   make_output(key, s, e, result) with timestamp e - 1, and is removed.
// - A record is late when its own session [t, t + G) would already have fired; it is counted,
//   handed to the late-record handler if set, and dropped. A record never joins a session that
//   has fired: it starts a new one.
// - Processing-time mode as in WindowAggregateOperator.
//
// Threading: one subtask thread. Errors: only RestoreState fails.

#include <algorithm>
#include <functional>
#include <span>
#include <utility>
#include <vector>

#include "flow/runtime/operators/accumulator.h"
#include "flow/runtime/operators/collector.h"
#include "flow/runtime/operators/keyed_operator_core.h"
#include "flow/runtime/operators/window_spec.h"

namespace flow::rt {

template <StateKey Key, typename In, Accumulator<In> Acc, typename Out>
class SessionWindowOperator {
 public:
  using KeyFn = std::function<Key(const In&)>;
  using MakeOutputFn = std::function<Out(const Key&, TimestampMs start, TimestampMs end,
                                         const AccumulatorResult<Acc>&)>;
  using LateFn = std::function<void(const In&, TimestampMs)>;

  struct Session {
    TimestampMs start = 0;
    TimestampMs end = 0;
    Acc acc{};
    void Serialize(BinaryWriter& w) const {
      w.PutI64(start);
      w.PutI64(end);
      acc.Serialize(w);
    }
    Status Deserialize(BinaryReader& r) {
      FLOW_RETURN_IF_ERROR(r.GetI64(&start));
      FLOW_RETURN_IF_ERROR(r.GetI64(&end));
      if (end <= start) return Status::Corruption("session ends before it starts");
      return acc.Deserialize(r);
    }
  };

  SessionWindowOperator(SessionWindows windows, KeyFn key_of, MakeOutputFn make_output,
                        Collector<Out>* out, KeyedOperatorOptions options = {})
      : gap_(windows.gap()),
        key_of_(std::move(key_of)),
        make_output_(std::move(make_output)),
        out_(out),
        core_(OperatorSignature("session_window",
                                {{"gap", windows.gap()}, {"lateness", options.allowed_lateness}}),
              std::move(options)),
        sessions_(core_.backend().template CreateValueState<Key, std::vector<Session>>("sessions")),
        timers_(core_.backend().template CreateTimerService<Key>("session_timers")) {}

  void SetLateRecordHandler(LateFn fn) { late_ = std::move(fn); }

  void ProcessElement(const In& record, TimestampMs timestamp) {
    std::optional<TimestampMs> t = core_.RecordTime(timestamp);
    if (!t) return;
    if (core_.HasFired(*t + gap_)) {
      ++core_.counters().late_records_dropped;
      if (late_) late_(record, timestamp);
      return;
    }
    Key key = key_of_(record);
    std::optional<uint32_t> kg = core_.OwnedKeyGroup(key);
    if (!kg) return;
    std::vector<Session>& open = sessions_->GetOrInsert(key, *kg);
    Session merged{*t, *t + gap_, Acc{}};
    // Open sessions never overlap each other, so one pass finds every session the new one
    // bridges (their union is contiguous through the new record).
    auto keep = std::stable_partition(open.begin(), open.end(), [&](const Session& s) {
      return !(s.start < merged.end && merged.start < s.end);
    });
    const bool bridges = keep != open.end();
    for (auto it = keep; it != open.end(); ++it) {
      merged.start = std::min(merged.start, it->start);
      merged.end = std::max(merged.end, it->end);
      merged.acc.Merge(it->acc);
    }
    open.erase(keep, open.end());
    // Added after the sessions it bridges: on equal times it is the later arrival (first/last).
    merged.acc.Add(record);
    // Timers are set lazily: a session that grows keeps the timer of what it merged (set for an
    // earlier time), and FireSession moves it on. Most records extend a session, and then touch
    // no timer at all.
    if (!bridges) timers_->Register(key, core_.FireTime(merged.end));
    open.push_back(std::move(merged));
  }

  void ProcessBatch(std::span<const In> records, std::span<const TimestampMs> timestamps) {
    assert(records.size() == timestamps.size() && "one timestamp per record");
    for (size_t i = 0; i < records.size(); ++i) ProcessElement(records[i], timestamps[i]);
  }

  void OnWatermark(TimestampMs watermark) {
    if (!core_.AdvanceWatermark(watermark)) return;
    timers_->Advance(watermark, [this](const Key& key, const VoidNamespace&, TimestampMs fire) {
      FireSession(key, fire);
    });
  }
  // Watermark now - 1: records stamped with the current millisecond may still arrive.
  void OnProcessingTime() { OnWatermark(core_.ProcessingTimeNow() - 1); }

  void SnapshotState(BinaryWriter* out) const { core_.Snapshot(out); }
  [[nodiscard]] Status RestoreState(BinaryReader* in) { return core_.Restore(in); }

  // When the next window fires (as a watermark or processing time); kMaxWatermark when none is
  // pending. Lets the engine schedule OnProcessingTime() in processing-time mode.
  TimestampMs NextFireTime() { return timers_->NextTimestamp(); }

  const OperatorCounters& counters() const { return core_.counters(); }
  size_t StateSize() const { return core_.backend().TotalEntries(); }

 private:
  // Invariant: each open session has a timer at or before its fire time. A timer may be early
  // (its session grew since); it then fires nothing and re-arms for the next open session.
  void FireSession(const Key& key, TimestampMs fire_time) {
    uint32_t kg = core_.backend().KeyGroupFor(key);
    std::vector<Session>* open = sessions_->Get(key, kg);
    if (open == nullptr) return;
    // Open sessions do not overlap, so ordered by end they fire in time order.
    std::sort(open->begin(), open->end(),
              [](const Session& a, const Session& b) { return a.end < b.end; });
    size_t due = 0;
    while (due < open->size() && core_.FireTime((*open)[due].end) <= fire_time) {
      const Session& s = (*open)[due++];
      out_->Collect(make_output_(key, s.start, s.end, s.acc.Result()), s.end - 1);
    }
    open->erase(open->begin(), open->begin() + static_cast<ptrdiff_t>(due));
    if (open->empty()) {
      sessions_->Remove(key, kg);
      return;
    }
    timers_->Register(key, core_.FireTime(open->front().end));
  }

  DurationMs gap_;
  KeyFn key_of_;
  MakeOutputFn make_output_;
  Collector<Out>* out_;
  LateFn late_;
  KeyedOperatorCore core_;
  ValueState<Key, std::vector<Session>>* sessions_;
  TimerService<Key>* timers_;
};

}  // namespace flow::rt
