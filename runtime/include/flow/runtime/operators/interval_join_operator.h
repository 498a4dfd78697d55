#pragma once
// IntervalJoinOperator<Key, L, R, Out>: joins a left and a right stream on equal keys where the
// record times differ by at most `bound` (|tl - tr| <= bound, both ends included).
//
// Semantics (see docs/windows-and-state.md):
// - Each record is buffered per key and side. When a record arrives it is joined with every
//   buffered record of the other side in range, so each pair is emitted exactly once, when its
//   second record arrives, whatever the arrival order. Output timestamp: max(tl, tr).
// - A record with t <= watermark is late (partners it would need may be gone): counted and
//   dropped. A buffered record at t is removed once the watermark reaches t + bound: any partner
//   arriving later would have t' > watermark >= t + bound.
// - After end of input (kMaxWatermark) no state remains.
//
// Threading: one subtask thread. Errors: only RestoreState fails.

#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "flow/runtime/operators/collector.h"
#include "flow/runtime/operators/keyed_operator_core.h"
#include "flow/runtime/operators/window_spec.h"

namespace flow::rt {

template <StateKey Key, Serializable L, Serializable R, typename Out>
class IntervalJoinOperator {
 public:
  using LeftKeyFn = std::function<Key(const L&)>;
  using RightKeyFn = std::function<Key(const R&)>;
  using JoinFn = std::function<Out(const Key&, const L&, TimestampMs, const R&, TimestampMs)>;

  // InvalidArgument unless 0 <= bound <= kMaxWindowDuration.
  [[nodiscard]] static Status ValidateBound(DurationMs bound) {
    if (bound < 0 || bound > kMaxWindowDuration) {
      return Status::InvalidArgument("interval join bound must be between 0 and 2^60 ms, got " +
                                     std::to_string(bound));
    }
    return Status::Ok();
  }

  IntervalJoinOperator(DurationMs bound, LeftKeyFn left_key, RightKeyFn right_key, JoinFn join,
                       Collector<Out>* out, KeyedOperatorOptions options = {})
      : bound_(bound),
        left_key_(std::move(left_key)),
        right_key_(std::move(right_key)),
        join_(std::move(join)),
        out_(out),
        core_(OperatorSignature("interval_join", {{"bound", bound}}), std::move(options)),
        left_(core_.backend().template CreateValueState<Key, Buffer<L>>("left")),
        right_(core_.backend().template CreateValueState<Key, Buffer<R>>("right")),
        cleanup_(core_.backend().template CreateTimerService<Key>("join_cleanup")) {
    assert(ValidateBound(bound).ok() && "interval join bound must be validated");
  }

  void ProcessLeft(const L& record, TimestampMs timestamp) {
    Process(left_key_(record), record, timestamp, left_, right_,
            [&](const Key& k, const R& r, TimestampMs tr) {
              out_->Collect(join_(k, record, timestamp, r, tr), std::max(timestamp, tr));
            });
  }
  void ProcessRight(const R& record, TimestampMs timestamp) {
    Process(right_key_(record), record, timestamp, right_, left_,
            [&](const Key& k, const L& l, TimestampMs tl) {
              out_->Collect(join_(k, l, tl, record, timestamp), std::max(timestamp, tl));
            });
  }

  void OnWatermark(TimestampMs watermark) {
    if (!core_.AdvanceWatermark(watermark)) return;
    cleanup_->Advance(watermark, [this](const Key& key, const VoidNamespace&, TimestampMs due) {
      uint32_t kg = core_.backend().KeyGroupFor(key);
      Evict(key, kg, due - bound_, left_);
      Evict(key, kg, due - bound_, right_);
    });
  }

  void SnapshotState(BinaryWriter* out) const { core_.Snapshot(out); }
  [[nodiscard]] Status RestoreState(BinaryReader* in) { return core_.Restore(in); }

  const OperatorCounters& counters() const { return core_.counters(); }
  size_t StateSize() const { return core_.backend().TotalEntries(); }

 private:
  // Records of one side and key by time: a range lookup finds the partners of a new record.
  template <typename T>
  using Buffer = std::map<TimestampMs, std::vector<T>>;

  template <typename T, typename U, typename Emit>
  void Process(const Key& key, const T& record, TimestampMs timestamp,
               ValueState<Key, Buffer<T>>* own, ValueState<Key, Buffer<U>>* other, Emit&& emit) {
    std::optional<TimestampMs> t = core_.RecordTime(timestamp);
    if (!t) return;
    if (*t <= core_.watermark()) {
      ++core_.counters().late_records_dropped;
      return;
    }
    std::optional<uint32_t> kg = core_.OwnedKeyGroup(key);
    if (!kg) return;
    if (Buffer<U>* partners = other->Get(key, *kg)) {
      for (auto it = partners->lower_bound(*t - bound_);
           it != partners->end() && it->first <= *t + bound_; ++it) {
        for (const U& u : it->second) emit(key, u, it->first);
      }
    }
    own->GetOrInsert(key, *kg)[*t].push_back(record);
    cleanup_->Register(key, *t + bound_);
  }

  template <typename T>
  void Evict(const Key& key, uint32_t kg, TimestampMs up_to, ValueState<Key, Buffer<T>>* side) {
    Buffer<T>* buffer = side->Get(key, kg);
    if (buffer == nullptr) return;
    buffer->erase(buffer->begin(), buffer->upper_bound(up_to));
    if (buffer->empty()) side->Remove(key, kg);
  }

  DurationMs bound_;
  LeftKeyFn left_key_;
  RightKeyFn right_key_;
  JoinFn join_;
  Collector<Out>* out_;
  KeyedOperatorCore core_;
  ValueState<Key, Buffer<L>>* left_;
  ValueState<Key, Buffer<R>>* right_;
  TimerService<Key>* cleanup_;
};

}  // namespace flow::rt
