#pragma once
// Datagen: deterministic synthetic records for the `datagen` source. Generated code fills each
// field of a record from a DatagenRng made for the record's index:
//
//   auto slice = DatagenSlice::Create(config, subtask, parallelism);   // Result<DatagenSlice>
//   while (slice->HasNext()) {
//     DatagenRng rng = slice->Next();
//     rec.sensor = rng.VocabString("sensor");     // "sensor-0" .. "sensor-<cardinality-1>"
//     rec.level = rng.Int();                      // [0, max_int)
//     rec.quality = rng.NextFloat(0.0, 1.0);
//     rec.ts = rng.Timestamp();
//   }
//
// Record i is a pure function of (config, i): the same config gives the same records in every
// run, and subtask s of P generates the indices i with i % P == s, so the union over subtasks is
// the single-subtask sequence. Field values depend on the order fields are drawn in (the
// generated code draws them in schema order); Timestamp() does not depend on any draw.
//
// Timestamps: record i's event time is base_time + floor(i * 1000 / rate), moved back by a
// per-record amount uniform in [0, disorder] (bounded out-of-orderness: never more than
// `disorder` behind the largest timestamp generated before it).
//
// Threading: DatagenRng and DatagenSlice are small values used by one thread at a time.
// Errors: DatagenConfig::Validate / DatagenSlice::Create return InvalidArgument naming the bad
// argument; the Next* functions assert their preconditions (lo <= hi, non-empty vocabulary),
// which generated code guarantees.

#include <cassert>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "flow/runtime/common/serde.h"
#include "flow/runtime/common/status.h"
#include "flow/runtime/common/time.h"

namespace flow::rt {

// 2026-01-01T00:00:00Z.
inline constexpr TimestampMs kDatagenDefaultBaseTime = 1767225600000;

struct DatagenConfig {
  uint64_t seed = 0;   // Default: 0
  int64_t count = 0;   // records; 0 = unbounded. Default: 0
  double rate = 1000;  // records per second of event time. Default: 1000
  TimestampMs base_time = kDatagenDefaultBaseTime;
  DurationMs disorder = 0;        // max shift back of a timestamp. Default: 0
  int64_t cardinality = 100;      // distinct values per string field. Default: 100
  int64_t max_int = 1000;         // ints are uniform in [0, max_int). Default: 1000
  double null_probability = 0.1;  // share of nulls in nullable fields. Default: 0.1
  int64_t max_list_length = 3;    // lists have 0..max_list_length elements. Default: 3

  // InvalidArgument naming the first bad field, e.g. "datagen: rate must be > 0 (got 0)".
  [[nodiscard]] Status Validate() const;
};

class DatagenRng {
 public:
  // The generator of record `index` under `config` (config need not outlive the rng).
  DatagenRng(const DatagenConfig& config, int64_t index);
  // The same with DatagenConfig{} except the seed.
  DatagenRng(uint64_t seed, int64_t index);

  int64_t index() const { return index_; }

  uint64_t NextU64();
  // Uniform in [lo, hi], both inclusive. Requires lo <= hi.
  int64_t NextInt(int64_t lo, int64_t hi);
  // Uniform in [lo, hi). Requires lo <= hi.
  double NextFloat(double lo, double hi);
  // True with probability p_true.
  bool NextBool(double p_true = 0.5);
  // `len` lowercase letters a-z.
  std::string NextString(size_t len);
  void NextString(size_t len, std::string* out);
  // A uniformly chosen element. Requires a non-empty vocabulary.
  template <typename T>
  const T& Pick(std::span<const T> vocab) {
    assert(!vocab.empty() && "DatagenRng::Pick: empty vocabulary");
    return vocab[static_cast<size_t>(NextInt(0, static_cast<int64_t>(vocab.size()) - 1))];
  }

  // The per-type defaults of the datagen source, from the config:
  int64_t Int() { return NextInt(0, max_int_ - 1); }  // [0, max_int)
  std::string VocabString(std::string_view field);    // "<field>-<k>", k in [0, cardinality)
  bool IsNull() { return NextBool(null_probability_); }
  int64_t ListLength() { return NextInt(0, max_list_length_); }

  // This record's event time (see the header comment); the same however many values were drawn.
  TimestampMs Timestamp() const { return timestamp_; }

 private:
  DatagenRng(const DatagenConfig& config, int64_t index, bool);
  uint64_t state_;
  int64_t index_;
  TimestampMs timestamp_;
  int64_t max_int_;
  int64_t cardinality_;
  int64_t max_list_length_;
  double null_probability_;
};

// The untouched event time of record `index` (before disorder).
TimestampMs DatagenIdealTimestamp(const DatagenConfig& config, int64_t index);

class DatagenSlice {
 public:
  static Result<DatagenSlice> Create(const DatagenConfig& config, uint32_t subtask = 0,
                                     uint32_t parallelism = 1);

  bool HasNext() const { return config_.count == 0 || next_index_ < config_.count; }
  // The rng of the next record of the slice; advances. Requires HasNext().
  DatagenRng Next();
  // Lower bound of the timestamps of every record the slice has not returned yet.
  TimestampMs CurrentWatermark() const;
  int64_t next_index() const { return next_index_; }
  int64_t consumed() const { return (next_index_ - subtask_) / parallelism_; }
  [[nodiscard]] Status Seek(int64_t consumed);
  void SnapshotPosition(BinaryWriter* out) const;
  [[nodiscard]] Status RestorePosition(BinaryReader* in);

  const DatagenConfig& config() const { return config_; }

 private:
  DatagenSlice(const DatagenConfig& config, uint32_t subtask, uint32_t parallelism)
      : config_(config), subtask_(subtask), parallelism_(parallelism), next_index_(subtask) {}
  DatagenConfig config_;
  int64_t subtask_;
  int64_t parallelism_;
  int64_t next_index_;
};

}  // namespace flow::rt
