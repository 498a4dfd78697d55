#pragma once
// Typed sources. A SourceFunction is pulled by its source task; one instance per subtask.
// Ready-made: VectorSource (tests), GeneratorSource (datagen-style lambdas); the RawSource adapter
// is in raw_adapters.h.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "flow/runtime/common/serde.h"
#include "flow/runtime/common/status.h"
#include "flow/runtime/connectors/connector.h"
#include "flow/runtime/engine/batch.h"
#include "flow/runtime/engine/operator.h"
#include "flow/runtime/shuffle/split_times.h"

namespace flow::rt {

// What a source that knows its own event time reports (SourceFunction::EventTime).
struct SourceEventTime {
  TimestampMs watermark = kMinWatermark;  // may only grow; the task never emits a lower one
  bool idle = false;                      // nothing will arrive until further notice
};

// What a source does apart from producing records: the source task's loop works on this part
// alone (engine/source_task.cpp), so that it is compiled once, not for every record type.
// Threading: used by one task thread. Errors end the job (exit 1) unless the source handles them.
class SourceFunctionBase {
 public:
  virtual ~SourceFunctionBase() = default;
  [[nodiscard]] virtual Status Open(OperatorContext& ctx) { return Status::Ok(); }
  // For sources with several splits (Kafka partitions, files): the split id of each record the
  // last PollBatch appended, in order; nullptr when the source has a single split.
  virtual const std::vector<int32_t>* LastSplits() const { return nullptr; }
  // True while a split has not been heard from since Open (RawSource::SplitsPending): the task
  // holds its event-time watermark meanwhile. Default: false.
  virtual bool SplitsPending() const { return false; }
  // A source whose event time is not its records' (a repartition topic carries its writers'
  // watermarks, engine/repartition.h) returns it here; the task then emits that watermark and
  // idleness instead of its WatermarkSpec's, and restores none of its own (the source restores
  // it with its position). Asked after each poll and at each checkpoint. Default: nullopt.
  virtual std::optional<SourceEventTime> EventTime() const { return std::nullopt; }
  // RawSource::OwnedSplits: the splits this subtask reads and how many the input has. The task
  // publishes their event times for writers of repartition topics. Default: nullopt.
  virtual std::optional<std::pair<uint32_t, std::vector<int32_t>>> OwnedSplits() const {
    return std::nullopt;
  }
  // A source whose EventTime is its own and whose records feed a keyed operator by key group (a
  // repartition reader): the key groups of the partitions this subtask reads, each at its
  // partition's event time, for the writer of a further repartition topic behind that operator
  // (shuffle/split_times.h). Asked right after EventTime, with the idleness it gave. Default:
  // nullopt (nothing to publish).
  virtual std::optional<shuffle::SourceSplits> KeyGroupTimes(bool idle) const {
    return std::nullopt;
  }
  // Checkpoint `checkpoint_id` is taken at this point of the stream: called right before its
  // SnapshotPosition. Default: nothing.
  [[nodiscard]] virtual Status OnCheckpoint(int64_t checkpoint_id) { return Status::Ok(); }
  [[nodiscard]] virtual Status SnapshotPosition(BinaryWriter* out) const { return Status::Ok(); }
  [[nodiscard]] virtual Status RestorePosition(BinaryReader* in) { return Status::Ok(); }
  // Checkpoint `checkpoint_id` completed (its exactly-once output committed), heard between two
  // polls; ids only grow, some may be skipped. An error fails the job. Default: nothing.
  [[nodiscard]] virtual Status OnCheckpointComplete(int64_t checkpoint_id) { return Status::Ok(); }
  // Restoring a checkpoint taken at `old_parallelism` (!= this run's): `old` holds every old
  // subtask's position; the source takes the splits it owns now, so that across all new subtasks
  // every split position is restored exactly once. Called after Open, before the first poll.
  // Default: InvalidArgument (the source cannot be rescaled).
  [[nodiscard]] virtual Status RestoreRescaled(const std::vector<OldSourcePosition>& old,
                                               uint32_t old_parallelism) {
    return Status::InvalidArgument("this source cannot restore positions taken at parallelism " +
                                   std::to_string(old_parallelism) + " into another parallelism");
  }
  [[nodiscard]] virtual Status Close() { return Status::Ok(); }
};

template <typename T>
class SourceFunction : public SourceFunctionBase {
 public:
  // Appends up to `max` records with their event timestamps (kNoEventTime when unknown) to
  // `out`. kIdle: nothing now (the call may wait up to ~100 ms first, never indefinitely);
  // kEnd: bounded input exhausted (records appended in this call still count).
  [[nodiscard]] virtual Result<PollResult> PollBatch(Batch<T>& out, size_t max) = 0;
};

template <typename T>
using SourceFactory =
    std::function<std::unique_ptr<SourceFunction<T>>(uint32_t subtask, uint32_t parallelism)>;

// Emits a fixed list of records. Subtask s of p emits the records whose index i has i % p == s,
// in order; `max_per_poll` limits batch sizes (handy to interleave with watermarks in tests).
template <typename T>
class VectorSource final : public SourceFunction<T> {
 public:
  VectorSource(std::shared_ptr<const std::vector<T>> records,
               std::shared_ptr<const std::vector<TimestampMs>> timestamps, uint32_t subtask,
               uint32_t parallelism, size_t max_per_poll)
      : records_(std::move(records)),
        timestamps_(std::move(timestamps)),
        next_(subtask),
        step_(parallelism),
        max_per_poll_(max_per_poll) {}

