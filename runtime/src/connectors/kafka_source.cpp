#include "flow/runtime/connectors/kafka_source.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "kafka_common.h"
#include "kafka_consumer_handle.h"
#include "kafka_start_offsets.h"

namespace flow::rt {
namespace {

constexpr uint8_t kPositionVersion = 1;
constexpr int kProbeTimeoutMs = 2000;

void DestroyPartitionList(rd_kafka_topic_partition_list_t* list) {
  if (list != nullptr) rd_kafka_topic_partition_list_destroy(list);
}

}  // namespace

KafkaSource::KafkaSource(KafkaSourceOptions options) : options_(std::move(options)) {
  if (options_.group_id.empty()) options_.group_id = "flow-" + options_.topic;
}

KafkaSource::~KafkaSource() {
  Close().IgnoreError();
}  // errors on teardown have no reader

void KafkaSource::OnError(rd_kafka_t*, int err, const char* reason, void* opaque) {
  // Served by rd_kafka_consume_batch_queue on the polling thread: no locking needed. A kept
  // member has no source, and nobody polls it.
  if (KafkaSource* self = static_cast<KafkaConsumerHandle*>(opaque)->source; self != nullptr)
    self->NoteError(err, reason);
}

void KafkaSource::NoteError(int err, const char* reason) {
  if (KafkaSecurityFailure(err, reason != nullptr ? reason : "") && security_err_ == 0) {
    security_err_ = err;
    security_reason_ = reason != nullptr ? reason : "";
  }
  if (err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN || err == RD_KAFKA_RESP_ERR__TRANSPORT) {
    if (down_since_ms_ < 0) down_since_ms_ = SteadyNowMs();
    down_reason_ = reason != nullptr ? reason : "";
  }
}

Status KafkaSource::Open(uint32_t subtask, uint32_t parallelism) {
  if (parallelism == 0 || subtask >= parallelism) {
    return Status::InvalidArgument(
        fmt::format("kafka source: subtask {} of parallelism {}", subtask, parallelism));
  }
  if (options_.brokers.empty()) return Status::InvalidArgument("kafka source: `brokers` is empty");
  if (options_.topic.empty()) return Status::InvalidArgument("kafka source: `topic` is empty");
  if (rk_ != nullptr) return Status::Internal("kafka source: opened twice");

  std::map<std::string, std::string> settings = {
      {"bootstrap.servers", options_.brokers},
      {"group.id", options_.group_id},
      {"enable.auto.commit", "false"},
      {"enable.auto.offset.store", "false"},
      {"auto.offset.reset", "earliest"},
      {"isolation.level", options_.read_committed ? "read_committed" : "read_uncommitted"},
  };
  if (context_.kafka_properties != nullptr) {
    for (const auto& [k, v] : *context_.kafka_properties) settings[k] = v;
  }
  for (const auto& [k, v] : options_.properties) settings[k] = v;
  // Not the user's to change: an empty partition reports its end, which SplitsPending needs.
  settings["enable.partition.eof"] = "true";
  if (!context_.instance.empty()) FLOW_RETURN_IF_ERROR(AddGroupSettings(subtask, &settings));
  settings_ = settings;
  // Instances: after an in-process restart, the member the run before kept.
  handle_ = group_mode_ ? TakeKeptMember(settings) : nullptr;
  const bool kept = handle_ != nullptr;
  if (kept) {
    handle_->source = this;
    rk_ = handle_->rk;
    had_assignment_ = handle_->had_assignment;
    queue_ = rd_kafka_queue_get_consumer(rk_);
  } else {
    FLOW_RETURN_IF_ERROR(NewConsumer(subtask, settings));
  }

  Result<int32_t> partitions =
      KafkaPartitionCount(rk_, options_.topic, options_.brokers, options_.metadata_timeout_ms);
  if (!partitions.ok()) return partitions.status();
  subtask_ = subtask;
  parallelism_ = parallelism;
  known_partitions_ = *partitions;
  next_discovery_ms_ = SteadyNowMs() + options_.partition_discovery_interval_ms;
  if (kept) return ResumeMember();
  if (group_mode_) return Subscribe();
  return ResolveStartOffsets(*partitions);
}

Status KafkaSource::NewConsumer(uint32_t subtask,
                                const std::map<std::string, std::string>& settings) {
  handle_ = std::make_shared<KafkaConsumerHandle>();
  handle_->source = this;
  handle_->settings = settings;
  handle_->group = group_id_;
  handle_->operator_name = context_.operator_name;
  handle_->subtask = std::to_string(subtask);
  handle_->instance = context_.instance;
  Result<rd_kafka_conf_t*> conf = MakeKafkaConf(settings, "kafka source");
  if (!conf.ok()) return conf.status();
  rd_kafka_conf_set_error_cb(*conf, &KafkaSource::OnError);
  if (group_mode_) rd_kafka_conf_set_rebalance_cb(*conf, &KafkaHandleRebalance);
  rd_kafka_conf_set_opaque(*conf, handle_.get());
  char err[512];
  rk_ = rd_kafka_new(RD_KAFKA_CONSUMER, *conf, err, sizeof err);
  if (rk_ == nullptr) {
    rd_kafka_conf_destroy(*conf);
    return Status::InvalidArgument(fmt::format("kafka source: cannot create consumer: {}", err));
  }
  handle_->rk = rk_;
  rd_kafka_poll_set_consumer(rk_);
  queue_ = rd_kafka_queue_get_consumer(rk_);
  // A refused login or an untrusted certificate fails Open at once, not after the timeout.
  return KafkaAwaitBrokers(
      rk_, [this] { ServeErrors(); }, [this] { return SecurityStatus(); }, options_.brokers,
      options_.metadata_timeout_ms, "kafka source");
}

void KafkaSource::ServeErrors() {
  // Before assign() the consumer queue holds only errors: they reach OnError or come back here.
  while (rd_kafka_message_t* m = rd_kafka_consumer_poll(rk_, 0)) {
    if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) NoteError(m->err, rd_kafka_message_errstr(m));
    rd_kafka_message_destroy(m);
  }
}

