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
//   source's, and its bytes must decode to exactly one T; anything else is kCorruption naming
//   topic, partition and offset (these values are written by Flow only: a bad one means a bug or
//   a foreign writer, never data to skip);
// - progress reports feed one PartitionProgress per partition; the source supplies the task's
//   event time (SourceFunction::EventTime): the minimum over the partitions it reads that are
//   active, held at kMinWatermark while a partition has not been heard from or has no report yet;
//   when all are idle, the highest of theirs; it never goes back. A subtask whose assignment is
//   known and empty is idle.
// - positions: the KafkaSource's, then each partition's PartitionProgress (Snapshot format:
//   u32 version=1, u32 n, n x {i32 partition, string progress}).
// - instances (--instance): the state of a partition's keys does not follow the partition to
//   another instance yet. Before it passes on a record of a partition it was newly assigned, the
//   source reads the offset metadata its group committed for it (`<instance>/chk-<N>`): one that
//   names another instance fails the run with kFailedPrecondition (CheckRepartitionOwners). So
//   at most one instance ever commits a partition, and a committed checkpoint holds state of a
//   partition's keys only if its instance committed that partition (a record's offset commits
//   with the state it made): no instance restores state of partitions another one reads.
// Threading: one task thread.

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "flow/runtime/common/key_group.h"
#include "flow/runtime/connectors/kafka_instance.h"
#include "flow/runtime/connectors/kafka_source.h"
#include "flow/runtime/engine/raw_adapters.h"
#include "flow/runtime/engine/sink.h"
#include "flow/runtime/engine/source.h"
#include "flow/runtime/shuffle/partition_progress.h"
#include "flow/runtime/shuffle/repartition_frame.h"
#include "flow/runtime/shuffle/repartition_topic.h"
#include "flow/runtime/state/serializer.h"

namespace flow::rt {

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
        "instance's checkpoints; state does not move between instances yet, so instance {} cannot "
        "take it over. Keep the instances' membership stable (static names, no scale changes) or "
        "start the job over under a new --job-id (docs/deploy.md)",
        where, owner->instance, owner->checkpoint_id, instance));
  }
  return Status::Ok();
}

struct RepartitionSourceSpec {
  // The repartition topic and its partition count (RepartitionSinkOptions). Required.
  std::string topic;
  int32_t partitions = 0;
  uint32_t max_parallelism = kDefaultMaxParallelism;
  // The input this source reads (0, or 1 for a join's right side).
  int input = 0;
  // The upstream sources whose progress reports come through the topic (PartitionProgress).
  std::vector<std::string> upstream_sources;
};

template <typename T>
requires Serializable<T>
class RepartitionSource final : public SourceFunction<T> {
 public:
  RepartitionSource(std::unique_ptr<KafkaSource> raw, RepartitionSourceSpec spec)
      : raw_(std::move(raw)), spec_(std::move(spec)) {}

  Status Open(OperatorContext& ctx) override {
    FLOW_RETURN_IF_ERROR(
        shuffle::ValidateRepartitionPartitions(spec_.partitions, spec_.max_parallelism));
    bytes_in_ = ctx.metrics.Counter(kMetricBytesIn, "Bytes read by sources");
    instance_ = ctx.instance;
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
      FLOW_RETURN_IF_ERROR(ProgressOf(static_cast<int32_t>(partition)).Restore(bytes));
    }
    return Status::Ok();
  }
  Status OnCheckpoint(int64_t id) override { return raw_->OnCheckpoint(id); }
  Status OnCheckpointComplete(int64_t id) override { return raw_->OnCheckpointComplete(id); }
  Status Close() override { return raw_->Close(); }

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

  // Instances only (see the top): before records of a newly assigned partition pass, whoever
  // committed it last must be this instance (or nobody). A partition moving between subtasks of
  // one instance is fine: its keys' state is the keyed operator's, by key group.
  Status CheckOwnership() {
    if (instance_.empty() || !raw_->AssignmentKnown()) return Status::Ok();
    std::vector<int32_t> fresh;
    for (const auto& [partition, next] : raw_->positions()) {
      if (checked_.count(partition) == 0) fresh.push_back(partition);
    }
    if (fresh.empty()) return Status::Ok();
    auto committed = raw_->CommittedMetadata(fresh);
    if (!committed.ok()) return committed.status();
    FLOW_RETURN_IF_ERROR(CheckRepartitionOwners(spec_.topic, instance_, *committed));
    checked_.insert(fresh.begin(), fresh.end());
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
    if (frame->input() != spec_.input) {
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
    Status s = ReadValue(reader, &value);
    if (s.ok() && !reader.AtEnd()) {
      s = Status::Corruption(fmt::format("{} bytes left after the record", reader.remaining()));
    }
    if (!s.ok()) return Status::Corruption(fmt::format("{}: {}", Where(rec), s.message()));
    out.Add(std::move(value), frame->timestamp);
    splits_.push_back(rec.partition);
    return Status::Ok();
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
};

// A factory for Job::Source: one KafkaSource on spec.topic per subtask, with `options` (brokers,
// security, group settings; its topic is set here).
template <typename T>
requires Serializable<T> SourceFactory<T> RepartitionSourceFactory(KafkaSourceOptions options,
                                                                   RepartitionSourceSpec spec) {
  options.topic = spec.topic;
  return [options, spec](uint32_t, uint32_t) -> std::unique_ptr<SourceFunction<T>> {
    return std::make_unique<RepartitionSource<T>>(std::make_unique<KafkaSource>(options), spec);
  };
}

}  // namespace flow::rt