  Result<PollResult> PollBatch(Batch<T>& out, size_t max) override {
    size_t limit = std::min(max, max_per_poll_);
    for (size_t n = 0; n < limit && next_ < records_->size(); ++n, next_ += step_) {
      out.Add((*records_)[next_], timestamps_ ? (*timestamps_)[next_] : kNoEventTime);
    }
    return next_ < records_->size() ? PollResult::kRecords : PollResult::kEnd;
  }
  Status SnapshotPosition(BinaryWriter* out) const override {
    out->PutU64(next_);
    return Status::Ok();
  }
  Status RestorePosition(BinaryReader* in) override {
    uint64_t v;
    FLOW_RETURN_IF_ERROR(in->GetU64(&v));
    next_ = v;
    return Status::Ok();
  }

 private:
  std::shared_ptr<const std::vector<T>> records_;
  std::shared_ptr<const std::vector<TimestampMs>> timestamps_;
  size_t next_;
  size_t step_;
  size_t max_per_poll_;
};

// timestamps may be empty (records then have kNoEventTime) or one per record.
template <typename T>
SourceFactory<T> VectorSourceFactory(std::vector<T> records,
                                     std::vector<TimestampMs> timestamps = {},
                                     size_t max_per_poll = SIZE_MAX) {
  auto r = std::make_shared<const std::vector<T>>(std::move(records));
  std::shared_ptr<const std::vector<TimestampMs>> ts;
  if (!timestamps.empty())
    ts = std::make_shared<const std::vector<TimestampMs>>(std::move(timestamps));
  return [r, ts, max_per_poll](uint32_t subtask, uint32_t parallelism) {
    return std::make_unique<VectorSource<T>>(r, ts, subtask, parallelism, max_per_poll);
  };
}

// gen: bool(uint64_t index, T* out) or bool(uint64_t index, T* out, TimestampMs* ts). Subtask s of
// p generates indices s, s+p, s+2p, ...; gen returns false when the stream ends at that index
// (bounded) — it must then return false for every larger index too. *ts defaults to kNoEventTime.
template <typename T, typename Gen>
class GeneratorSource final : public SourceFunction<T> {
 public:
  GeneratorSource(Gen gen, uint32_t subtask, uint32_t parallelism)
      : gen_(std::move(gen)), next_(subtask), step_(parallelism) {}

  Result<PollResult> PollBatch(Batch<T>& out, size_t max) override {
    for (size_t n = 0; n < max; ++n) {
      T record{};
      TimestampMs ts = kNoEventTime;
      bool more;
      if constexpr (std::is_invocable_v<Gen&, uint64_t, T*, TimestampMs*>) {
        more = gen_(next_, &record, &ts);
      } else {
        more = gen_(next_, &record);
      }
      if (!more) return PollResult::kEnd;
      out.Add(std::move(record), ts);
      next_ += step_;
    }
    return PollResult::kRecords;
  }
  Status SnapshotPosition(BinaryWriter* out) const override {
    out->PutU64(next_);
    return Status::Ok();
  }
  Status RestorePosition(BinaryReader* in) override { return in->GetU64(&next_); }

 private:
  Gen gen_;
  uint64_t next_;
  uint64_t step_;
};

template <typename T, typename Gen>
SourceFactory<T> GeneratorSourceFactory(Gen gen) {
  return [gen](uint32_t subtask, uint32_t parallelism) {
    return std::make_unique<GeneratorSource<T, Gen>>(gen, subtask, parallelism);
  };
}

}  // namespace flow::rt
