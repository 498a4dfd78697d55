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
// The integer forms are inline: every state access and key-by write hashes a key.
uint64_t StableHash(std::string_view bytes);
uint64_t StableHash(double value);

// 64-bit finalizer from MurmurHash3 (public domain algorithm): good avalanche for integer keys.
inline uint64_t MixHash(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}
inline uint64_t StableHash(int64_t value) {
  return MixHash(static_cast<uint64_t>(value));
}
inline uint64_t StableHash(bool value) {
  return MixHash(value ? 1 : 2);
}
inline uint64_t HashCombine(uint64_t seed, uint64_t value) {
  return MixHash(seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2)));
}

inline uint32_t KeyGroupForHash(uint64_t hash, uint32_t max_parallelism) {
  return static_cast<uint32_t>(hash % max_parallelism);
}

// The subtask (0..parallelism-1) that owns `key_group`: contiguous ranges, as in Flink.
inline uint32_t SubtaskForKeyGroup(uint32_t key_group, uint32_t max_parallelism,
                                   uint32_t parallelism) {
  return static_cast<uint32_t>(static_cast<uint64_t>(key_group) * parallelism / max_parallelism);
}

}  // namespace flow::rt
