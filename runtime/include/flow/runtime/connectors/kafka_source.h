#pragma once
// KafkaSource: reads one topic with a librdkafka consumer. Unbounded (Poll never returns kEnd).
//
// Splits: the job assigns partitions explicitly: partition p belongs to subtask p % parallelism.
// The consumer uses assign(), never subscribe(), so there is no group rebalancing.
// Partition discovery: every partition_discovery_interval_ms Poll asks the broker for the
// topic's partition count; partitions added since are assigned (incrementally) to their subtask
// and read from their earliest offset: every record in them is new to the job. Their positions
// are part of the snapshot like the others'.
// Start offsets (for partitions without a restored offset), resolved to concrete offsets in Open
// so that every snapshot holds exact offsets:
//   kEarliest: the partition's low watermark; kLatest: its high watermark (only new records);
//   kCommitted: the group's committed offset, or the low watermark when the group has none.
// They are resolved once per job: with a durable dir (Bind; the engine gives one under
// --state-dir) the first Open records the offsets of every partition of the topic in
// <durable dir>/kafka-start-<topic> and every later Open (a restart, any parallelism) uses
// them, so a crash before the first checkpoint does not move `latest` past records produced in
// between. A partition missing from the record was added later and starts at its earliest offset.
// Without a durable dir every Open resolves again.
// Positions: per assigned partition, the offset of the next record to read (last returned
// offset + 1). RestorePosition seeks to the snapshotted offsets; it may be called several times
// (once per snapshot of an earlier run, e.g. at another parallelism) and takes the offsets of the
// partitions this subtask owns, ignoring the others. Restore must follow Open and precede Poll.
// In a consumer group (instances) the group's committed offsets are the positions: it reads the
// snapshot and ignores it (consuming its bytes, for sources that wrap this one).
// Defaults: isolation.level=read_committed, enable.auto.commit=false, auto.offset.reset=earliest
// (when a restored offset is no longer retained). Offsets are committed to the group only by
// CommitOffsets(), for lag monitoring; they are never used for exactly-once.
// Errors: brokers unreachable: kUnavailable after metadata_timeout_ms (Open) or after
// unavailable_timeout_ms without progress (Poll), naming the brokers; a refused SASL login or a
// broker certificate that fails verification: kInvalidArgument at once (Open, or the next Poll);
// a missing topic is kNotFound; bad options or rejected librdkafka properties are
// kInvalidArgument; a damaged start offsets record is kCorruption naming the file. A failed
// discovery (brokers down) is retried at the next interval; it is not an error by itself.
// RawRecord: payload, key (empty when absent), timestamp (broker/producer time, or
// kNoTimestamp), partition and offset. Payloads stay valid until the next Poll or Close.
// Instances (ConnectorContext::instance set, --instance; docs/deploy.md): the subtask is instead a
// member of the consumer group "flow-<job id>.<operator>" (subscribe, cooperative-sticky,
// static membership: group.instance.id "<job id>.<operator>.<instance>.<subtask>",
// session.timeout.ms 10 s unless set), and Kafka assigns its partitions. Assigned partitions start
// at the group's committed offset (`start` when it has none; kCommitted = kEarliest). Positions
// are not restored from checkpoints: the committed offsets are the truth. At each barrier
// (OnCheckpoint) the offsets go to KafkaInstanceOffsets, whose commit group sends them inside the
// instance's transaction; without an exactly-once group they are committed to the group when the
// checkpoint completes (OnCheckpointComplete; at-least-once). Partitions revoked by a rebalance
// end the run with kReassigned when a transaction may hold their output (the engine restarts at
// once from the last commit); at-least-once sources just stop reading them. A clean stop leaves
// the group, so the partitions move at once; a failed run does not (the restart rejoins as the
// same static member without a rebalance).
// Threading: one instance per subtask, used by one thread at a time.

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "flow/runtime/connectors/connector.h"
#include "flow/runtime/connectors/kafka_group_looker.h"
#include "flow/runtime/connectors/kafka_instance.h"

struct rd_kafka_s;
struct rd_kafka_message_s;
struct rd_kafka_headers_s;
struct rd_kafka_queue_s;
struct rd_kafka_topic_partition_list_s;

