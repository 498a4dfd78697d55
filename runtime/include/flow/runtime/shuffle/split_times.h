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
// A repartition reader publishes too, with key groups as its splits (a second key-by: the writer
// behind the reader's keyed operator reads All of its subtasks and keeps its own key groups).
// Threading: any thread; one lock, a copy per call (a few splits, every 200 ms).

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "flow/runtime/common/key_group.h"
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
  // What every subtask of `source` that published has published, by subtask.
  std::vector<SourceSplits> All(const std::string& source) const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<SourceSplits> all;
    for (auto it = by_subtask_.lower_bound({source, 0});
         it != by_subtask_.end() && it->first.first == source; ++it) {
      all.push_back(it->second);
    }
    return all;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::pair<std::string, uint32_t>, SourceSplits> by_subtask_;
};

// The key groups `published` (every subtask of one repartition reader, each with key groups as
// its splits) that subtask `subtask` of a keyed operator at `parallelism` owns
// (SubtaskForKeyGroup), by key group; a key group published twice (never, while subtasks read
// disjoint partitions) keeps its lower watermark and is idle only if both say so.
inline std::vector<SplitTime> KeyGroupsOfSubtask(const std::vector<SourceSplits>& published,
                                                 uint32_t max_parallelism, uint32_t subtask,
                                                 uint32_t parallelism) {
  std::map<int32_t, SplitTime> mine;
  for (const SourceSplits& s : published) {
    for (const SplitTime& t : s.splits) {
      if (t.split < 0 || static_cast<uint32_t>(t.split) >= max_parallelism ||
          SubtaskForKeyGroup(static_cast<uint32_t>(t.split), max_parallelism, parallelism) !=
              subtask) {
        continue;
      }
      auto [it, fresh] = mine.emplace(t.split, t);
      if (!fresh) {
        it->second.watermark = std::min(it->second.watermark, t.watermark);
        it->second.idle = it->second.idle && t.idle;
      }
    }
  }
  std::vector<SplitTime> out;
  out.reserve(mine.size());
  for (const auto& [kg, t] : mine) out.push_back(t);
  return out;
}

}  // namespace flow::rt::shuffle
