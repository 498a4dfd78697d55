#include "flow/runtime/txn/kafka_exactly_once_sink.h"

#include <librdkafka/rdkafka.h>

#include <memory>

#include <fmt/format.h>

#include "flow/runtime/common/time.h"
#include "kafka_admin.h"

namespace flow::rt {
namespace {

constexpr int64_t kTailRecords = 1000;  // first look at only the newest records

struct ClientFree {
  void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
};

// Reads partition 0 of `topic` from `from` to its end (read_committed); keeps the newest
// progress record of `job_id` in `*found`.
Status ScanProgress(rd_kafka_t* rk, const std::string& topic, const std::string& job_id,
                    int64_t from, int64_t deadline_ms, KafkaProgress* found, bool* any) {
  rd_kafka_topic_partition_list_t* parts = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(parts, topic.c_str(), 0)->offset = from;
  rd_kafka_resp_err_t err = rd_kafka_assign(rk, parts);
  rd_kafka_topic_partition_list_destroy(parts);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::IoError(fmt::format("kafka exactly-once: cannot read progress topic `{}`: {}",
                                       topic, rd_kafka_err2str(err)));
  }
  while (true) {
    int64_t left = deadline_ms - SteadyNowMs();
    if (left <= 0) {
      return Status::TimedOut(fmt::format(
          "kafka exactly-once: reading progress topic `{}` did not reach its end in time (an open "
          "transaction of another producer?)",
          topic));
    }
    std::unique_ptr<rd_kafka_message_t, void (*)(rd_kafka_message_t*)> msg(
        rd_kafka_consumer_poll(rk, static_cast<int>(std::min<int64_t>(left, 200))),
        rd_kafka_message_destroy);
    if (!msg) continue;
    if (msg->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) return Status::Ok();
    if (msg->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return Status::Unavailable(fmt::format("kafka exactly-once: reading progress topic `{}`: {}",
                                             topic, rd_kafka_message_errstr(msg.get())));
    }
    std::string_view key(static_cast<const char*>(msg->key), msg->key_len);
    if (key != job_id) continue;
    std::string record_job;
    KafkaProgress p;
    FLOW_RETURN_IF_ERROR(txn_detail::DecodeProgress(
        std::string_view(static_cast<const char*>(msg->payload), msg->len), &record_job,
        &p.checkpoint_id, &p.participants));
    if (record_job != job_id) continue;
    *found = p;
    *any = true;
  }
}

}  // namespace

Result<KafkaProgress> ReadCommittedProgress(const std::string& brokers,
                                            const std::string& progress_topic,
                                            const std::string& job_id, int timeout_ms,
                                            const std::map<std::string, std::string>& properties) {
  int64_t deadline = SteadyNowMs() + timeout_ms;
  std::map<std::string, std::string> settings = properties;
  settings.insert_or_assign("bootstrap.servers", brokers);
  settings.insert_or_assign("group.id", "flow-progress-reader");
  settings.insert_or_assign("enable.auto.commit", "false");
  settings.insert_or_assign("enable.partition.eof", "true");
  settings.insert_or_assign("isolation.level", "read_committed");
  Result<rd_kafka_t*> client =
      txn_detail::MakeClient(RD_KAFKA_CONSUMER, settings, "kafka exactly-once progress reader");
  if (!client.ok()) return client.status();
  std::unique_ptr<rd_kafka_t, ClientFree> rk(*client);
  Result<txn_detail::TopicBounds> bounds =
      txn_detail::ProgressTopicBounds(rk.get(), progress_topic, timeout_ms);
  if (bounds.status().code() == StatusCode::kNotFound) return KafkaProgress{};
  if (!bounds.ok()) {
    return Status::Unavailable(
        fmt::format("kafka exactly-once (brokers {}): {}", brokers, bounds.status().message()));
  }
  const auto [low, high] = *bounds;
  KafkaProgress found;
  if (high <= low) return found;
  bool any = false;
  // The newest record is near the end; aborted transactions could push it further back, so fall
  // back to the whole (compacted) log when the tail holds none.
  int64_t from = std::max(low, high - kTailRecords);
  FLOW_RETURN_IF_ERROR(
      ScanProgress(rk.get(), progress_topic, job_id, from, deadline, &found, &any));
  if (!any && from > low) {
    FLOW_RETURN_IF_ERROR(
        ScanProgress(rk.get(), progress_topic, job_id, low, deadline, &found, &any));
  }
  return found;
}

