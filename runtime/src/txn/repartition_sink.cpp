#include "flow/runtime/txn/repartition_sink.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "flow/runtime/shuffle/repartition_topic.h"

namespace flow::rt {
namespace {

// How long a topic just created may stay out of the metadata before Open gives up.
constexpr std::chrono::seconds kTopicVisibleBound{30};

}  // namespace

Status RepartitionSink::Open(uint32_t subtask, uint32_t parallelism) {
  if (opened_) return Status::Internal("repartition sink: opened twice");
  subtask_ = subtask;
  parallelism_ = std::max<uint32_t>(parallelism, 1);
  if (group_ == nullptr) return Status::Internal("repartition sink: no transaction group");
  if (options_.topic.empty()) return Status::InvalidArgument("repartition sink: `topic` is empty");
  FLOW_RETURN_IF_ERROR(
      shuffle::ValidateRepartitionPartitions(options_.partitions, options_.max_parallelism));
  Result<int32_t> found = group_->PartitionCount(options_.topic);
  if (found.status().code() == StatusCode::kNotFound) {
    FLOW_RETURN_IF_ERROR(group_->CreateTopicIfMissing(
        options_.topic, options_.partitions, {{"message.timestamp.type", "LogAppendTime"}},
        options_.replication_factor, "repartition topic"));
    // Another instance may have created it first, with its own count: read it back. A new topic
    // reaches the metadata of every broker a moment after its creation returned.
    const auto deadline = std::chrono::steady_clock::now() + kTopicVisibleBound;
    while (true) {
      found = group_->PartitionCount(options_.topic);
      if (found.status().code() != StatusCode::kNotFound ||
          std::chrono::steady_clock::now() >= deadline)
        break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  if (!found.ok()) return found.status();
  if (*found != options_.partitions) {
    return Status::InvalidArgument(fmt::format(
        "repartition topic `{}` has {} partitions, this job needs {}: each partition holds a fixed "
        "range of key groups, so a different count would move keys away from their state. Run "
        "every instance with the same build and settings, or start the job over under a new job "
        "id (docs/deploy.md)",
        options_.topic, *found, options_.partitions));
  }
  FLOW_RETURN_IF_ERROR(group_->WaitForLeaders(options_.topic, options_.partitions));
  opened_ = true;
  return Status::Ok();
}

Status RepartitionSink::Recover(int64_t restored_checkpoint_id) {
  if (!opened_) return Status::Internal("repartition sink: Recover before Open");
  FLOW_RETURN_IF_ERROR(CheckRestoredIsCommitted(*group_, restored_checkpoint_id));
  recovered_ = true;
  return Status::Ok();
}

Status RepartitionSink::BeginTransaction() {
  return CheckWritable("BeginTransaction");
}

Status RepartitionSink::CheckWritable(std::string_view what) const {
  if (recovered_) return Status::Ok();
  return Status::Internal(fmt::format("repartition sink: {} before Recover", what));
}

Status RepartitionSink::Write(std::string_view key, std::string_view payload,
                              TimestampMs timestamp) {
  TxnRecord record{key, payload, timestamp};
  size_t written = 0;
  return WriteBatch(std::span<const TxnRecord>(&record, 1), &written);
}

Status RepartitionSink::WriteBatch(std::span<const TxnRecord> records, size_t* written) {
  *written = 0;
  FLOW_RETURN_IF_ERROR(CheckWritable("Write"));
  values_.clear();
  ends_.clear();
  for (const TxnRecord& r : records) {
    shuffle::AppendRecordHeader(options_.input, r.timestamp, &values_);
    values_.append(r.payload);
    ends_.push_back(values_.size());
  }
  routed_.assign(records.begin(), records.end());
  size_t start = 0;
  for (size_t i = 0; i < routed_.size(); ++i) {
    TxnRecord& r = routed_[i];
    // A key that is not a key hash is a bug of the caller, never of the data.
    Result<uint64_t> hash = shuffle::DecodeRepartitionKey(r.key, options_.topic);
    if (!hash.ok()) return Status::Internal(hash.status().message());
    r.partition = shuffle::PartitionOfHash(*hash, options_.max_parallelism, options_.partitions);
    // Views only now: appending may have moved the buffer.
    r.payload = std::string_view(values_).substr(start, ends_[i] - start);
    start = ends_[i];
    // The topic stamps records when they are appended (LogAppendTime).
    r.timestamp = kNoTimestamp;
  }
  return group_->WriteBatch(participant_, options_.topic,
                            KafkaTransactionGroup::kPartitionPerRecord, routed_, written);
}

Status RepartitionSink::WriteProgress(const shuffle::ProgressReport& report) {
  FLOW_RETURN_IF_ERROR(CheckWritable("WriteProgress"));
  const std::string value = shuffle::EncodeProgress(report);
  routed_.clear();
  for (int32_t p = 0; p < options_.partitions; ++p) {
    TxnRecord& r = routed_.emplace_back();
    r.payload = value;
    r.partition = p;
  }
  size_t written = 0;
  return group_->WriteBatch(participant_, options_.topic,
                            KafkaTransactionGroup::kPartitionPerRecord, routed_, &written);
}

Status RepartitionSink::OnEventTime(TimestampMs watermark, bool /*idle*/,
                                    const shuffle::SplitTimes* upstream) {
  FLOW_RETURN_IF_ERROR(CheckWritable("OnEventTime"));
  watermark_ = watermark;
  upstream_ = upstream;
  const int64_t now = SteadyNowMs();
  if (now - last_report_ms_ < options_.progress_interval_ms) return Status::Ok();
  std::optional<shuffle::ProgressReport> report = OwnReport();
  if (!report) return Status::Ok();
  Status s = WriteProgress(*report);
  // A full buffer skips one report: the next one, or the epoch's last (PreCommit), says more.
  if (s.code() == StatusCode::kUnavailable) return Status::Ok();
  if (s.ok()) last_report_ms_ = now;
  return s;
}

std::optional<shuffle::ProgressReport> RepartitionSink::OwnReport() const {
  if (upstream_ == nullptr ||
      (options_.upstream_sources.empty() && options_.upstream_readers.empty())) {
    return std::nullopt;
  }
  shuffle::ProgressReport report;
  report.writer =
      fmt::format("{}/{}", group_->instance().empty() ? "-" : group_->instance(), subtask_);
  for (const std::string& name : options_.upstream_sources) {
    std::optional<shuffle::SourceSplits> splits = upstream_->Get(name, subtask_);
    if (!splits) continue;
    shuffle::SourceProgress& source = report.sources.emplace_back();
    source.name = shuffle::ProgressSourceName(name, options_.input);
    source.partitions = splits->total;
    for (const shuffle::SplitTime& t : splits->splits) {
      // Every record below the input's watermark was written already; below the split's own,
      // none of that split is still to come.
      source.splits.push_back(
          shuffle::SplitProgress{t.split, std::min(t.watermark, watermark_), t.idle, false});
    }
  }
  for (const std::string& name : options_.upstream_readers) {
    const std::vector<shuffle::SourceSplits> all = upstream_->All(name);
    if (all.empty()) continue;
    shuffle::SourceProgress& source = report.sources.emplace_back();
    source.name = shuffle::ProgressSourceName(name, options_.input);
    source.partitions = options_.max_parallelism;
    for (const shuffle::SplitTime& t :
         shuffle::KeyGroupsOfSubtask(all, options_.max_parallelism, subtask_, parallelism_)) {
      source.splits.push_back(
          shuffle::SplitProgress{t.split, std::min(t.watermark, watermark_), t.idle, false});
    }
  }
  if (report.sources.empty()) return std::nullopt;
  return report;
}

Status RepartitionSink::PreCommit(int64_t checkpoint_id) {
  FLOW_RETURN_IF_ERROR(CheckWritable("PreCommit"));
  // Each epoch ends with a report, so a reader's event time never waits for the next epoch.
  if (std::optional<shuffle::ProgressReport> report = OwnReport()) {
    FLOW_RETURN_IF_ERROR(WriteProgress(*report));
    last_report_ms_ = SteadyNowMs();
  }
  return group_->PreCommit(participant_, checkpoint_id);
}

Status RepartitionSink::Commit(int64_t checkpoint_id) {
  return group_->Commit(checkpoint_id);
}

Status RepartitionSink::Abort(int64_t /*checkpoint_id*/) {
  return group_->Abort();
}

}  // namespace flow::rt