namespace flow::rt {

class KafkaConsumerHandle;  // kafka_consumer_handle.h (connectors' own)

enum class KafkaStart { kEarliest, kLatest, kCommitted };

struct KafkaSourceOptions {
  // bootstrap.servers, e.g. "127.0.0.1:9092". Required.
  std::string brokers{};
  // Required.
  std::string topic{};
  // group.id, used only for CommitOffsets()/kCommitted. Default: "flow-" + topic.
  std::string group_id{};
  // Default: kEarliest.
  KafkaStart start = KafkaStart::kEarliest;
  // isolation.level=read_committed when true, read_uncommitted when false. Default: true.
  bool read_committed = true;
  // How long Open waits for metadata and start offsets. Default: 10 s.
  int metadata_timeout_ms = 10000;
  // How long Poll tolerates "all brokers down" before returning kUnavailable. Default: 30 s.
  int unavailable_timeout_ms = 30000;
  // How often Poll looks for partitions added to the topic; 0 = never (partitions added while the
  // job runs are then read only after a restart). Default: 10 s.
  int partition_discovery_interval_ms = 10000;
  // Instances: how long a partition the group assigned may stay without its first record or end
  // of partition while Poll is called and the brokers are up, before Poll ends the run with
  // kReassigned so that the restart reads it with a new consumer. librdkafka 2.0.2 can leave an
  // assigned partition waiting for its committed offset for good (an offset fetch that is never
  // retried after a coordinator change or a rebalance in flight); the partition is then never read
  // and holds event time back. The bound must exceed a legitimate wait: the committed offset of a
  // partition stays unstable until the open transaction of its last owner ends (the takeover:
  // about 2 s after the group reassigns it). Default: 30 s.
  int stalled_assignment_ms = 30000;
  // Instances: how long partitions of the topic may be held by no member of the group while it is
  // stable before the member with the least name leaves it (ending its run with kReassigned), so
  // that the group rebalances and assigns them. A cooperative rebalance withholds the partitions
  // it moves until their owner rejoins; an owner replaced by its own restart (same static member)
  // before it rejoined never does, and the broker keeps the group stable without them. Looked at
  // every 2 s by subtask 0. Default: 10 s.
  int stranded_partitions_ms = 10000;
  // Other librdkafka consumer settings, passed through ("fetch.max.bytes", "security.protocol").
  std::map<std::string, std::string> properties{};
};

class KafkaSource final : public RawSource {
 public:
  explicit KafkaSource(KafkaSourceOptions options);
  ~KafkaSource() override;

  void Bind(const ConnectorContext& context) override { context_ = context; }
  Status Open(uint32_t subtask, uint32_t parallelism) override;
  Result<PollResult> Poll(std::vector<RawRecord>* out, size_t max_records, int timeout_ms) override;
  std::string Locate(const RawRecord& record) const override;
  Status SnapshotPosition(BinaryWriter* out) const override;
  // Reads past one SnapshotPosition of a source of `topic` without restoring it (a wrapping
  // source reads its own part after it). kCorruption for bytes it did not write, kInvalidArgument
  // for another topic's.
  [[nodiscard]] static Status SkipPosition(BinaryReader* in, std::string_view topic);
  Status RestorePosition(BinaryReader* in) override;
  Status RestoreRescaled(const std::vector<OldSourcePosition>& old,
                         uint32_t old_parallelism) override;
  // A partition is pending from its assignment until its first record or end-of-partition event.
  bool SplitsPending() const override {
    return !unheard_.empty() || (!assigned_ && !next_offsets_.empty());
  }
  // Instances: hand the offsets of this barrier to the instance's transaction, or keep them for
  // the group commit after completion (see above). Otherwise nothing.
  Status OnCheckpoint(int64_t checkpoint_id) override;
  Status OnCheckpointComplete(int64_t checkpoint_id) override;
  Status Close() override;
  // librdkafka's rebalance callback (instances only), on the polling thread. Not for callers.
  void HandleRebalance(int err, rd_kafka_topic_partition_list_s* partitions);