Status KafkaExactlyOnceSink::Open(uint32_t subtask, uint32_t parallelism) {
  if (opened_) return Status::Internal("kafka exactly-once sink: opened twice");
  if (group_ == nullptr) return Status::Internal("kafka exactly-once sink: no transaction group");
  if (options_.topic.empty())
    return Status::InvalidArgument("kafka exactly-once sink: `topic` is empty");
  Result<int32_t> partitions = group_->PartitionCount(options_.topic);
  if (!partitions.ok()) return partitions.status();
  if (options_.partitioner == KafkaPartitioner::kExplicit &&
      (options_.partition < 0 || options_.partition >= *partitions)) {
    return Status::InvalidArgument(
        fmt::format("kafka exactly-once sink: partition {} out of range (topic `{}` "
                    "has {} partitions)",
                    options_.partition, options_.topic, *partitions));
  }
  FLOW_RETURN_IF_ERROR(group_->WaitForLeaders(options_.topic, *partitions));
  stale_stamps_.Start(fmt::format("exactly-once sink subtask {}", subtask), options_.topic,
                      group_->StampRetention(options_.topic));
  opened_ = true;
  return Status::Ok();
}

Status CheckRestoredIsCommitted(const KafkaTransactionGroup& group,
                                int64_t restored_checkpoint_id) {
  // init_transactions (in the group's Start) already aborted what an earlier incarnation left.
  int64_t committed = group.last_committed();
  if (restored_checkpoint_id == committed) return Status::Ok();
  return Status::InvalidArgument(fmt::format(
      "kafka exactly-once sink (job `{}`): restored checkpoint {} but Kafka's last committed "
      "checkpoint "
      "is {}: restore exactly chk-{} ({} would {} output)",
      group.job_id(), restored_checkpoint_id, committed, committed, restored_checkpoint_id,
      restored_checkpoint_id < committed ? "duplicate" : "lose"));
}

Status KafkaExactlyOnceSink::Recover(int64_t restored_checkpoint_id) {
  if (!opened_) return Status::Internal("kafka exactly-once sink: Recover before Open");
  FLOW_RETURN_IF_ERROR(CheckRestoredIsCommitted(*group_, restored_checkpoint_id));
  recovered_ = true;
  return Status::Ok();
}

Status KafkaExactlyOnceSink::BeginTransaction() {
  // The group's transaction is always open; a new epoch needs nothing here.
  return recovered_ ? Status::Ok()
                    : Status::Internal("kafka exactly-once sink: BeginTransaction before Recover");
}

Status KafkaExactlyOnceSink::Write(std::string_view key, std::string_view payload,
                                   TimestampMs timestamp) {
  if (!recovered_) return Status::Internal("kafka exactly-once sink: Write before Recover");
  int32_t partition = options_.partitioner == KafkaPartitioner::kExplicit ? options_.partition
                                                                          : RD_KAFKA_PARTITION_UA;
  stale_stamps_.Check(timestamp);
  return group_->Write(participant_, options_.topic, partition, key, payload, timestamp);
}

Status KafkaExactlyOnceSink::WriteBatch(std::span<const TxnRecord> records, size_t* written) {
  *written = 0;
  if (!recovered_) return Status::Internal("kafka exactly-once sink: Write before Recover");
  int32_t partition = options_.partitioner == KafkaPartitioner::kExplicit ? options_.partition
                                                                          : RD_KAFKA_PARTITION_UA;
  for (const TxnRecord& r : records) stale_stamps_.Check(r.timestamp);
  return group_->WriteBatch(participant_, options_.topic, partition, records, written);
}

Status KafkaExactlyOnceSink::PreCommit(int64_t checkpoint_id) {
  if (!recovered_) return Status::Internal("kafka exactly-once sink: PreCommit before Recover");
  return group_->PreCommit(participant_, checkpoint_id);
}

Status KafkaExactlyOnceSink::Commit(int64_t checkpoint_id) {
  return group_->Commit(checkpoint_id);
}

Status KafkaExactlyOnceSink::Abort(int64_t /*checkpoint_id*/) {
  return group_->Abort();
}

}  // namespace flow::rt
