#pragma once
// HyperLogLog distinct counting over 64-bit hashes: 2^14 one-byte registers (16 KiB, allocated on
// the first value), standard error about 0.8%. Estimates use Ertl's improved raw estimator
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
  bool empty() const { return registers_.empty(); }

  // Sparse (index, rank pairs) when few registers are set, else dense.
  void Serialize(rt::BinaryWriter& w) const;
  // Corruption if the data is short, of another precision, or has out-of-range registers.
  [[nodiscard]] rt::Status Deserialize(rt::BinaryReader& r);

 private:
  std::vector<uint8_t> registers_;  // empty, or kRegisters entries
};

}  // namespace flow::agg