  // Commits the current positions to the consumer group (synchronously), for lag monitoring.
  [[nodiscard]] Status CommitOffsets();
  // The partitions this subtask reads and their next offsets. After Open.
  const std::map<int32_t, int64_t>& positions() const { return next_offsets_; }
  // positions() holds this subtask's share: its partitions were chosen by subtask at the first
  // Poll, or its consumer group gave it an assignment (which may be none). Before that, no
  // partitions means "not known yet", not "none".
  bool AssignmentKnown() const { return group_mode_ ? had_assignment_ : rk_ != nullptr; }
  std::optional<std::pair<uint32_t, std::vector<int32_t>>> OwnedSplits() const override;
  // In a consumer group (--instance): the metadata the group committed with each of
  // `partitions` ("" when nothing was committed), read as a read_committed consumer does, so an
  // offset a pending transaction holds back is waited for, up to metadata_timeout_ms. Errors:
  // kUnavailable (or the broker's error) naming group and topic; kFailedPrecondition when the
  // source is not in a group.
  // Each of `partitions` that is assigned, has a committed offset and no position yet takes that
  // offset as its position (where the consumer resumes anyway): from the next checkpoint on, this
  // instance's transactions commit it again under their own checkpoint even before a record of it
  // arrives, so the metadata always names the holder's latest state of it (state_adoption.h).
  [[nodiscard]] Result<std::map<int32_t, std::string>> CommittedMetadata(
      const std::vector<int32_t>& partitions);
  // In a consumer group: the metadata of the offsets the group has committed for partitions
  // 0..partitions-1 of the topic, assigned here or not, without waiting for open transactions
  // (through a second consumer handle that never joins: read_uncommitted fetches do not wait).
  // For retention, which must keep every checkpoint a committed offset names (state_adoption.h).
  [[nodiscard]] Result<std::map<int32_t, std::string>> LastCommittedMetadata(int32_t partitions);

 private:
  // librdkafka's error callback (opaque: the KafkaConsumerHandle); NoteError of its source.
  static void OnError(rd_kafka_s* rk, int err, const char* reason, void* opaque);
  void NoteError(int err, const char* reason);
  // Makes the consumer (handle_, rk_, queue_) and waits until the brokers answer.
  Status NewConsumer(uint32_t subtask, const std::map<std::string, std::string>& settings);
  // Runs NoteError for what the consumer queue holds (before assign(): errors only).
  void ServeErrors();
  // kInvalidArgument once NoteError saw a refused login or an untrusted certificate.
  Status SecurityStatus() const;
  // Start offsets of the owned partitions of a topic with `partitions` partitions (see above).
  Status ResolveStartOffsets(int32_t partitions);
  // Concrete offsets of `partitions` as `start` says, retrying transient errors until
  // metadata_timeout_ms.
  Result<std::map<int32_t, int64_t>> QueryOffsets(const std::vector<int32_t>& partitions,
                                                  KafkaStart start);
  // Assigns owned partitions added to the topic since the last look, at their earliest offsets.
  void DiscoverPartitions();
  // Sets flow_kafka_consumer_lag of each owned partition: its high watermark (as librdkafka last
  // heard it from fetches, no request) less the position; read every second from Poll.
  void UpdateLag();
  Status Assign();
  void ReleaseMessages();
  // Instances (kafka_source_group.cpp): consumer-group settings, and the subscription.
  Status AddGroupSettings(uint32_t subtask, std::map<std::string, std::string>* settings);
  Status Subscribe();
  // What every run's member does first: its slot in the instance's offsets, its metrics.
  void RegisterGroupMember();
  // Instances: the group member the run before kept for this source (kafka_consumer_handle.h),
  // or null. Takes it from the handover; one made with other settings is dropped.
  std::shared_ptr<KafkaConsumerHandle> TakeKeptMember(
      const std::map<std::string, std::string>& settings);
  // Continues as the kept member handle_: its current partitions, as if just assigned, each
  // sought back to its committed offset (the run before read on past it, and its output of
  // that was aborted with its transaction).
  Status ResumeMember();
  // ResumeMember's part for the partitions of `current` (offsets overwritten).
  Status ResumePartitions(rd_kafka_topic_partition_list_s* current);
  // Close in a group: keeps the member for the next run, or leaves (a clean stop) or just closes.
  void CloseMember();
  // The consumer failed for good (`error`, from RD_KAFKA_RESP_ERR__FATAL): kFenced when another
  // process joined the group under this instance's member name, `error` otherwise.
  Status FatalError(const Status& error);
  // Forgets partitions this subtask no longer reads (positions, lag gauges, pending commits).
  void DropPartitions(const std::vector<int32_t>& partitions);
  // Instances: kReassigned when an assigned partition has been unheard for longer than
  // options_.stalled_assignment_ms of polling with the brokers up; ok otherwise.
  Status CheckStalledAssignment(int64_t now_ms);
  // Instances, subtask 0: asks for a look at the group every 2 s (no wait) and reads the answer at
  // a later Poll; kReassigned when this member is to leave (stranded_partitions_ms).
  Status CheckStrandedPartitions(int64_t now_ms);