Status KafkaSource::SecurityStatus() const {
  if (security_err_ == 0) return Status::Ok();
  return KafkaSecurityStatus("kafka source", options_.brokers, security_err_, security_reason_);
}

Status KafkaSource::ResolveStartOffsets(int32_t partitions) {
  std::vector<int32_t> owned;
  for (int32_t p = 0; p < partitions; ++p) {
    if (static_cast<uint32_t>(p) % parallelism_ == subtask_) owned.push_back(p);
  }
  if (owned.empty()) return Status::Ok();
  if (context_.durable_dir.empty()) {
    Result<std::map<int32_t, int64_t>> offsets = QueryOffsets(owned, options_.start);
    if (!offsets.ok()) return offsets.status();
    next_offsets_ = std::move(*offsets);
    return Status::Ok();
  }
  Result<std::optional<std::map<int32_t, int64_t>>> recorded =
      ReadKafkaStartOffsets(context_.durable_dir, options_.topic);
  if (!recorded.ok()) return recorded.status();
  std::map<int32_t, int64_t> start;
  if (recorded->has_value()) {
    start = std::move(**recorded);
  } else {
    // The job's first start: resolve every partition, not only the owned ones, so the record
    // serves any parallelism of a restart.
    std::vector<int32_t> all;
    for (int32_t p = 0; p < partitions; ++p) all.push_back(p);
    Result<std::map<int32_t, int64_t>> resolved = QueryOffsets(all, options_.start);
    if (!resolved.ok()) return resolved.status();
    Result<std::map<int32_t, int64_t>> kept =
        RecordKafkaStartOffsets(context_.durable_dir, options_.topic, *resolved);
    if (!kept.ok()) return kept.status();
    start = std::move(*kept);
  }
  std::vector<int32_t> added;  // not in the record: created after the job's first start
  for (int32_t p : owned) {
    if (auto it = start.find(p); it != start.end()) {
      next_offsets_[p] = it->second;
    } else {
      added.push_back(p);
    }
  }
  if (added.empty()) return Status::Ok();
  Result<std::map<int32_t, int64_t>> earliest = QueryOffsets(added, KafkaStart::kEarliest);
  if (!earliest.ok()) return earliest.status();
  next_offsets_.insert(earliest->begin(), earliest->end());
  return Status::Ok();
}

