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

#include <algorithm>
#include <cstdint>
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

#include <fmt/format.h>

#include "flow/runtime/checkpoint/recovery.h"
#include "flow/runtime/common/key_group.h"
#include "flow/runtime/connectors/kafka_instance.h"
#include "flow/runtime/connectors/kafka_source.h"
#include "flow/runtime/engine/raw_adapters.h"
#include "flow/runtime/engine/sink.h"
#include "flow/runtime/engine/source.h"
#include "flow/runtime/engine/state_adoption.h"
#include "flow/runtime/log/log.h"
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
[[nodiscard]] inline Status CheckRepartitionOwners(
    std::string_view topic, std::string_view instance,
    const std::map<int32_t, std::string>& committed) {
  for (const auto& [partition, metadata] : committed) {
    if (metadata.empty()) continue;
    const std::string where = fmt::format("repartition topic `{}` partition {}", topic, partition);
    auto owner = ParseKafkaInstanceOffsetMetadata(metadata, where);
    if (!owner.ok()) return owner.status();
    if (owner->instance == instance) continue;
    return Status::FailedPrecondition(fmt::format(
        "{}: instance {} committed it last (checkpoint {}), and the state of its keys is in that "
        "instance's checkpoints, which instance {} cannot read: give every instance --state-root "
        "on a directory all of them share, so that state follows its partition (docs/deploy.md)",
        where, owner->instance, owner->checkpoint_id, instance));
  }
  return Status::Ok();
}

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

template <typename T>
requires RepartitionReadable<T>
class RepartitionSource final : public SourceFunction<T> {
 public:
  RepartitionSource(std::unique_ptr<KafkaSource> raw, RepartitionSourceSpec spec)
      : raw_(std::move(raw)), spec_(std::move(spec)) {}

  Status Open(OperatorContext& ctx) override {
    FLOW_RETURN_IF_ERROR(
        shuffle::ValidateRepartitionPartitions(spec_.partitions, spec_.max_parallelism));
    bytes_in_ = ctx.metrics.Counter(kMetricBytesIn, "Bytes read by sources");
    instance_ = ctx.instance;
    name_ = ctx.name;
    subtask_ = ctx.subtask;
    adoption_ = ctx.adoption;
    published_ = false;
    raw_->Bind(ConnectorContextOf(ctx));
    return raw_->Open(ctx.subtask, ctx.parallelism);
  }

  Result<PollResult> PollBatch(Batch<T>& out, size_t max) override {
    raw_records_.clear();
    splits_.clear();
    auto r = raw_->Poll(&raw_records_, max, kPollTimeoutMs);
    if (!r.ok()) return r.status();
    FLOW_RETURN_IF_ERROR(CheckOwnership());
    int64_t bytes = 0;
    for (const RawRecord& rec : raw_records_) {
      bytes += static_cast<int64_t>(rec.payload.size() + rec.key.size());
      FLOW_RETURN_IF_ERROR(Accept(rec, out));
    }
    bytes_in_->Add(bytes);
    // A repartition topic never ends: its writers run as long as the job.
    return *r == PollResult::kEnd ? PollResult::kIdle : *r;
  }

  const std::vector<int32_t>* LastSplits() const override {
    return splits_.empty() ? nullptr : &splits_;
  }
  bool SplitsPending() const override { return raw_->SplitsPending(); }

  std::optional<SourceEventTime> EventTime() const override {
    SourceEventTime t{reached_, false};
    if (raw_->SplitsPending()) return t;
    if (raw_->positions().empty()) {
      // No partition of its own (more subtasks than partitions): idle, so that it holds no
      // operator downstream back. Until the assignment is known, none may mean "not yet".
      t.idle = raw_->AssignmentKnown();
      return t;
    }
    bool any_active = false, any_idle = false;
    TimestampMs active_min = kMaxWatermark, idle_max = kMinWatermark;
    for (const auto& [partition, next] : raw_->positions()) {
      auto it = progress_.find(partition);
      if (it == progress_.end()) return t;  // no report yet: its event time is unknown
      const shuffle::PartitionProgress& p = it->second;
      if (p.Idle() || p.Ended()) {
        any_idle = true;
        idle_max = std::max(idle_max, p.watermark());
      } else {
        any_active = true;
        active_min = std::min(active_min, p.watermark());
      }
    }
    const TimestampMs wm = any_active ? active_min : idle_max;
    reached_ = std::max(reached_, wm);
    t.watermark = reached_;
    t.idle = !any_active && any_idle;
    return t;
  }

