#pragma once
// The typed halves of a key-by between instances of a scaled-out job (docs/deploy.md, "Shuffles
// through Kafka"; the wire formats are shuffle/repartition_topic.h and shuffle/repartition_frame.h,
// the writing participant txn/repartition_sink.h).
//
// RepartitionEncode<T>(key_hash): the encoder of a repartition sink node. The Kafka key is the
// record's key hash, the payload its Serializer<T> bytes; the sink adds the frame header with the
// event time and input.
//
// RepartitionSource<T>: reads the partitions of a repartition topic its KafkaSource was given
// (by its consumer group under --instance, by subtask otherwise) and turns them back into records:
// - a record's key group must belong to the partition it came from, its input must be this
//   source's (a source of JoinInput<L, R> reads both sides of a join, shuffle_join.h), and its
//   bytes must decode to exactly one T; anything else is kCorruption naming topic, partition and
//   offset (these values are written by Flow only: a bad one means a bug or a foreign writer, never
//   data to skip);
// - progress reports feed one PartitionProgress per partition; the source supplies the task's
//   event time (SourceFunction::EventTime): the minimum over the partitions it reads that are
//   active, held at kMinWatermark while a partition has not been heard from or has no report yet;
//   when all are idle, the highest of theirs; it never goes back. A subtask whose assignment is
//   known and empty is idle.
// - positions: the KafkaSource's, then each partition's PartitionProgress (Snapshot format:
//   u32 version=1, u32 n, n x {i32 partition, string progress}).
// - instances (--instance): before it passes on a record of a partition it was newly assigned,
//   the source reads the offset metadata its group committed for it (`<instance>/chk-<N>`), the
//   checkpoint that holds the state of the partition's keys. With --state-root the run adopts it
//   (engine/state_adoption.h): the first assignment of a run is published with each partition's
//   origin, and each partition's progress is restored from the origin's snapshot of this source;
//   a partition with state that arrives later in the run ends it with kReassigned, and the
//   restart adopts it. Without --state-root, a partition another instance committed last fails
//   the run with kFailedPrecondition (CheckRepartitionOwners): its state cannot be read here.
// Threading: one task thread.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "flow/runtime/connectors/kafka_source.h"
#include "flow/runtime/engine/raw_adapters.h"
#include "flow/runtime/engine/sink.h"
#include "flow/runtime/engine/source.h"
#include "flow/runtime/engine/state_adoption.h"
#include "flow/runtime/shuffle/partition_progress.h"
#include "flow/runtime/shuffle/repartition_frame.h"
#include "flow/runtime/shuffle/repartition_topic.h"
#include "flow/runtime/state/serializer.h"

namespace flow::rt {

// The records of a topic that carries both sides of a join (shuffle_join.h): input 0's are L,
// input 1's R.
template <typename L, typename R>
using JoinInput = std::variant<L, R>;

template <typename T>
struct IsJoinInputOf : std::false_type {};
template <typename L, typename R>
struct IsJoinInputOf<std::variant<L, R>> : std::bool_constant<Serializable<L> && Serializable<R>> {
};

// What a RepartitionSource can decode: one input's records, or both sides of a join.
template <typename T>
concept RepartitionReadable = Serializable<T> || IsJoinInputOf<T>::value;

template <typename T, typename KeyHash>
requires Serializable<T> SinkEncode<T> RepartitionEncode(KeyHash key_hash) {
  return [key_hash](const T& r, std::string* key, std::string* payload, OutMeta*) {
    *key = shuffle::EncodeRepartitionKey(key_hash(r));
    BinaryWriter w;
    WriteValue(w, r);
    *payload = w.Release();
  };
}

// kFailedPrecondition naming the partition, its committed owner and `instance` when `committed`
// (partition -> offset metadata, "" = none committed) has a partition another instance committed
// last: its keys' state is in that instance's checkpoint. kCorruption for metadata Flow did not
// write. OK otherwise.
[[nodiscard]] Status CheckRepartitionOwners(std::string_view topic, std::string_view instance,
                                            const std::map<int32_t, std::string>& committed);

struct RepartitionSourceSpec {
  // The repartition topic and its partition count (RepartitionSinkOptions). Required.
  std::string topic;
  int32_t partitions = 0;
  uint32_t max_parallelism = kDefaultMaxParallelism;
  // The input this source reads (0, or 1 for a join's right side); a source of JoinInput<L, R>
  // reads both.
  int input = 0;
  // The upstream sources whose progress reports come through the topic (PartitionProgress).
  std::vector<std::string> upstream_sources;
};

// Everything a RepartitionSource does but decoding its records (engine/repartition_reader.cpp):
// the Kafka reads, frame and key-group checks, progress, event time, positions and ownership.
// Out of line because it does not depend on the record type: a job compiles only the decoding.
class RepartitionReader {
 public:
  RepartitionReader(std::unique_ptr<KafkaSource> raw, RepartitionSourceSpec spec);

  [[nodiscard]] Status Open(OperatorContext& ctx);
  // Reads up to `max` raw records (records()) and checks ownership; kEnd becomes kIdle.
  [[nodiscard]] Result<PollResult> Poll(size_t max);
  const std::vector<RawRecord>& records() const { return raw_records_; }
  // Checks one raw record. A progress report is applied (*frame stays empty); a record's frame,
  // checked against the partition, input and key group, goes to *frame for decoding.
  // `any_input`: the source reads both inputs of a join.
  [[nodiscard]] Status Accept(const RawRecord& rec, bool any_input,
                              std::optional<shuffle::Frame>* frame);
  // After a record of `rec` was decoded into the batch: its split.
  void Took(const RawRecord& rec) { splits_.push_back(rec.partition); }
  // `decoded` (the decoding's status, OK with `left` bytes after the record) as the source's
  // error: kCorruption naming topic, partition and offset.
  [[nodiscard]] Status Decoded(const RawRecord& rec, const Status& decoded, size_t left) const;