Result<std::map<int32_t, int64_t>> KafkaSource::QueryOffsets(const std::vector<int32_t>& partitions,
                                                             KafkaStart start) {
  std::map<int32_t, int64_t> result;
  std::map<int32_t, int64_t> committed;
  if (start == KafkaStart::kCommitted) {
    rd_kafka_topic_partition_list_t* list =
        rd_kafka_topic_partition_list_new(static_cast<int>(partitions.size()));
    for (int32_t p : partitions) {
      rd_kafka_topic_partition_list_add(list, options_.topic.c_str(), p);
    }
    int64_t deadline = SteadyNowMs() + options_.metadata_timeout_ms;
    rd_kafka_resp_err_t err;
    while (true) {
      int remaining = static_cast<int>(std::max<int64_t>(deadline - SteadyNowMs(), 1));
      err = rd_kafka_committed(rk_, list, remaining);
      if (err == RD_KAFKA_RESP_ERR_NO_ERROR || !KafkaRetriable(err) || SteadyNowMs() >= deadline) {
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      DestroyPartitionList(list);
      return KafkaError(err,
                        fmt::format("kafka source: cannot read committed offsets of group "
                                    "`{}` from {}: {}",
                                    options_.group_id, options_.brokers, rd_kafka_err2str(err)));
    }
    for (int i = 0; i < list->cnt; ++i) {
      if (list->elems[i].err == RD_KAFKA_RESP_ERR_NO_ERROR && list->elems[i].offset >= 0) {
        committed[list->elems[i].partition] = list->elems[i].offset;
      }
    }
    DestroyPartitionList(list);
  }
  for (int32_t p : partitions) {
    if (auto it = committed.find(p); it != committed.end()) {
      result[p] = it->second;
      continue;
    }
    int64_t low = 0, high = 0;
    // Right after a topic is created its partitions may briefly have no leader: retry such
    // transient errors until the deadline.
    int64_t deadline = SteadyNowMs() + options_.metadata_timeout_ms;
    rd_kafka_resp_err_t err;
    while (true) {
      int remaining = static_cast<int>(std::max<int64_t>(deadline - SteadyNowMs(), 1));
      err =
          rd_kafka_query_watermark_offsets(rk_, options_.topic.c_str(), p, &low, &high, remaining);
      if (err == RD_KAFKA_RESP_ERR_NO_ERROR || !KafkaRetriable(err) || SteadyNowMs() >= deadline) {
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return KafkaError(err,
                        fmt::format("kafka source: cannot read offsets of topic `{}` "
                                    "partition {} from {}: {}",
                                    options_.topic, p, options_.brokers, rd_kafka_err2str(err)));
    }
    result[p] = start == KafkaStart::kLatest ? high : low;
  }
  return result;
}

void KafkaSource::DiscoverPartitions() {
  // Failures are not errors: brokers that stay away are reported by Poll's own bound, and the
  // next interval looks again. Partition counts only grow.
  Result<int32_t> count =
      KafkaPartitionCount(rk_, options_.topic, options_.brokers, kProbeTimeoutMs);
  if (!count.ok() || *count <= known_partitions_) return;
  std::vector<int32_t> added;
  for (int32_t p = known_partitions_; p < *count; ++p) {
    if (static_cast<uint32_t>(p) % parallelism_ == subtask_ && next_offsets_.count(p) == 0)
      added.push_back(p);
  }
  if (!added.empty()) {
    // Every record of a partition added while the job runs is new to it: read from the start.
    Result<std::map<int32_t, int64_t>> offsets = QueryOffsets(added, KafkaStart::kEarliest);
    if (!offsets.ok()) return;  // e.g. no leader yet: try again at the next interval
    if (assigned_) {
      rd_kafka_topic_partition_list_t* list =
          rd_kafka_topic_partition_list_new(static_cast<int>(added.size()));
      for (const auto& [p, off] : *offsets) {
        rd_kafka_topic_partition_list_add(list, options_.topic.c_str(), p)->offset = off;
      }
      rd_kafka_error_t* error = rd_kafka_incremental_assign(rk_, list);
      DestroyPartitionList(list);
      if (error != nullptr) {
        rd_kafka_error_destroy(error);
        return;  // nothing changed; the next interval tries again
      }
      for (const auto& [p, off] : *offsets) unheard_.insert(p);
    }
    next_offsets_.insert(offsets->begin(), offsets->end());
  }
  known_partitions_ = *count;
}

Status KafkaSource::Assign() {
  rd_kafka_topic_partition_list_t* list =
      rd_kafka_topic_partition_list_new(static_cast<int>(next_offsets_.size()));
  for (const auto& [p, off] : next_offsets_) {
    rd_kafka_topic_partition_list_add(list, options_.topic.c_str(), p)->offset = off;
  }
  rd_kafka_resp_err_t err = rd_kafka_assign(rk_, list);
  DestroyPartitionList(list);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return KafkaError(err, fmt::format("kafka source: assign failed: {}", rd_kafka_err2str(err)));
  }
  assigned_ = true;
  unheard_.clear();
  for (const auto& [p, off] : next_offsets_) unheard_.insert(p);
  return Status::Ok();
}

void KafkaSource::ReleaseMessages() {
  for (rd_kafka_message_t* m : batch_) rd_kafka_message_destroy(m);
  batch_.clear();
}

void KafkaSource::UpdateLag() {
  // Without a registry there is nothing to set, and lag_ must hold no null gauge.
  MetricsRegistry* registry = context_.metrics.registry();
  if (registry == nullptr) return;
  for (const auto& [p, next] : next_offsets_) {
    Metric*& gauge = lag_[p];
    if (gauge == nullptr) {
      MetricLabels labels = context_.metrics.Labels();
      labels.emplace_back("topic", options_.topic);
      labels.emplace_back("partition", std::to_string(p));
      gauge = registry->Gauge(
          kMetricKafkaLag,
          "Records of a partition not read yet: its high watermark less the source's position",
          labels);
    }
    int64_t low = 0, high = 0;
    if (rd_kafka_get_watermark_offsets(rk_, options_.topic.c_str(), p, &low, &high) !=
            RD_KAFKA_RESP_ERR_NO_ERROR ||
        high < 0 || next < 0) {
      continue;  // nothing fetched from this partition yet: the lag stays unknown (absent)
    }
    int64_t position = next;
    if (auto end = end_offsets_.find(p); end != end_offsets_.end())
      position = std::max(position, end->second);
    gauge->Set(std::max<int64_t>(0, high - position));
  }
}

Result<PollResult> KafkaSource::Poll(std::vector<RawRecord>* out, size_t max_records,
                                     int timeout_ms) {
  if (rk_ == nullptr) return Status::Internal("kafka source: Poll before Open");
  ReleaseMessages();
  // Instances: the consumer group assigns partitions, new ones included.
  if (!group_mode_ && options_.partition_discovery_interval_ms > 0 &&
      SteadyNowMs() >= next_discovery_ms_) {
    DiscoverPartitions();
    next_discovery_ms_ = SteadyNowMs() + options_.partition_discovery_interval_ms;
  }
  // More subtasks than partitions (so far). A group member polls on: polls drive its rebalances.
  if (next_offsets_.empty() && !group_mode_) return PollResult::kIdle;
  if (!assigned_) FLOW_RETURN_IF_ERROR(Assign());
  if (SteadyNowMs() >= next_lag_ms_) {
    UpdateLag();
    next_lag_ms_ = SteadyNowMs() + 1000;
  }
  if (max_records == 0) return PollResult::kRecords;
  batch_.resize(max_records);
  // A batch call waits until the batch is full or the timeout passes, so wait for one message
  // only and then take whatever else is already there: records flow on without added latency.
  ssize_t n =
      rd_kafka_consume_batch_queue(queue_, timeout_ms < 0 ? 0 : timeout_ms, batch_.data(), 1);
  if (n == 1 && max_records > 1) {
    ssize_t more = rd_kafka_consume_batch_queue(queue_, 0, batch_.data() + 1, max_records - 1);
    if (more > 0) n += more;
  }
  if (!reassigned_.empty()) {
    batch_.resize(n > 0 ? static_cast<size_t>(n) : 0);
    return Status::Reassigned(reassigned_);
  }
  if (!rebalance_error_.ok()) {
    batch_.resize(n > 0 ? static_cast<size_t>(n) : 0);
    return rebalance_error_;
  }
  if (n < 0) {
    batch_.clear();
    rd_kafka_resp_err_t err = rd_kafka_last_error();
    return KafkaError(err, fmt::format("kafka source: consume failed: {}", rd_kafka_err2str(err)));
  }
  batch_.resize(static_cast<size_t>(n));
  headers_.resize(batch_.size());  // before any RawRecord points into it
  size_t appended = 0;
  Status error;
  for (size_t i = 0; i < batch_.size(); ++i) {
    rd_kafka_message_t* m = batch_[i];
    if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        unheard_.erase(m->partition);  // caught up: nothing older to wait for
        end_offsets_[m->partition] = m->offset;
        continue;
      }
      if (KafkaSecurityFailure(m->err, rd_kafka_message_errstr(m))) {
        NoteError(m->err, rd_kafka_message_errstr(m));
        continue;
      }
      if (m->err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN || m->err == RD_KAFKA_RESP_ERR__TRANSPORT) {
        if (down_since_ms_ < 0) down_since_ms_ = SteadyNowMs();
        down_reason_ = rd_kafka_message_errstr(m);
        continue;
      }
      if (error.ok()) {
        error = KafkaError(m->err, fmt::format("kafka source: topic `{}`: {}", options_.topic,
                                               rd_kafka_message_errstr(m)));
        if (m->err == RD_KAFKA_RESP_ERR__FATAL) error = FatalError(error);
      }
      continue;
    }
    auto it = next_offsets_.find(m->partition);
    if (it == next_offsets_.end()) continue;  // not ours (cannot happen with assign())
    it->second = m->offset + 1;
    if (!unheard_.empty()) unheard_.erase(m->partition);
    RawRecord rec;
    rec.payload = std::string_view(static_cast<const char*>(m->payload), m->len);
    if (m->key != nullptr) rec.key = std::string_view(static_cast<const char*>(m->key), m->key_len);
    rec.has_key = m->key != nullptr;
    headers_[i].headers = nullptr;
    if (rd_kafka_message_headers(m, &headers_[i].headers) == RD_KAFKA_RESP_ERR_NO_ERROR)
      rec.headers = &headers_[i];
    rd_kafka_timestamp_type_t ts_type;
    int64_t ts = rd_kafka_message_timestamp(m, &ts_type);
    if (ts_type != RD_KAFKA_TIMESTAMP_NOT_AVAILABLE && ts >= 0) rec.timestamp = ts;
    rec.partition = m->partition;
    rec.offset = m->offset;
    out->push_back(rec);
    ++appended;
  }
  if (!error.ok()) return error;
  // Credentials revoked or a certificate replaced while the job runs: no retry cures that.
  FLOW_RETURN_IF_ERROR(SecurityStatus());
  // Only after the queue was served: a partition whose records waited there is not stalled.
  FLOW_RETURN_IF_ERROR(CheckStalledAssignment(SteadyNowMs()));
  FLOW_RETURN_IF_ERROR(CheckStrandedPartitions(SteadyNowMs()));
  if (appended > 0) {
    down_since_ms_ = -1;
    return PollResult::kRecords;
  }
  if (down_since_ms_ >= 0 && SteadyNowMs() - down_since_ms_ > options_.unavailable_timeout_ms) {
    // librdkafka reports brokers going down but not coming back: on an idle topic, ask for
    // metadata before declaring them unavailable.
    Result<int32_t> probe =
        KafkaPartitionCount(rk_, options_.topic, options_.brokers, kProbeTimeoutMs);
    if (probe.ok()) {
      down_since_ms_ = -1;
      return PollResult::kIdle;
    }
    return Status::Unavailable(
        fmt::format("kafka source: brokers {} unreachable for over {} ms ({})", options_.brokers,
                    options_.unavailable_timeout_ms, down_reason_));
  }
  return PollResult::kIdle;
}