  // For the writer of a second key-by behind this reader's keyed operator: the key groups of each
  // partition this subtask reads (once its ownership was checked), at the partition's event time
  // (kMinWatermark before its first report). Idle only when the whole subtask is, as a Kafka
  // source's splits (Task::PublishSplitTimes): an idle report outlives an instance that fails.
  std::optional<shuffle::SourceSplits> KeyGroupTimes(bool idle) const override {
    if (!raw_->AssignmentKnown()) return std::nullopt;
    shuffle::SourceSplits out;
    out.total = spec_.max_parallelism;
    for (uint32_t kg = 0; kg < spec_.max_parallelism; ++kg) {
      const int32_t partition =
          shuffle::PartitionOfKeyGroup(kg, spec_.max_parallelism, spec_.partitions);
      if (raw_->positions().count(partition) == 0) continue;
      if (!instance_.empty() && checked_.count(partition) == 0) continue;
      auto it = progress_.find(partition);
      const TimestampMs wm = it == progress_.end() ? kMinWatermark : it->second.watermark();
      out.splits.push_back(shuffle::SplitTime{static_cast<int32_t>(kg), wm, idle});
    }
    return out;
  }

  Status SnapshotPosition(BinaryWriter* out) const override {
    FLOW_RETURN_IF_ERROR(raw_->SnapshotPosition(out));
    out->PutU32(kPositionVersion);
    out->PutU32(static_cast<uint32_t>(progress_.size()));
    for (const auto& [partition, p] : progress_) {
      out->PutU32(static_cast<uint32_t>(partition));
      BinaryWriter bytes;
      p.Snapshot(&bytes);
      out->PutString(bytes.data());
    }
    return Status::Ok();
  }
  Status RestorePosition(BinaryReader* in) override {
    FLOW_RETURN_IF_ERROR(raw_->RestorePosition(in));
    return ReadProgress(in, [this](int32_t partition, const std::string& bytes) {
      return ProgressOf(partition).Restore(bytes);
    });
  }
  Status OnCheckpoint(int64_t id) override {
    FLOW_RETURN_IF_ERROR(raw_->OnCheckpoint(id));
    if (adoption_ != nullptr && subtask_ == 0) ReadNamedCheckpoints();
    return Status::Ok();
  }
  Status OnCheckpointComplete(int64_t id) override { return raw_->OnCheckpointComplete(id); }
  Status Close() override {
    // A run that ends before its first assignment (a stop right after its start): the keyed
    // operators waiting for it adopt nothing and end with their inputs, instead of waiting for a
    // cancel that a stop never sends. Nothing of this run commits: its sources have ended.
    if (adoption_ != nullptr && !published_) {
      adoption_->Publish(name_, subtask_, spec_.partitions, {});
      published_ = true;
    }
    return raw_->Close();
  }

 private:
  static constexpr int kPollTimeoutMs = 100;
  static constexpr uint32_t kPositionVersion = 1;

  shuffle::PartitionProgress& ProgressOf(int32_t partition) {
    auto it = progress_.find(partition);
    if (it == progress_.end()) {
      it = progress_.emplace(partition, shuffle::PartitionProgress(spec_.upstream_sources)).first;
    }
    return it->second;
  }

