#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "flow/runtime/checkpoint/recovery.h"
#include "flow/runtime/common/key_group.h"
#include "flow/runtime/connectors/kafka_instance.h"
#include "flow/runtime/engine/repartition.h"
#include "flow/runtime/log/log.h"

namespace flow::rt {

namespace {
constexpr int kPollTimeoutMs = 100;
constexpr uint32_t kPositionVersion = 1;
}  // namespace

Status CheckRepartitionOwners(std::string_view topic, std::string_view instance,
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

RepartitionReader::RepartitionReader(std::unique_ptr<KafkaSource> raw, RepartitionSourceSpec spec)
    : raw_(std::move(raw)), spec_(std::move(spec)) {}

Status RepartitionReader::Open(OperatorContext& ctx) {
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

Result<PollResult> RepartitionReader::Poll(size_t max) {
  raw_records_.clear();
  splits_.clear();
  auto r = raw_->Poll(&raw_records_, max, kPollTimeoutMs);
  if (!r.ok()) return r.status();
  FLOW_RETURN_IF_ERROR(CheckOwnership());
  int64_t bytes = 0;
  for (const RawRecord& rec : raw_records_) {
    bytes += static_cast<int64_t>(rec.payload.size() + rec.key.size());
  }
  bytes_in_->Add(bytes);
  // A repartition topic never ends: its writers run as long as the job.
  return *r == PollResult::kEnd ? PollResult::kIdle : *r;
}

Status RepartitionReader::Accept(const RawRecord& rec, bool any_input,
                                 std::optional<shuffle::Frame>* out) {
  out->reset();
  if (rec.partition < 0 || rec.partition >= spec_.partitions) {
    return Status::Corruption(
        fmt::format("{}: the topic has more partitions than the {} this job was built for",
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
  if (!any_input && frame->input() != spec_.input) {
    return Status::Corruption(
        fmt::format("{}: a record of input {} where this operator reads input {}", Where(rec),
                    frame->input(), spec_.input));
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
  *out = std::move(frame).value();
  return Status::Ok();
}

Status RepartitionReader::Decoded(const RawRecord& rec, const Status& decoded, size_t left) const {
  const std::string what =
      decoded.ok() ? fmt::format("{} bytes left after the record", left) : decoded.message();
  return Status::Corruption(fmt::format("{}: {}", Where(rec), what));
}

bool RepartitionReader::SplitsPending() const {
  return raw_->SplitsPending();
}

std::optional<SourceEventTime> RepartitionReader::EventTime() const {
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
std::optional<shuffle::SourceSplits> RepartitionReader::KeyGroupTimes(bool idle) const {
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

Status RepartitionReader::SnapshotPosition(BinaryWriter* out) const {
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

Status RepartitionReader::RestorePosition(BinaryReader* in) {
  FLOW_RETURN_IF_ERROR(raw_->RestorePosition(in));
  return ReadProgress(in, [this](int32_t partition, const std::string& bytes) {
    return ProgressOf(partition).Restore(bytes);
  });
}

Status RepartitionReader::OnCheckpoint(int64_t id) {
  FLOW_RETURN_IF_ERROR(raw_->OnCheckpoint(id));
  if (adoption_ != nullptr && subtask_ == 0) ReadNamedCheckpoints();
  return Status::Ok();
}

Status RepartitionReader::OnCheckpointComplete(int64_t id) {
  return raw_->OnCheckpointComplete(id);
}

Status RepartitionReader::Close() {
  // A run that ends before its first assignment (a stop right after its start): the keyed
  // operators waiting for it adopt nothing and end with their inputs, instead of waiting for a
  // cancel that a stop never sends. Nothing of this run commits: its sources have ended.
  if (adoption_ != nullptr && !published_) {
    adoption_->Publish(name_, subtask_, spec_.partitions, {});
    published_ = true;
  }
  return raw_->Close();
}

shuffle::PartitionProgress& RepartitionReader::ProgressOf(int32_t partition) {
  auto it = progress_.find(partition);
  if (it == progress_.end()) {
    it = progress_.emplace(partition, shuffle::PartitionProgress(spec_.upstream_sources)).first;
  }
  return it->second;
}

Status RepartitionReader::ReadProgress(
    BinaryReader* in, const std::function<Status(int32_t, const std::string&)>& each) const {
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

// Instances only (see repartition.h): before records of a newly assigned partition pass, the
// checkpoint its committed metadata names is this instance's own, or its state is adopted.
Status RepartitionReader::CheckOwnership() {
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
void RepartitionReader::ReadNamedCheckpoints() {
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
Status RepartitionReader::AdoptProgress(
    const std::map<int32_t, std::optional<StateOrigin>>& origins) {
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
      const int32_t want = partition;
      FLOW_RETURN_IF_ERROR(ReadProgress(&in, [&](int32_t p, const std::string& bytes) {
        return p == want ? ProgressOf(p).Restore(bytes) : Status::Ok();
      }));
    }
  }
  return Status::Ok();
}

}  // namespace flow::rt