bool KafkaSource::MessageHeaders::Last(const std::string& name, std::string_view* value) const {
  const void* v = nullptr;
  size_t size = 0;
  if (headers == nullptr ||
      rd_kafka_header_get_last(headers, name.c_str(), &v, &size) != RD_KAFKA_RESP_ERR_NO_ERROR ||
      v == nullptr) {
    return false;
  }
  *value = std::string_view(static_cast<const char*>(v), size);
  return true;
}

std::string KafkaSource::Locate(const RawRecord& record) const {
  return fmt::format("kafka topic {} partition {} offset {}", options_.topic, record.partition,
                     record.offset);
}

std::optional<std::pair<uint32_t, std::vector<int32_t>>> KafkaSource::OwnedSplits() const {
  if (!AssignmentKnown()) return std::nullopt;
  std::vector<int32_t> owned;
  owned.reserve(next_offsets_.size());
  for (const auto& [p, off] : next_offsets_) owned.push_back(p);
  return std::make_pair(static_cast<uint32_t>(known_partitions_), std::move(owned));
}

Status KafkaSource::SnapshotPosition(BinaryWriter* out) const {
  out->PutU8(kPositionVersion);
  out->PutString(options_.topic);
  // A partition an instance was just given has no position until its first record.
  uint32_t known = 0;
  for (const auto& [p, off] : next_offsets_) known += off >= 0 ? 1 : 0;
  out->PutU32(known);
  for (const auto& [p, off] : next_offsets_) {
    if (off < 0) continue;
    out->PutU32(static_cast<uint32_t>(p));
    out->PutI64(off);
  }
  return Status::Ok();
}

