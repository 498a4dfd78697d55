#pragma once
// PartitionProgress: the event time of one repartition partition, from the progress reports in
// it (shuffle/repartition_frame.h).
//
// Each input partition of each upstream source keeps the highest watermark any writer reported
// for it (a partition that moves between instances is reported by its old and then its new
// owner; both values are lower bounds of what follows in it) and the idle and ended flags of the
// latest report. The partition's watermark is the minimum over every input partition that is
// neither idle nor ended; an input partition nobody reported yet holds it at kMinWatermark, so a
// writer that has not started yet can never make records late. When every open input partition
// is idle the watermark is the highest of theirs (as WatermarkCombiner does for channels), and
// it never goes back.
//
// This is state of the repartition partition, not of the instance that reads it: it is
// snapshotted with the partition and restored by whichever instance reads the partition next, so
// a new owner continues at the watermark the old one had reached instead of at kMinWatermark
// (which would re-fire windows). Threading: one task thread; not thread-safe.

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "flow/runtime/common/serde.h"
#include "flow/runtime/common/status.h"
#include "flow/runtime/common/time.h"
#include "flow/runtime/shuffle/repartition_frame.h"

namespace flow::rt::shuffle {

class PartitionProgress {
 public:
  // `sources`: the upstream sources whose records reach this topic, by operator name. Reports of
  // any other source are refused (instances built from different scripts).
  explicit PartitionProgress(std::vector<std::string> sources);

  // Applies one report. Returns true when watermark() advanced. kInvalidArgument for a source
  // this job does not have or a partition outside its topic.
  [[nodiscard]] Result<bool> Apply(const ProgressReport& report);

  TimestampMs watermark() const { return watermark_; }
  // Every input partition that has not ended is idle, and at least one has not ended.
  bool Idle() const;
  // Every input partition of every source has ended (bounded sources only).
  bool Ended() const;

  // Format: u32 version=1, i64 watermark, u32 sources, per source {string name, u32 partitions,
  // u32 n, n x {i32 partition, i64 watermark, u8 flags}}.
  void Snapshot(BinaryWriter* out) const;
  // Replaces everything with the snapshot's. kCorruption when it does not decode,
  // kInvalidArgument when it names a source this job does not have.
  [[nodiscard]] Status Restore(std::string_view bytes);

 private:
  struct Split {
    TimestampMs watermark = kMinWatermark;
    bool idle = false;
    bool ended = false;
  };
  struct Source {
    uint32_t partitions = 0;  // 0: never reported
    std::map<int32_t, Split> splits;
  };
  // One walk over every input partition; `complete` is false while a source or one of its
  // partitions was never reported (the partition's event time is unknown then).
  struct Summary {
    bool complete = false;
    bool any_open = false;    // a partition that has not ended
    bool any_active = false;  // ... and is not idle
    TimestampMs open_min = kMaxWatermark;
    TimestampMs idle_max = kMinWatermark;
  };
  Summary Summarize() const;
  // The value the watermark would have from the splits alone (before "never goes back").
  TimestampMs FromSplits() const;

  std::map<std::string, Source, std::less<>> sources_;
  TimestampMs watermark_ = kMinWatermark;
};

}  // namespace flow::rt::shuffle