  // rd_kafka_committed on `rk` for `list`, retried until metadata_timeout_ms: partition ->
  // metadata ("" when none was committed); positions of assigned ones unknown so far take the
  // committed offset when `adopt`.
  Result<std::map<int32_t, std::string>> ReadCommitted(rd_kafka_s* rk,
                                                       rd_kafka_topic_partition_list_s* list,
                                                       bool adopt);

  KafkaSourceOptions options_;
  // The consumer and where its callbacks go; rk_ is handle_->rk.
  std::shared_ptr<KafkaConsumerHandle> handle_;
  rd_kafka_s* rk_ = nullptr;
  std::map<std::string, std::string> settings_;  // what rk_ was made with
  rd_kafka_s* offsets_rk_ = nullptr;             // LastCommittedMetadata's; never joins
  rd_kafka_queue_s* queue_ = nullptr;
  std::map<int32_t, int64_t> next_offsets_;  // partition -> next offset to read
  std::set<int32_t> unheard_;                // assigned, no record or end reported since
  // Per partition: the offset its last end-of-partition event reported (past transaction markers,
  // which are never delivered as records), and its lag gauge.
  std::map<int32_t, int64_t> end_offsets_;
  std::map<int32_t, Metric*> lag_;
  int64_t next_lag_ms_ = 0;                 // monotonic ms of the next UpdateLag
  std::vector<rd_kafka_message_s*> batch_;  // messages backing the last Poll's payloads
  // Their headers, one per message of batch_ (RawRecord::headers points here).
  class MessageHeaders final : public RawHeaders {
   public:
    bool Last(const std::string& name, std::string_view* value) const override;
    rd_kafka_headers_s* headers = nullptr;
  };
  std::vector<MessageHeaders> headers_;
  bool assigned_ = false;
  ConnectorContext context_;
  uint32_t subtask_ = 0;
  uint32_t parallelism_ = 1;
  int32_t known_partitions_ = 0;   // the topic's partition count at the last look
  int64_t next_discovery_ms_ = 0;  // monotonic ms of the next look
  int64_t down_since_ms_ = -1;     // monotonic ms when "all brokers down" was first seen
  std::string down_reason_;
  int security_err_ = 0;  // first refused login / untrusted certificate (KafkaSecurityFailure)
  std::string security_reason_;
  // Instances only.
  bool group_mode_ = false;
  std::string group_id_;  // the consumer group, in group mode
  std::shared_ptr<KafkaInstanceOffsets> instance_offsets_;
  bool transactional_ = false;  // a commit group takes the offsets (else: commit at completion)
  size_t offsets_slot_ = 0;
  std::map<int64_t, std::map<int32_t, int64_t>> pending_commits_;  // checkpoint -> offsets
  std::string reassigned_;  // set when revoked partitions end the run (kReassigned)
  // When each partition was assigned, and since when Poll has been called without a gap of a
  // second (a task held back by backpressure does not poll: its partitions are not stalled).
  std::map<int32_t, int64_t> assigned_at_ms_;
  int64_t polled_since_ms_ = -1;
  int64_t last_poll_ms_ = -1;
  std::unique_ptr<KafkaGroupLooker> group_looker_;  // subtask 0's looks at its group
  int64_t next_look_ms_ = 0;
  int64_t stranded_since_ms_ = -1;  // first look that found partitions held by no member
  Status rebalance_error_;
  bool had_assignment_ = false;  // an assign callback came (see DestroyGroupConsumer)
  // A net (stalled or stranded partitions) ended the run: the next one needs a new member.
  bool renew_member_ = false;
  Metric* rebalances_ = nullptr;
  Metric* assigned_gauge_ = nullptr;
};

}  // namespace flow::rt