namespace {
// One SnapshotPosition's offsets (partition, next offset), for a source of `topic`.
Status ReadPositionOffsets(BinaryReader* in, std::string_view topic,
                           std::vector<std::pair<int32_t, int64_t>>* offsets) {
  uint8_t version = 0;
  FLOW_RETURN_IF_ERROR(in->GetU8(&version));
  if (version != kPositionVersion) {
    return Status::Corruption(fmt::format("kafka source position: unknown version {}", version));
  }
  std::string written_for;
  uint32_t count = 0;
  FLOW_RETURN_IF_ERROR(in->GetString(&written_for));
  if (written_for != topic) {
    return Status::InvalidArgument(
        fmt::format("kafka source: position is for topic `{}`, not `{}`", written_for, topic));
  }
  FLOW_RETURN_IF_ERROR(in->GetU32(&count));
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t p = 0;
    int64_t off = 0;
    FLOW_RETURN_IF_ERROR(in->GetU32(&p));
    FLOW_RETURN_IF_ERROR(in->GetI64(&off));
    if (off < 0) return Status::Corruption("kafka source position: negative offset");
    offsets->emplace_back(static_cast<int32_t>(p), off);
  }
  return Status::Ok();
}
}  // namespace

Status KafkaSource::SkipPosition(BinaryReader* in, std::string_view topic) {
  std::vector<std::pair<int32_t, int64_t>> offsets;
  return ReadPositionOffsets(in, topic, &offsets);
}

