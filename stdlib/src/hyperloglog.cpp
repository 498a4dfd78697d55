#include "flow/stdlib/hyperloglog.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace flow::agg {
namespace {

constexpr uint8_t kEmpty = 0;
constexpr uint8_t kSparse = 1;
constexpr uint8_t kDense = 2;
constexpr uint8_t kTag = 'H';

// sigma and tau from Ertl (2017), computed by their converging series.
double Sigma(double x) {
  if (x == 1.0) return std::numeric_limits<double>::infinity();
  double y = 1.0;
  double z = x;
  double prev;
  do {
    x *= x;
    prev = z;
    z += x * y;
    y += y;
  } while (z != prev);
  return z;
}

double Tau(double x) {
  if (x == 0.0 || x == 1.0) return 0.0;
  double y = 1.0;
  double z = 1.0 - x;
  double prev;
  do {
    x = std::sqrt(x);
    prev = z;
    y *= 0.5;
    z -= (1.0 - x) * (1.0 - x) * y;
  } while (z != prev);
  return z / 3.0;
}

}  // namespace

void HyperLogLog::AddHash(uint64_t hash) {
  size_t index = static_cast<size_t>(hash >> (64 - kPrecision));
  uint64_t rest = hash << kPrecision;
  uint8_t rank = rest == 0 ? kMaxRank : static_cast<uint8_t>(__builtin_clzll(rest) + 1);
  SetRegister(index, rank);
}

void HyperLogLog::SetRegister(size_t index, uint8_t rank) {
  if (!dense_.empty()) {
    if (rank > dense_[index]) dense_[index] = rank;
    return;
  }
  uint32_t key = static_cast<uint32_t>(index) << 8;
  auto it = std::lower_bound(sparse_.begin(), sparse_.end(), key);
  if (it != sparse_.end() && (*it >> 8) == index) {
    if (rank > (*it & 0xff)) *it = key | rank;
    return;
  }
  sparse_.insert(it, key | rank);
  if (sparse_.size() > kSparseLimit) Densify();
}

void HyperLogLog::Densify() {
  std::vector<uint8_t> dense(kRegisters, 0);
  for (uint32_t e : sparse_) dense[e >> 8] = static_cast<uint8_t>(e & 0xff);
  dense_ = std::move(dense);
  sparse_ = std::vector<uint32_t>();  // release the memory, not just the size
}

void HyperLogLog::Merge(const HyperLogLog& other) {
  if (!other.dense_.empty() && dense_.empty()) Densify();
  other.ForEachSet([this](size_t index, uint8_t rank) { SetRegister(index, rank); });
}

int64_t HyperLogLog::Estimate() const {
  if (empty()) return 0;
  const double m = static_cast<double>(kRegisters);
  std::vector<double> histogram(kMaxRank + 1, 0.0);
  double set = 0;
  ForEachSet([&](size_t, uint8_t rank) {
    histogram[rank] += 1.0;
    set += 1.0;
  });
  histogram[0] = m - set;
  double z = m * Tau(1.0 - histogram[kMaxRank] / m);
  for (int k = kMaxRank - 1; k >= 1; --k) z = 0.5 * (z + histogram[k]);
  z += m * Sigma(histogram[0] / m);
  const double alpha_inf = 1.0 / (2.0 * std::log(2.0));
  return static_cast<int64_t>(std::llround(alpha_inf * m * m / z));
}

void HyperLogLog::Serialize(rt::BinaryWriter& w) const {
  w.PutU8(kTag);
  w.PutU8(kPrecision);
  if (empty()) {
    w.PutU8(kEmpty);
    return;
  }
  uint32_t set = 0;
  ForEachSet([&set](size_t, uint8_t) { ++set; });
  // A sparse entry takes 3 bytes (u16 index + rank), a dense register 1 byte.
  if (set * 3 < kRegisters) {
    w.PutU8(kSparse);
    w.PutU32(set);
    ForEachSet([&w](size_t index, uint8_t rank) {
      w.PutU8(static_cast<uint8_t>(index & 0xff));
      w.PutU8(static_cast<uint8_t>(index >> 8));
      w.PutU8(rank);
    });
  } else {
    w.PutU8(kDense);
    std::vector<uint8_t> regs(kRegisters, 0);
    ForEachSet([&regs](size_t index, uint8_t rank) { regs[index] = rank; });
    for (uint8_t r : regs) w.PutU8(r);
  }
}

rt::Status HyperLogLog::Deserialize(rt::BinaryReader& r) {
  auto corrupt = [](const std::string& what) {
    return rt::Status::Corruption("approx_distinct state: " + what);
  };
  uint8_t tag = 0, precision = 0, mode = 0;
  FLOW_RETURN_IF_ERROR(r.GetU8(&tag));
  if (tag != kTag) return corrupt("bad tag " + std::to_string(tag));
  FLOW_RETURN_IF_ERROR(r.GetU8(&precision));
  if (precision != kPrecision)
    return corrupt("precision " + std::to_string(precision) + ", expected 14");
  FLOW_RETURN_IF_ERROR(r.GetU8(&mode));
  HyperLogLog next;
  if (mode == kEmpty) {
    *this = std::move(next);
    return rt::Status::Ok();
  }
  if (mode == kSparse) {
    uint32_t n = 0;
    FLOW_RETURN_IF_ERROR(r.GetU32(&n));
    if (n > kRegisters) return corrupt(std::to_string(n) + " sparse registers");
    for (uint32_t i = 0; i < n; ++i) {
      uint8_t lo = 0, hi = 0, rank = 0;
      FLOW_RETURN_IF_ERROR(r.GetU8(&lo));
      FLOW_RETURN_IF_ERROR(r.GetU8(&hi));
      FLOW_RETURN_IF_ERROR(r.GetU8(&rank));
      size_t index = lo | (static_cast<size_t>(hi) << 8);
      if (index >= kRegisters || rank == 0 || rank > kMaxRank) {
        return corrupt("register " + std::to_string(index) + " = " + std::to_string(rank));
      }
      next.SetRegister(index, rank);
    }
  } else if (mode == kDense) {
    std::vector<uint8_t> regs(kRegisters, 0);
    for (size_t i = 0; i < kRegisters; ++i) {
      FLOW_RETURN_IF_ERROR(r.GetU8(&regs[i]));
      if (regs[i] > kMaxRank) {
        return corrupt("register " + std::to_string(i) + " = " + std::to_string(regs[i]));
      }
    }
    next.dense_ = std::move(regs);
  } else {
    return corrupt("unknown encoding " + std::to_string(mode));
  }
  *this = std::move(next);
  return rt::Status::Ok();
}

}  // namespace flow::agg
