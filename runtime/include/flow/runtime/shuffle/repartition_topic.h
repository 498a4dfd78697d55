#pragma once
// Where a record of a scaled-out job goes when it crosses a key-by between instances
// (docs/deploy.md, "Shuffles through Kafka"): the repartition topic's name, its partition count,
// the partition of a key, and the Kafka key of a record.
//
// A keyed operator's input is cut into one topic, `__flow_repartition_<job id>.<operator>`. Its
// partitions play the part of the operator's subtasks across every instance: partition p holds
// the key groups a subtask p of a job at parallelism `partitions` would own (contiguous ranges,
// SubtaskForKeyGroup). So the state of a partition is a set of whole key groups, and moving a
// partition to another instance moves exactly those key groups' state (docs/exactly-once.md).
// The count is fixed when the topic is created: adding partitions later would move keys to
// another partition while their state stays behind, so a topic with another count is refused.
//
// A record's Kafka key is its key hash (StableHash of the key, 8 bytes little-endian): the
// reader routes it to its local subtask by key group without decoding the record, and checks
// that the key group belongs to the partition it came from.

#include <cstdint>
#include <string>
#include <string_view>

#include "flow/runtime/common/key_group.h"
#include "flow/runtime/common/status.h"

namespace flow::rt::shuffle {

// Kafka's longest topic name.
inline constexpr size_t kMaxTopicName = 249;
inline constexpr size_t kRepartitionKeyBytes = 8;

// "__flow_repartition_<job id>.": what every repartition topic of the job starts with.
std::string RepartitionTopicPrefix(std::string_view job_id);
// "__flow_repartition_<job id>.<operator>". kInvalidArgument when the operator's name has a
// character a topic name cannot have ([A-Za-z0-9._-] only) or the name is longer than Kafka
// allows, naming the operator and what to change.
[[nodiscard]] Result<std::string> RepartitionTopicName(std::string_view job_id,
                                                       std::string_view op);

// kInvalidArgument unless 1 <= partitions <= max_parallelism (a partition with no key group
// would never receive a record, and its readers would hold event time back for nothing).
[[nodiscard]] Status ValidateRepartitionPartitions(int32_t partitions, uint32_t max_parallelism);

// The partition whose key-group range holds `key_group`.
inline int32_t PartitionOfKeyGroup(uint32_t key_group, uint32_t max_parallelism,
                                   int32_t partitions) {
  return static_cast<int32_t>(
      SubtaskForKeyGroup(key_group, max_parallelism, static_cast<uint32_t>(partitions)));
}

inline int32_t PartitionOfHash(uint64_t key_hash, uint32_t max_parallelism, int32_t partitions) {
  return PartitionOfKeyGroup(KeyGroupForHash(key_hash, max_parallelism), max_parallelism,
                             partitions);
}

// The Kafka key of a record whose key hashes to `key_hash`.
std::string EncodeRepartitionKey(uint64_t key_hash);
// kCorruption naming `where` unless `key` is exactly kRepartitionKeyBytes long.
[[nodiscard]] Result<uint64_t> DecodeRepartitionKey(std::string_view key, std::string_view where);

}  // namespace flow::rt::shuffle