Status KafkaSource::RestorePosition(BinaryReader* in) {
  if (rk_ == nullptr) return Status::Internal("kafka source: RestorePosition before Open");
  if (!group_mode_ && assigned_)
    return Status::Internal("kafka source: RestorePosition after Poll");
  std::vector<std::pair<int32_t, int64_t>> offsets;
  FLOW_RETURN_IF_ERROR(ReadPositionOffsets(in, options_.topic, &offsets));
  // In a group the committed offsets are the positions; the bytes are still read, so that a
  // source wrapping this one (RepartitionSource) finds its own after them.
  if (group_mode_) return Status::Ok();
  for (const auto& [p, off] : offsets) {
    auto it = next_offsets_.find(p);
    if (it != next_offsets_.end()) it->second = off;
  }
  return Status::Ok();
}

// Partitions are owned by partition number (p % parallelism), so every old subtask's offsets
// are offered and each partition's offset lands in exactly one new subtask.
Status KafkaSource::RestoreRescaled(const std::vector<OldSourcePosition>& old, uint32_t) {
  if (group_mode_) return Status::Ok();
  for (const OldSourcePosition& o : old) {
    if (o.finished || o.position.empty()) continue;
    BinaryReader reader(o.position);
    FLOW_RETURN_IF_ERROR(RestorePosition(&reader));
  }
  return Status::Ok();
}