  // The progress part of a position (after the KafkaSource's): `each(partition, bytes)`.
  template <typename Each>
  Status ReadProgress(BinaryReader* in, Each each) const {
    uint32_t version = 0, n = 0;
    FLOW_RETURN_IF_ERROR(in->GetU32(&version));
    if (version != kPositionVersion) {
      return Status::Corruption(
          fmt::format("repartition source of `{}`: position version {}", spec_.topic, version));
    }
    FLOW_RETURN_IF_ERROR(in->GetU32(&n));
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t partition = 0;
      std::string bytes;
      FLOW_RETURN_IF_ERROR(in->GetU32(&partition));
      FLOW_RETURN_IF_ERROR(in->GetString(&bytes));
      if (partition >= static_cast<uint32_t>(spec_.partitions)) {
        return Status::Corruption(fmt::format(
            "repartition source of `{}`: the position has progress of partition {}, and the topic "
            "has {} partitions",
            spec_.topic, partition, spec_.partitions));
      }
      FLOW_RETURN_IF_ERROR(each(static_cast<int32_t>(partition), bytes));
    }
    return Status::Ok();
  }

  // Instances only (see the top): before records of a newly assigned partition pass, the
  // checkpoint its committed metadata names is this instance's own, or its state is adopted.
  Status CheckOwnership() {
    if (instance_.empty() || !raw_->AssignmentKnown()) return Status::Ok();
    std::vector<int32_t> fresh;
    for (const auto& [partition, next] : raw_->positions()) {
      if (checked_.count(partition) == 0) fresh.push_back(partition);
    }
    const bool publish = adoption_ != nullptr && !published_;
    if (fresh.empty() && !publish) return Status::Ok();
    std::map<int32_t, std::string> committed;
    if (!fresh.empty()) {
      auto read = raw_->CommittedMetadata(fresh);
      if (!read.ok()) return read.status();
      committed = std::move(read).value();
    }
    if (adoption_ == nullptr) {
      FLOW_RETURN_IF_ERROR(CheckRepartitionOwners(spec_.topic, instance_, committed));
      checked_.insert(fresh.begin(), fresh.end());
      return Status::Ok();
    }
    std::map<int32_t, std::optional<StateOrigin>> origins;
    for (const auto& [partition, metadata] : committed) {
      std::optional<StateOrigin>& origin = origins[partition];
      if (metadata.empty()) continue;
      auto owner = ParseKafkaInstanceOffsetMetadata(
          metadata, fmt::format("repartition topic `{}` partition {}", spec_.topic, partition));
      if (!owner.ok()) return owner.status();
      origin = StateOrigin{owner->instance, owner->checkpoint_id};
    }
    if (publish) {
      FLOW_RETURN_IF_ERROR(AdoptProgress(origins));
      adoption_->Publish(name_, subtask_, spec_.partitions, origins);
      published_ = true;
      checked_.insert(fresh.begin(), fresh.end());
      return Status::Ok();
    }
    for (const auto& [partition, origin] : origins) {
      if (!origin) continue;
      // Its keys' state must be in the keyed operator before its first record: a new run adopts.
      return Status::Reassigned(fmt::format(
          "repartition topic `{}` partition {} was given to instance {} with the state of its keys "
          "in instance {}'s checkpoint {}: restarting to adopt it",
          spec_.topic, partition, instance_, origin->instance, origin->checkpoint_id));
    }
    checked_.insert(fresh.begin(), fresh.end());
    return Status::Ok();
  }

  // Retention (state_adoption.h): which of this instance's checkpoints the topic's committed
  // offsets name now. Unknown when they cannot be read: retention then deletes nothing.
  // While reads fail (the brokers are down) they are paced (NamedReadPacing): one WARN per run of
  // failures, one INFO when a read works again.
  void ReadNamedCheckpoints() {
    const int64_t now = SteadyNowMs();
    if (!named_reads_.Due(now)) {
      adoption_->SetNamed(name_, std::nullopt);
      return;
    }
    auto committed = raw_->LastCommittedMetadata(spec_.partitions);
    if (!committed.ok()) {
      if (named_reads_.Failed(now) == 1) {
        Log(LogLevel::kWarn, "engine",
            "cannot read which checkpoints the repartition offsets name; keeping every checkpoint "
            "and retrying at most every 60 s",
            {{"topic", spec_.topic}, {"error", committed.status().ToString()}});
      }
      adoption_->SetNamed(name_, std::nullopt);
      return;
    }
    if (const uint32_t failed = named_reads_.Succeeded(); failed > 0) {
      Log(LogLevel::kInfo, "engine", "reads which checkpoints the repartition offsets name again",
          {{"topic", spec_.topic}, {"failed_reads", std::to_string(failed)}});
    }
    std::set<int64_t> named;
    for (const auto& [partition, metadata] : *committed) {
      if (metadata.empty()) continue;
      auto owner = ParseKafkaInstanceOffsetMetadata(metadata, spec_.topic);
      if (owner.ok() && owner->instance == instance_) named.insert(owner->checkpoint_id);
    }
    adoption_->SetNamed(name_, std::move(named));
  }

  // The run's first assignment: each partition's progress is the origin's, or starts empty.
  Status AdoptProgress(const std::map<int32_t, std::optional<StateOrigin>>& origins) {
    progress_.clear();
    for (const auto& [partition, origin] : origins) {
      if (!origin) continue;
      auto point = adoption_->Checkpoint(*origin);
      if (!point.ok()) {
        return Status(point.status().code(),
                      fmt::format("repartition topic `{}` partition {}: {}", spec_.topic, partition,
                                  point.status().message()));
      }
      for (const OperatorSnapshot* snap : SnapshotsOf((*point)->metadata, name_)) {
        if (snap->finished || snap->source_position.empty()) continue;
        BinaryReader in(snap->source_position);
        FLOW_RETURN_IF_ERROR(KafkaSource::SkipPosition(&in, spec_.topic));
        FLOW_RETURN_IF_ERROR(ReadProgress(&in, [&](int32_t p, const std::string& bytes) {
          return p == partition ? ProgressOf(p).Restore(bytes) : Status::Ok();
        }));
      }
    }
    return Status::Ok();
  }

  // Where `rec` was read, for errors only (the hot path formats nothing).
  std::string Where(const RawRecord& rec) const { return raw_->Locate(rec); }

  Status Accept(const RawRecord& rec, Batch<T>& out) {
    if (rec.partition < 0 || rec.partition >= spec_.partitions) {
      return Status::Corruption(
          fmt::format("{}: the topic has more partitions than the {} this "
                      "job was built for",
                      Where(rec), spec_.partitions));
    }
    auto frame = shuffle::DecodeFrame(rec.payload, spec_.topic);
    if (!frame.ok()) return shuffle::DecodeFrame(rec.payload, Where(rec)).status();
    if (frame->kind == shuffle::FrameKind::kProgress) {
      auto applied = ProgressOf(rec.partition).Apply(frame->progress);
      if (!applied.ok()) {
        return Status(applied.status().code(),
                      fmt::format("{}: progress of {}: {}", Where(rec), frame->progress.writer,
                                  applied.status().message()));
      }
      return Status::Ok();
    }
    if (!IsJoinInputOf<T>::value && frame->input() != spec_.input) {
      return Status::Corruption(
          fmt::format("{}: a record of input {} where this operator reads "
                      "input {}",
                      Where(rec), frame->input(), spec_.input));
    }
    auto hash = shuffle::DecodeRepartitionKey(rec.key, spec_.topic);
    if (!hash.ok()) return shuffle::DecodeRepartitionKey(rec.key, Where(rec)).status();
    const uint32_t kg = KeyGroupForHash(*hash, spec_.max_parallelism);
    const int32_t owner = shuffle::PartitionOfKeyGroup(kg, spec_.max_parallelism, spec_.partitions);
    if (owner != rec.partition) {
      return Status::Corruption(fmt::format(
          "{}: a record of key group {} belongs in partition {} (written with another partition "
          "count or max parallelism?)",
          Where(rec), kg, owner));
    }
    T value{};
    BinaryReader reader(frame->record);
    Status s = ReadRecord(frame->input(), reader, &value);
    if (s.ok() && !reader.AtEnd()) {
      s = Status::Corruption(fmt::format("{} bytes left after the record", reader.remaining()));
    }
    if (!s.ok()) return Status::Corruption(fmt::format("{}: {}", Where(rec), s.message()));
    out.Add(std::move(value), frame->timestamp);
    splits_.push_back(rec.partition);
    return Status::Ok();
  }

  static Status ReadRecord(int input, BinaryReader& reader, T* value) {
    if constexpr (IsJoinInputOf<T>::value) {
      if (input == 0) return ReadValue(reader, &value->template emplace<0>());
      return ReadValue(reader, &value->template emplace<1>());
    } else {
      return ReadValue(reader, value);
    }
  }

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