  const std::vector<int32_t>* LastSplits() const { return splits_.empty() ? nullptr : &splits_; }
  bool SplitsPending() const;
  std::optional<SourceEventTime> EventTime() const;
  std::optional<shuffle::SourceSplits> KeyGroupTimes(bool idle) const;
  [[nodiscard]] Status SnapshotPosition(BinaryWriter* out) const;
  [[nodiscard]] Status RestorePosition(BinaryReader* in);
  [[nodiscard]] Status OnCheckpoint(int64_t id);
  [[nodiscard]] Status OnCheckpointComplete(int64_t id);
  [[nodiscard]] Status Close();

 private:
  shuffle::PartitionProgress& ProgressOf(int32_t partition);
  // The progress part of a position (after the KafkaSource's): `each(partition, bytes)`.
  [[nodiscard]] Status ReadProgress(
      BinaryReader* in, const std::function<Status(int32_t, const std::string&)>& each) const;
  [[nodiscard]] Status CheckOwnership();
  void ReadNamedCheckpoints();
  [[nodiscard]] Status AdoptProgress(const std::map<int32_t, std::optional<StateOrigin>>& origins);
  // Where `rec` was read, for errors only (the hot path formats nothing).
  std::string Where(const RawRecord& rec) const { return raw_->Locate(rec); }

  std::unique_ptr<KafkaSource> raw_;
  RepartitionSourceSpec spec_;
  std::map<int32_t, shuffle::PartitionProgress> progress_;
  mutable TimestampMs reached_ = kMinWatermark;  // EventTime never goes back
  std::vector<RawRecord> raw_records_;
  std::vector<int32_t> splits_;
  Metric* bytes_in_ = nullptr;
  std::string instance_;       // "" = one process: no ownership checks
  std::set<int32_t> checked_;  // partitions whose last committer was checked
  std::string name_;
  uint32_t subtask_ = 0;
  StateAdoption* adoption_ = nullptr;  // --state-root: state follows partitions
  bool published_ = false;             // this run's first assignment went to adoption_
  NamedReadPacing named_reads_;        // subtask 0's retention reads (ReadNamedCheckpoints)
};

// The typed source: RepartitionReader's records decoded into T.
template <typename T>
requires RepartitionReadable<T>
class RepartitionSource final : public SourceFunction<T> {
 public:
  RepartitionSource(std::unique_ptr<KafkaSource> raw, RepartitionSourceSpec spec)
      : reader_(std::move(raw), std::move(spec)) {}

  Status Open(OperatorContext& ctx) override { return reader_.Open(ctx); }
  Result<PollResult> PollBatch(Batch<T>& out, size_t max) override {
    auto r = reader_.Poll(max);
    if (!r.ok()) return r.status();
    std::optional<shuffle::Frame> frame;
    for (const RawRecord& rec : reader_.records()) {
      FLOW_RETURN_IF_ERROR(reader_.Accept(rec, IsJoinInputOf<T>::value, &frame));
      if (!frame) continue;
      T value{};
      BinaryReader bytes(frame->record);
      Status s = ReadRecord(frame->input(), bytes, &value);
      if (!s.ok() || !bytes.AtEnd()) return reader_.Decoded(rec, s, bytes.remaining());
      out.Add(std::move(value), frame->timestamp);
      reader_.Took(rec);
    }
    return r;
  }
  const std::vector<int32_t>* LastSplits() const override { return reader_.LastSplits(); }
  bool SplitsPending() const override { return reader_.SplitsPending(); }
  std::optional<SourceEventTime> EventTime() const override { return reader_.EventTime(); }
  std::optional<shuffle::SourceSplits> KeyGroupTimes(bool idle) const override {
    return reader_.KeyGroupTimes(idle);
  }
  Status SnapshotPosition(BinaryWriter* out) const override {
    return reader_.SnapshotPosition(out);
  }
  Status RestorePosition(BinaryReader* in) override { return reader_.RestorePosition(in); }
  Status OnCheckpoint(int64_t id) override { return reader_.OnCheckpoint(id); }
  Status OnCheckpointComplete(int64_t id) override { return reader_.OnCheckpointComplete(id); }
  Status Close() override { return reader_.Close(); }

 private:
  static Status ReadRecord(int input, BinaryReader& reader, T* value) {
    if constexpr (IsJoinInputOf<T>::value) {
      if (input == 0) return ReadValue(reader, &value->template emplace<0>());
      return ReadValue(reader, &value->template emplace<1>());
    } else {
      return ReadValue(reader, value);
    }
  }

  RepartitionReader reader_;
};

// A factory for Job::Source: one KafkaSource on spec.topic per subtask, with `options` (brokers,
// security, group settings; its topic is set here).
template <typename T>
requires RepartitionReadable<T> SourceFactory<T> RepartitionSourceFactory(
    KafkaSourceOptions options, RepartitionSourceSpec spec) {
  options.topic = spec.topic;
  return [options, spec](uint32_t, uint32_t) -> std::unique_ptr<SourceFunction<T>> {
    return std::make_unique<RepartitionSource<T>>(std::make_unique<KafkaSource>(options), spec);
  };
}

}  // namespace flow::rt
