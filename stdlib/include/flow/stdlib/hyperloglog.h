#pragma once
// HyperLogLog distinct counting over 64-bit hashes: 2^14 one-byte registers, standard error about
// 0.8%. Small sketches keep only their set registers (4 bytes each, up to 4 KiB) and switch to the
// dense 16 KiB array when more are set, so many keys with few distinct values stay cheap. Estimates
// use Ertl's improved raw estimator
// ("New cardinality estimation algorithms for HyperLogLog sketches", 2017), which needs no
// empirical bias tables and is accurate from 0 to billions. Sketches merge by register-wise max,
// so Merge(a, b) equals a sketch that saw both inputs.
// Threading: not thread-safe; one instance per key/window, owned by one subtask.

#include <cstdint>
#include <vector>

#include "flow/runtime/common/serde.h"

namespace flow::agg {

class HyperLogLog {
 public:
  static constexpr int kPrecision = 14;
  static constexpr size_t kRegisters = size_t{1} << kPrecision;
  // The largest register value: leading zeros of the remaining 64 - p bits, plus one.
  static constexpr uint8_t kMaxRank = 64 - kPrecision + 1;

  void AddHash(uint64_t hash);
  void Merge(const HyperLogLog& other);
  // The estimated number of distinct hashes added (0 when empty).
  int64_t Estimate() const;
  bool empty() const { return sparse_.empty() && dense_.empty(); }
  // Bytes of register storage held (for state-size metrics and tests).
  size_t memory_bytes() const { return sparse_.capacity() * sizeof(uint32_t) + dense_.capacity(); }

  // Sparse (index, rank pairs) when few registers are set, else dense.
  void Serialize(rt::BinaryWriter& w) const;
  // Corruption if the data is short, of another precision, or has out-of-range registers.
  [[nodiscard]] rt::Status Deserialize(rt::BinaryReader& r);

 private:
  // Set registers while sparse: (index << 8 | rank), sorted by index. Past this many the sketch
  // turns dense.
  static constexpr size_t kSparseLimit = kRegisters / 16;

  void SetRegister(size_t index, uint8_t rank);
  void Densify();
  // Calls f(index, rank) for every set register in index order, whichever representation.
  template <typename F>
  void ForEachSet(F f) const {
    if (!dense_.empty()) {
      for (size_t i = 0; i < kRegisters; ++i) {
        if (dense_[i] != 0) f(i, dense_[i]);
      }
    } else {
      for (uint32_t e : sparse_) f(static_cast<size_t>(e >> 8), static_cast<uint8_t>(e & 0xff));
    }
  }

  std::vector<uint32_t> sparse_;
  std::vector<uint8_t> dense_;  // empty, or kRegisters entries
};

}  // namespace flow::agg
