#pragma once
// Watermarks: generation at sources (bounded out-of-orderness, per split, idleness) and
// min-combining of channel watermarks at operators with several input channels.
//
// Threading: both classes are used by one task thread; not thread-safe.

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "flow/runtime/common/serde.h"
#include "flow/runtime/common/status.h"
#include "flow/runtime/common/time.h"

namespace flow::rt {

enum class TimeMode {
  kEventTime,       // watermarks follow the records' event times
  kProcessingTime,  // records get the wall-clock time at ingestion; watermarks follow the clock
  kNone,            // no watermarks until end of input (kMaxWatermark)
};

struct WatermarkSpec {
  TimeMode mode = TimeMode::kEventTime;
  // Watermark = max event time seen - max_out_of_orderness - 1 ms (as Flink). Default: 0.
  DurationMs max_out_of_orderness = 0;
  // A split (or a whole source subtask) without records for this long stops holding back the
  // watermark until it gets data again. Default: 0 = never idle.
  DurationMs idle_timeout = 0;
  // How often the source task emits its watermark, checked at batch boundaries and when polls come
  // back empty. 0 = after every batch. Default: 200 ms.
  DurationMs interval = 200;
};

// Per source subtask. Splits are small integers (Kafka partition, file index); -1 for "the" split
// of a source with one split. Time arguments `now` are milliseconds of a monotonic or wall clock;
// only differences matter for idleness.
class WatermarkGenerator {
 public:
  WatermarkGenerator(const WatermarkSpec& spec, int64_t start_now);

  // One record with event time `ts` from `split`, seen at `now`.
  void OnRecord(TimestampMs ts, int32_t split, int64_t now);
  // The highest event time of a batch from one split (cheaper than per record).
  void OnMaxOfBatch(TimestampMs max_ts, int32_t split, int64_t now) {
    OnRecord(max_ts, split, now);
  }

  // The watermark the subtask may emit now (kMinWatermark when nothing is known). For
  // kProcessingTime this is `wall_now_ms - max_out_of_orderness - 1`.
  TimestampMs Current(int64_t now, TimestampMs wall_now_ms) const;
  // True when every split is idle (or the subtask never got a record within idle_timeout).
  bool IsIdle(int64_t now) const;
  // `split` alone: its watermark (its highest event time less the out-of-orderness) and whether
  // it is idle; nullopt when it never had a record. For writers of repartition topics, which
  // report event time per input partition (shuffle/split_times.h).
  std::optional<std::pair<TimestampMs, bool>> SplitWatermark(int32_t split, int64_t now) const;
  // Forgets every split not in `owned`: one that moved to another subtask or instance (restored
  // with the checkpoint, or read before a rebalance) would hold the watermark at its last value.
  void RetainSplits(const std::vector<int32_t>& owned);

  // Checkpoints carry the generator (docs/checkpoints.md, "Event time across a restore"), so a
  // restored source reaches again the watermark it had reached, even when no record follows.
  // `reached`: the watermark the subtask had reached at the checkpoint (the highest it emitted,
  // or the one it would emit next if higher).
  // Format: u32 version=1, i64 reached, u32 n, n x {i32 split, i64 max_ts, bool idle}.
  void Snapshot(TimestampMs reached, int64_t now, BinaryWriter* out) const;
  // Replaces the splits with the snapshot's; an idle split stays idle until it gets a record.
  // `*reached` = the snapshot's reached watermark. Corruption when the bytes do not decode.
  [[nodiscard]] Status Restore(std::string_view bytes, int64_t now, TimestampMs* reached);
  // The reached watermark recorded in a snapshot (for restores at another parallelism, where
  // splits move between subtasks and only a floor carries over).
  [[nodiscard]] static Result<TimestampMs> ReachedInSnapshot(std::string_view bytes);

 private:
  struct Split {
    int32_t id;
    TimestampMs max_ts;
    int64_t last_active;
  };
  bool SplitIdle(const Split& s, int64_t now) const;
  // max_ts less the out-of-orderness and 1 ms, saturating at kMinWatermark.
  TimestampMs Lowered(TimestampMs max_ts) const;

  WatermarkSpec spec_;
  int64_t start_now_;
  std::vector<Split> splits_;
  size_t last_split_ = 0;  // cache: consecutive records usually share a split
};

// Combines the watermarks of N input channels: output = min over channels that are neither idle
// nor ended (an ended channel counts as kMaxWatermark); when every open channel is idle, the max
// of their watermarks. The output only ever increases.
class WatermarkCombiner {
 public:
  explicit WatermarkCombiner(size_t channels);

  // Each call returns true when the combined watermark advanced; the new value is current().
  bool OnWatermark(size_t channel, TimestampMs wm);
  bool OnIdle(size_t channel, bool idle);
  bool OnEnd(size_t channel);

  TimestampMs current() const { return current_; }
  // True when no channel that has not ended is active (and at least one has not ended).
  bool AllIdle() const;
  bool AllEnded() const;

 private:
  bool Recompute();
  struct In {
    TimestampMs wm = kMinWatermark;
    bool idle = false;
    bool ended = false;
  };
  std::vector<In> in_;
  TimestampMs current_ = kMinWatermark;
};

}  // namespace flow::rt
