#pragma once
// RepartitionSink: the writing half of a key-by between instances of a scaled-out job
// (docs/deploy.md, "Shuffles through Kafka"; the formats are shuffle/repartition_topic.h and
// shuffle/repartition_frame.h).
//
// One participant of the instance's KafkaTransactionGroup, like an exactly-once Kafka sink: what
// it writes becomes visible to the reading instances in the same transaction as the instance's
// outputs and the offsets its sources read, so a record crosses between instances exactly once.
//
// - Open creates the repartition topic unless it exists, with `partitions` partitions and
//   message.timestamp.type=LogAppendTime (retention must count from when a record was written,
//   not from its event time, which may be months old: the event time travels in the value), and
//   refuses a topic with another partition count (keys would change partition and leave their
//   state behind; docs/deploy.md says how to start over).
// - Write(key, payload, timestamp): `key` is the record's key hash (EncodeRepartitionKey) and
//   chooses the partition (PartitionOfHash); `payload` is the record in the runtime's binary
//   encoding (Serializer<T>); `timestamp` its event time (kNoEventTime when none). The sink writes
//   the value AppendRecordHeader(options.input, timestamp) + payload.
// - WriteProgress: one progress report to every partition (readers take event time from them).
//   The sink writes its own (OnEventTime) at most every `progress_interval_ms` and at each
//   PreCommit, so every committed epoch ends with one: for every split of each upstream source
//   that the source subtask of the sink's own index reads (shuffle/split_times.h), the lower of
//   the split's watermark and the sink's input watermark, and whether the split is idle; for each
//   upstream reader (a second key-by), the same per key group of the sink's own subtask's range
//   that any subtask of the reader reads. Each split (partition or key group) is then reported
//   by one writer of one instance at a time, which PartitionProgress's "highest value" needs.
// - Recover, PreCommit, Commit and Abort are the group's, as for KafkaExactlyOnceSink.
// Threading: one task thread; commits from the checkpoint thread, serialised by the engine.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "flow/runtime/common/key_group.h"
#include "flow/runtime/shuffle/repartition_frame.h"
#include "flow/runtime/shuffle/split_times.h"
#include "flow/runtime/txn/kafka_exactly_once_sink.h"

namespace flow::rt {

struct RepartitionSinkOptions {
  // RepartitionTopicName(job id, operator). Required.
  std::string topic{};
  // The topic's partition count: 1..max_parallelism. Required.
  int32_t partitions = 0;
  uint32_t max_parallelism = kDefaultMaxParallelism;
  // The input the records belong to: 0, or 1 for a join's right side (repartition_frame.h).
  int input = 0;
  // Replication factor when the topic is created. Default: -1 (the broker's default).
  int replication_factor = -1;
  // The sources (operator names) whose splits feed this sink on its forward path; the readers'
  // RepartitionSourceSpec::upstream_sources. Empty: the sink writes no progress of its own.
  std::vector<std::string> upstream_sources{};
  // The repartition readers whose keyed operator feeds this sink on its forward path (a second
  // key-by): their splits are key groups, and the sink reports those of its own subtask's range
  // (the keyed operator's subtask of the same index holds them) that its instance reads.
  std::vector<std::string> upstream_readers{};
  // How often OnEventTime may write a report; each PreCommit writes one too. Default: 200 ms.
  int64_t progress_interval_ms = 200;
};

class RepartitionSink final : public TwoPhaseCommitSink {
 public:
  RepartitionSink(KafkaTransactionGroup* group, uint32_t participant,
                  RepartitionSinkOptions options)
      : group_(group), participant_(participant), options_(std::move(options)) {}

  Status Open(uint32_t subtask, uint32_t parallelism) override;
  Status Recover(int64_t restored_checkpoint_id) override;
  Status BeginTransaction() override;
  Status Write(std::string_view key, std::string_view payload, TimestampMs timestamp) override;
  // One call of the group's WriteBatch, each record to the partition of its key.
  Status WriteBatch(std::span<const TxnRecord> records, size_t* written) override;
  Status OnEventTime(TimestampMs watermark, bool idle,
                     const shuffle::SplitTimes* upstream) override;
  Status PreCommit(int64_t checkpoint_id) override;
  Status Commit(int64_t checkpoint_id) override;
  Status Abort(int64_t checkpoint_id) override;
  Status Close() override { return Status::Ok(); }
  bool CommitIsResumable() const override { return false; }

  // `report` to every partition, inside the open transaction (or held for the next one while
  // this participant is ahead of it, as records are).
  [[nodiscard]] Status WriteProgress(const shuffle::ProgressReport& report);

  const std::string& topic() const { return options_.topic; }
  int32_t partitions() const { return options_.partitions; }

 private:
  Status CheckWritable(std::string_view what) const;
  // The report of what OnEventTime last heard (above); nullopt when there is nothing to say yet.
  std::optional<shuffle::ProgressReport> OwnReport() const;

  KafkaTransactionGroup* group_;
  uint32_t participant_;
  RepartitionSinkOptions options_;
  std::vector<TxnRecord> routed_;  // WriteBatch's records with their partitions and values
  std::string values_;             // the batch's values, back to back
  std::vector<size_t> ends_;       // where each value ends in values_
  bool opened_ = false;
  bool recovered_ = false;
  uint32_t subtask_ = 0;
  uint32_t parallelism_ = 1;
  // The input's event time as OnEventTime last gave it, and the ledger it came with.
  TimestampMs watermark_ = kMinWatermark;
  const shuffle::SplitTimes* upstream_ = nullptr;
  int64_t last_report_ms_ = 0;  // steady clock
};

}  // namespace flow::rt
