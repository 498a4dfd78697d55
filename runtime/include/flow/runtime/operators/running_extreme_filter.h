#pragma once
// RunningExtremeFilter<T, Key, KeyFn>: drops the records that cannot equal their tumbling
// window's maximum (or minimum) key. The compiler's prune-join pass (docs/compiler.md) puts it in
// front of a window join whose other side is `max(x)` (or `min(x)`) of the same stream over the
// same windows, joined on x (Nexmark q7: the bids with the highest price of each window). A
// record whose key is below the highest key already seen in its window can never equal the
// window's maximum, so the join need not buffer it; only records that set or tie the running
// maximum go on (about the logarithm of a window's record count for keys in random order).
//
// Why this is exact: only records on time here (their window not behind this subtask's input
// watermark) raise the running extreme. This operator reads its upstream subtask one to one, so
// such a record is on time for the aggregate too, whose watermark is never ahead of any upstream
// subtask's; the aggregate (the pass requires no allowed lateness: one result per window) counts
// it, so the maximum it emits is at least that record's key. A dropped record's key is below it.
//
// The running extremes are a cache, not state: not snapshotted, empty after a restore (keeping
// more records is always correct), local to each subtask. So the operator counts as stateless
// and may run in several instances of a job.
//
// Threading: one subtask thread.

#include <cstdint>
#include <map>
#include <utility>

#include "flow/runtime/common/time.h"
#include "flow/runtime/engine/operator.h"
#include "flow/runtime/operators/window_spec.h"

namespace flow::rt {

template <typename T, typename Key, typename KeyFn>
class RunningExtremeFilter final : public OneInputOperator<T, T> {
 public:
  // `size`: the tumbling windows' length (aligned to the epoch, event time); `max`: drop what is
  // below the running maximum (else above the running minimum).
  RunningExtremeFilter(DurationMs size, bool max, KeyFn key)
      : size_(size), max_(max), key_(std::move(key)) {}

  bool stateless() const override { return true; }

  Status ProcessBatch(const Batch<T>& batch, Output<T>& out) override {
    for (size_t i = 0; i < batch.size(); ++i) {
      const TimestampMs ts = batch.timestamps[i];
      if (ts > kMaxEventTime || ts < -kMaxEventTime) {  // the join drops it as invalid
        out.Emit(batch.records[i], ts);
        continue;
      }
      const TimestampMs start = ts - ((ts % size_) + size_) % size_;
      const Key key = key_(batch.records[i]);
      auto it = extremes_.find(start);
      if (it != extremes_.end() && (max_ ? key < it->second : it->second < key)) {
        ++dropped_;
        continue;
      }
      if (start + size_ - 1 > watermark_) {  // on time: the window's result will count it
        if (it == extremes_.end()) {
          extremes_.emplace(start, key);
        } else {
          it->second = key;
        }
      }
      out.Emit(batch.records[i], ts);
    }
    return Status::Ok();
  }

  Status OnWatermark(TimestampMs wm, Output<T>&) override {
    if (wm > watermark_) watermark_ = wm;
    while (!extremes_.empty() && extremes_.begin()->first + size_ - 1 <= watermark_) {
      extremes_.erase(extremes_.begin());
    }
    return Status::Ok();
  }

  uint64_t dropped() const { return dropped_; }
  size_t windows() const { return extremes_.size(); }

 private:
  DurationMs size_;
  bool max_;
  KeyFn key_;
  TimestampMs watermark_ = kMinWatermark;
  std::map<TimestampMs, Key> extremes_;  // window start -> highest (lowest) key on time
  uint64_t dropped_ = 0;
};

}  // namespace flow::rt