Status KafkaSource::CommitOffsets() {
  if (rk_ == nullptr || next_offsets_.empty()) return Status::Ok();
  rd_kafka_topic_partition_list_t* list =
      rd_kafka_topic_partition_list_new(static_cast<int>(next_offsets_.size()));
  for (const auto& [p, off] : next_offsets_) {
    rd_kafka_topic_partition_list_add(list, options_.topic.c_str(), p)->offset = off;
  }
  rd_kafka_resp_err_t err = rd_kafka_commit(rk_, list, 0);
  DestroyPartitionList(list);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return KafkaError(err, fmt::format("kafka source: commit to group `{}` failed: {}",
                                       options_.group_id, rd_kafka_err2str(err)));
  }
  return Status::Ok();
}

Status KafkaSource::Close() {
  ReleaseMessages();
  if (queue_ != nullptr) rd_kafka_queue_destroy(queue_);
  queue_ = nullptr;
  group_looker_.reset();  // before the consumer: its client is not the consumer's
  next_look_ms_ = 0;
  stranded_since_ms_ = -1;
  if (rk_ != nullptr && group_mode_) {
    CloseMember();
  } else if (rk_ != nullptr) {
    // With assign() (no subscription) closing does not wait for a group rebalance.
    rd_kafka_consumer_close(rk_);
    DestroyClosedConsumer(rk_, "consumer of topic " + options_.topic);
    handle_->rk = nullptr;
  }
  rk_ = nullptr;
  handle_ = nullptr;
  if (offsets_rk_ != nullptr) {
    DestroyClosedConsumer(offsets_rk_, "offsets consumer of topic " + options_.topic);
    offsets_rk_ = nullptr;
  }
  had_assignment_ = false;
  assigned_ = false;
  unheard_.clear();
  assigned_at_ms_.clear();
  last_poll_ms_ = polled_since_ms_ = -1;
  return Status::Ok();
}

}  // namespace flow::rt
