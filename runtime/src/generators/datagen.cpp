#include "flow/runtime/generators/datagen.h"

#include <cmath>

#include <fmt/format.h>

namespace flow::rt {

namespace {

// SplitMix64's finalizer: a bijective mix with good avalanche, so nearby indices and seeds give
// unrelated streams.
uint64_t Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ULL;
// Separates the timestamp-disorder stream from the field stream of the same record.
constexpr uint64_t kDisorderSalt = 0x7469636b74696d65ULL;

uint64_t RecordSeed(uint64_t seed, int64_t index, uint64_t salt) {
  return Mix(Mix(seed ^ salt) + static_cast<uint64_t>(index) * kGolden);
}

TimestampMs DisorderedTimestamp(const DatagenConfig& config, int64_t index) {
  TimestampMs ts = DatagenIdealTimestamp(config, index);
  if (config.disorder > 0) {
    const uint64_t span = static_cast<uint64_t>(config.disorder) + 1;
    ts -= static_cast<int64_t>(RecordSeed(config.seed, index, kDisorderSalt) % span);
  }
  return ts;
}

}  // namespace

Status DatagenConfig::Validate() const {
  if (count < 0) {
    return Status::InvalidArgument(
        fmt::format("datagen: count must be >= 0 (0 = unbounded), got {}", count));
  }
  if (!(rate > 0) || !std::isfinite(rate)) {
    return Status::InvalidArgument(fmt::format("datagen: rate must be > 0 (got {})", rate));
  }
  if (disorder < 0) {
    return Status::InvalidArgument(
        fmt::format("datagen: disorder must be >= 0 (got {}ms)", disorder));
  }
  if (cardinality <= 0) {
    return Status::InvalidArgument(
        fmt::format("datagen: cardinality must be > 0 (got {})", cardinality));
  }
  if (max_int <= 0) {
    return Status::InvalidArgument(fmt::format("datagen: max must be > 0 (got {})", max_int));
  }
  if (!(null_probability >= 0.0 && null_probability <= 1.0)) {
    return Status::InvalidArgument(
        fmt::format("datagen: nulls must be in [0, 1] (got {})", null_probability));
  }
  if (max_list_length < 0) {
    return Status::InvalidArgument(
        fmt::format("datagen: max_list_length must be >= 0 (got {})", max_list_length));
  }
  return Status::Ok();
}

TimestampMs DatagenIdealTimestamp(const DatagenConfig& config, int64_t index) {
  return config.base_time +
         static_cast<int64_t>(std::floor(static_cast<double>(index) * 1000.0 / config.rate));
}

DatagenRng::DatagenRng(const DatagenConfig& config, int64_t index)
    : DatagenRng(config, index, true) {}

DatagenRng::DatagenRng(uint64_t seed, int64_t index)
    : DatagenRng(
          [seed] {
            DatagenConfig c;
            c.seed = seed;
            return c;
          }(),
          index, true) {}

DatagenRng::DatagenRng(const DatagenConfig& config, int64_t index, bool)
    : state_(RecordSeed(config.seed, index, 0)),
      index_(index),
      timestamp_(DisorderedTimestamp(config, index)),
      max_int_(config.max_int),
      cardinality_(config.cardinality),
      max_list_length_(config.max_list_length),
      null_probability_(config.null_probability) {}

uint64_t DatagenRng::NextU64() {
  state_ += kGolden;
  return Mix(state_);
}

int64_t DatagenRng::NextInt(int64_t lo, int64_t hi) {
  assert(lo <= hi && "DatagenRng::NextInt: lo > hi");
  const uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;
  if (range == 0) return static_cast<int64_t>(NextU64());  // the full 64-bit range
  // Rejection sampling: drop the top partial block so every value is equally likely.
  const uint64_t limit = UINT64_MAX - (UINT64_MAX % range + 1) % range;
  uint64_t x = NextU64();
  while (x > limit) x = NextU64();
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + x % range);
}

double DatagenRng::NextFloat(double lo, double hi) {
  assert(lo <= hi && "DatagenRng::NextFloat: lo > hi");
  const double unit = static_cast<double>(NextU64() >> 11) * 0x1.0p-53;  // [0, 1)
  const double v = lo + (hi - lo) * unit;
  return v < hi ? v : lo;  // rounding must not reach hi
}

bool DatagenRng::NextBool(double p_true) {
  return static_cast<double>(NextU64() >> 11) * 0x1.0p-53 < p_true;
}

std::string DatagenRng::NextString(size_t len) {
  std::string s;
  NextString(len, &s);
  return s;
}

void DatagenRng::NextString(size_t len, std::string* out) {
  out->resize(len);
  uint64_t bits = 0;
  int left = 0;
  for (size_t i = 0; i < len; ++i) {
    if (left == 0) {
      bits = NextU64();
      left = 12;  // 12 letters of 5 bits each from one draw (26 of 32 values accepted)
    }
    uint64_t v = bits & 31;
    bits >>= 5;
    --left;
    while (v >= 26) {  // rejection keeps letters uniform
      if (left == 0) {
        bits = NextU64();
        left = 12;
      }
      v = bits & 31;
      bits >>= 5;
      --left;
    }
    (*out)[i] = static_cast<char>('a' + v);
  }
}

std::string DatagenRng::VocabString(std::string_view field) {
  const int64_t k = NextInt(0, cardinality_ - 1);
  std::string s;
  s.reserve(field.size() + 8);
  s.append(field);
  s += '-';
  s += std::to_string(k);
  return s;
}

Result<DatagenSlice> DatagenSlice::Create(const DatagenConfig& config, uint32_t subtask,
                                          uint32_t parallelism) {
  FLOW_RETURN_IF_ERROR(config.Validate());
  if (parallelism == 0 || subtask >= parallelism) {
    return Status::InvalidArgument(fmt::format(
        "datagen: subtask {} is not in 0..parallelism-1 (parallelism {})", subtask, parallelism));
  }
  return DatagenSlice(config, subtask, parallelism);
}

DatagenRng DatagenSlice::Next() {
  DatagenRng rng(config_, next_index_);
  next_index_ += parallelism_;
  return rng;
}

TimestampMs DatagenSlice::CurrentWatermark() const {
  // Ideal timestamps never decrease, and disorder moves a record back by at most `disorder`.
  return DatagenIdealTimestamp(config_, next_index_) - config_.disorder;
}

Status DatagenSlice::Seek(int64_t consumed) {
  if (consumed < 0) {
    return Status::InvalidArgument(fmt::format("datagen: cannot seek to position {}", consumed));
  }
  next_index_ = subtask_ + consumed * parallelism_;
  return Status::Ok();
}

void DatagenSlice::SnapshotPosition(BinaryWriter* out) const {
  out->PutI64(subtask_);
  out->PutI64(parallelism_);
  out->PutI64(consumed());
}

Status DatagenSlice::RestorePosition(BinaryReader* in) {
  int64_t subtask = 0;
  int64_t parallelism = 0;
  int64_t consumed = 0;
  FLOW_RETURN_IF_ERROR(in->GetI64(&subtask));
  FLOW_RETURN_IF_ERROR(in->GetI64(&parallelism));
  FLOW_RETURN_IF_ERROR(in->GetI64(&consumed));
  if (subtask != subtask_ || parallelism != parallelism_) {
    return Status::InvalidArgument(
        fmt::format("datagen: the snapshot is of subtask {} of {}, this slice is subtask {} of {} "
                    "(a generator source cannot be restored at another parallelism)",
                    subtask, parallelism, subtask_, parallelism_));
  }
  return Seek(consumed);
}

}  // namespace flow::rt
