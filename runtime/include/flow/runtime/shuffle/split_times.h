#pragma once
// SplitTimes: what each source subtask of a running job last knew of the event time of the splits
// (Kafka partitions) it reads, for the writers of repartition topics (docs/exactly-once.md,
// "Progress from the writers"). A writer reports, per input partition, the lower of that
// partition's watermark and the watermark that reached the writer in-band: the first says how far
// the partition is (a partition gained from another instance starts low, not at the subtask's
// watermark); the second that every record below it was written already.
//
// Source tasks Publish at each watermark interval; writers Get by (source, subtask), the source
// subtask of their own index (the cut keeps a writer on its sources' forward path).
// Threading: any thread; one lock, a copy per call (a few splits, every 200 ms).

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "flow/runtime/common/time.h"

namespace flow::rt::shuffle {

struct SplitTime {
  int32_t split = 0;
  // Of this split alone. kMinWatermark: nothing known; kMaxWatermark: caught up without a record,
  // so only the subtask's own watermark bounds it.
  TimestampMs watermark = kMinWatermark;
  bool idle = false;
  bool operator==(const SplitTime&) const = default;
};

struct SourceSplits {
  uint32_t total = 0;               // splits of the source's input (the topic's partitions)
  std::vector<SplitTime> splits{};  // those this subtask reads, by split
  bool operator==(const SourceSplits&) const = default;
};

class SplitTimes {
 public:
  void Publish(const std::string& source, uint32_t subtask, SourceSplits splits) {
    std::lock_guard<std::mutex> lock(mu_);
    by_subtask_[{source, subtask}] = std::move(splits);
  }
  std::optional<SourceSplits> Get(const std::string& source, uint32_t subtask) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = by_subtask_.find({source, subtask});
    if (it == by_subtask_.end()) return std::nullopt;
    return it->second;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::pair<std::string, uint32_t>, SourceSplits> by_subtask_;
};

}  // namespace flow::rt::shuffle
