#pragma once
// Keys are hashed into a fixed number of key groups; a subtask owns a contiguous range of them.
// State is stored and snapshotted per key group, so a checkpoint taken at parallelism P can be
// restored at parallelism Q (rescaling) by handing out the same groups differently.

#include <cstdint>
#include <string_view>

namespace flow::rt {

// Default: 128 key groups, enough for parallelism up to 128. Fixed for a job's lifetime.
inline constexpr uint32_t kDefaultMaxParallelism = 128;

// A stable 64-bit hash (not std::hash, which may differ across builds): used for partitioning,
// so it must be identical in every process that restores a checkpoint.
uint64_t StableHash(std::string_view bytes);
uint64_t StableHash(int64_t value);
uint64_t StableHash(double value);
uint64_t StableHash(bool value);
uint64_t HashCombine(uint64_t seed, uint64_t value);

inline uint32_t KeyGroupForHash(uint64_t hash, uint32_t max_parallelism) {
  return static_cast<uint32_t>(hash % max_parallelism);
}

// The subtask (0..parallelism-1) that owns `key_group`: contiguous ranges, as in Flink.
inline uint32_t SubtaskForKeyGroup(uint32_t key_group, uint32_t max_parallelism,
                                   uint32_t parallelism) {
  return static_cast<uint32_t>(static_cast<uint64_t>(key_group) * parallelism / max_parallelism);
}

}  // namespace flow::rt
