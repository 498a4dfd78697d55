#pragma once
// Exactly-once output to Kafka (docs/exactly-once.md).
//
// KafkaTransactionGroup: ONE transactional librdkafka producer per job (transactional.id
// "flow-<job id>") shared by every exactly-once Kafka sink subtask of the job (its
// "participants"). A Kafka transaction is the commit point of a checkpoint: Commit(N) puts the
// output of every participant's epochs <= N and one progress record (job id, N) into the open
// transaction and commits it; all participants commit atomically, so there is never a
// checkpoint committed for some subtasks and not for others. A participant that passed barrier N
// while N is not committed yet keeps its later records in memory (they belong to the next
// transaction) until Commit(N); before that they go straight into the open transaction.
//
// Start-up (Start): checks the job id; connects (a refused SASL login or an untrusted broker
// certificate is kInvalidArgument at once, see KafkaSecurityStatus); reads the broker's
// transaction.max.timeout.ms (DescribeConfigs) and validates transaction.timeout.ms against it
// and the checkpoint options; creates the compacted progress topic if missing; init_transactions
// (fences any older instance of the job and ABORTS whatever it left open); reads the last
// committed progress record with read_committed: last_committed() is the checkpoint the job must
// restore (0: none, start fresh). Sinks refuse Recover from any other checkpoint.
//
// Errors: broker unreachable -> retried with backoff inside each call up to its bound
// (retry_timeout_ms; no call waits longer, see CommitBoundMs), then kUnavailable (nothing lost;
// the caller may retry), or kAborted when the open transaction lost a record (a write that
// found the producer queue full until the bound: the transaction is aborted). The job's
// cancellation (KafkaTransactionOptions::cancel) ends every wait early with kCancelled. Fenced ->
// kFenced "another instance of job X took over (transactional id flow-X)" (exit code 3; two jobs
// with the same job id fence each other). A transaction that needs an abort -> aborted, then
// kAborted (restart from the last completed checkpoint). Fatal producer errors -> producer
// destroyed, kIoError. After kFenced, kAborted or a fatal error the group stays failed: every later
// call returns that Status. Threading: all methods are thread-safe. One mutex guards the state,
// taken once per WriteBatch (not per record); Commit and Abort also serialise on a second one.
// Commit lets go of the first while the producer flushes and the broker commits: every participant
// is then ahead of the open transaction, so writes meanwhile are held in memory and never reach the
// producer. Fault points: `after-precommit` (end of a participant's PreCommit), `during-commit`
// (output and progress record flushed, transaction not committed), `after-commit-before-cleanup`
// (committed, next transaction not begun).

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "flow/runtime/checkpoint/coordinator.h"
#include "flow/runtime/connectors/kafka_instance.h"
#include "flow/runtime/connectors/kafka_sink.h"
#include "flow/runtime/connectors/kafka_stamp_retention.h"
#include "flow/runtime/txn/commit_group.h"
#include "flow/runtime/txn/two_phase_commit_sink.h"

struct rd_kafka_error_s;
struct rd_kafka_message_s;
struct rd_kafka_topic_s;

namespace flow::rt {

namespace txn_detail {
class KafkaTakeover;
}

struct KafkaTransactionOptions {
  // bootstrap.servers. Required.
  std::string brokers{};
  // Job id: [A-Za-z0-9._-], 1..200 characters; from the script name or --job-id. Required.
  std::string job_id{};
  // One instance of a job scaled out through Kafka (--instance, docs/deploy.md), or "" for a job
  // that runs as one process. An instance has its own transactional id "flow-<job id>@<instance>"
  // and progress record (key "<job id>@<instance>"), and each commit sends the offsets its Kafka
  // sources read (KafkaInstanceOffsets) inside the transaction.
  std::string instance{};
  // Default: "__flow_progress_<job id>". Created (1 partition, cleanup.policy=compact) if missing.
  std::string progress_topic{};
  // Replication factor when the progress topic is created. Default: -1 (the broker's default).
  int progress_replication_factor = -1;
  // transaction.timeout.ms. Default: 0 = the broker's transaction.max.timeout.ms; for an instance,
  // TransactionOpenBoundMs + kInstanceTransactionMarginMs (about 71 s with the defaults).
  int64_t transaction_timeout_ms = 0;
  // The job's checkpoint options, for the timeout check (ValidateTransactionTimeout).
  CheckpointOptions checkpoints = CheckpointOptions::ForJob(true);
  // Bound of each broker round trip (metadata, init, progress read, abort). Default: 30 s.
  int operation_timeout_ms = 30000;
  // How long a call waits for brokers that do not answer before it fails: Start retries
  // init_transactions and the progress read; a write that finds the producer queue full waits
  // for room; Commit's flush and commit_transaction attempts share one deadline of this length.
  // So a cluster that is down fails the attempt within this bound (plus one abort, below) instead
  // of waiting for transaction.timeout.ms. Default: 60 s.
  int retry_timeout_ms = 60000;
  // The job's cancellation flag (ConnectorContext::cancel): once set, every wait above ends
  // within about kTxnWaitSliceMs with kCancelled. Null: never cancelled.
  const std::atomic<bool>* cancel = nullptr;
  // Memory for records of participants that are ahead of the open transaction; beyond it Write
  // returns kUnavailable (retry after the pending checkpoint committed). Default: 256 MiB.
  size_t max_buffered_bytes = size_t{256} << 20;
  // Other librdkafka producer settings ("linger.ms", "compression.type").
  std::map<std::string, std::string> properties{};
};

// The newest committed progress record of a job, as a read_committed reader sees it.
struct KafkaProgress {
  int64_t checkpoint_id = 0;  // 0: nothing committed yet
  uint32_t participants = 0;  // participants of the incarnation that committed it
};

// Reads `progress_topic` (read_committed) and returns the newest progress record of `job_id`.
// A missing topic is "nothing committed". Bounded by `timeout_ms`: kTimedOut / kUnavailable.
// A progress record that does not decode is kCorruption. `properties`: how to connect
// (security.protocol, sasl.*, ssl.*).
[[nodiscard]] Result<KafkaProgress> ReadCommittedProgress(
    const std::string& brokers, const std::string& progress_topic, const std::string& job_id,
    int timeout_ms, const std::map<std::string, std::string>& properties = {});

// How long one wait of the group blocks before it looks at the deadline and the cancel flag again.
inline constexpr int kTxnWaitSliceMs = 200;
// How long the flush before an abort waits for records in flight (librdkafka issue 4849, see
// FlushBeforeAbortLocked): a live broker acknowledges them in milliseconds, a dead one never.
inline constexpr int kFlushBeforeAbortMs = 5000;

// The longest a Commit keeps its transaction open before it succeeds or fails: its flush and
// commit attempts share retry_timeout_ms, and the last attempt may overrun it by one slice. A
// failed commit that needs an abort returns after at most min(operation_timeout_ms,
// kFlushBeforeAbortMs) + operation_timeout_ms more (flush before the abort, the abort).
int64_t CommitBoundMs(const KafkaTransactionOptions& options);

// A Kafka transaction stays open from one commit to the next. It must outlive the longest gap:
// (tolerable_failures + 1) failed-or-slow checkpoints of up to interval + timeout each, plus the
// min pause, plus the commit that ends it (commit_bound_ms, CommitBoundMs: the flush and the
// commit retries run while the transaction is still open). InvalidArgument explaining which
// option to change when transaction_timeout_ms is shorter, or longer than the broker's maximum,
// or when checkpoints are off.
// The longest a transaction stays open (see ValidateTransactionTimeout): transaction.timeout.ms
// must be above it.
int64_t TransactionOpenBoundMs(const CheckpointOptions& checkpoints, int64_t commit_bound_ms);
// Instances without a `transaction_timeout`: transaction.timeout.ms = TransactionOpenBoundMs +
// this (at most the broker's maximum). With the instance defaults (checkpoints every 1 s, 30 s
// checkpoint timeout, kInstanceRetryTimeoutMs) about 71 s: the longest read_committed readers
// wait for the open transaction of an instance that died for good.
inline constexpr int64_t kInstanceTransactionMarginMs = 20000;
// retry_timeout_ms of an instance's sinks unless set (60 s for one process).
inline constexpr int kInstanceRetryTimeoutMs = 20000;
[[nodiscard]] Status ValidateTransactionTimeout(int64_t transaction_timeout_ms,
                                                int64_t broker_max_timeout_ms,
                                                const CheckpointOptions& checkpoints,
                                                int64_t commit_bound_ms, const std::string& job_id);

// "flow-<job id>"; InvalidArgument for a job id that is empty, too long or has other characters.
[[nodiscard]] Result<std::string> TransactionalIdForJob(const std::string& job_id);

class KafkaTransactionGroup final : public CommitGroup {
 public:
  // Does the start-up sequence above for `participants` sink subtasks (numbered 0..n-1 over all
  // exactly-once Kafka sinks of the job).
  [[nodiscard]] static Result<std::unique_ptr<KafkaTransactionGroup>> Start(
      KafkaTransactionOptions options, uint32_t participants);
  // Aborts the open transaction (bounded, best effort; never commits) and closes the producer.
  ~KafkaTransactionGroup() override;
  KafkaTransactionGroup(const KafkaTransactionGroup&) = delete;
  KafkaTransactionGroup& operator=(const KafkaTransactionGroup&) = delete;

  // The checkpoint the job must restore (the last one committed in Kafka); 0 = none.
  int64_t last_committed() const override;
  // "Kafka transactional id flow-<job id>" (instances: "flow-<job id>@<instance>").
  std::string Describe() const override { return "Kafka transactional id " + transactional_id_; }
  const std::string& transactional_id() const { return transactional_id_; }
  const std::string& job_id() const { return options_.job_id; }
  const std::string& instance() const { return options_.instance; }  // "" = one process
  int64_t transaction_timeout_ms() const { return transaction_timeout_ms_; }

  // Partition count of `topic`: kNotFound when it does not exist.
  [[nodiscard]] Result<int32_t> PartitionCount(const std::string& topic);
  // KafkaTopicStampRetention of `topic`, asked through the group's producer.
  [[nodiscard]] Result<std::optional<int64_t>> StampRetention(const std::string& topic);
  // Waits (once per topic) until every partition's leader serves it: librdkafka 2.0.2's
  // transactional producer can count a first batch that met "not leader" (right after topic
  // creation) as delivered when a later batch succeeds. kUnavailable after the retry bound.
  [[nodiscard]] Status WaitForLeaders(const std::string& topic, int32_t partitions);
  // Creates `topic` with `partitions` and topic-level `configs` unless it exists (an existing
  // topic is left as it is; PartitionCount tells what it has). `what` names its role in errors.
  [[nodiscard]] Status CreateTopicIfMissing(const std::string& topic, int32_t partitions,
                                            const std::map<std::string, std::string>& configs,
                                            int replication_factor, std::string_view what);
  // One record of `participant`; partition RD_KAFKA_PARTITION_UA (-1) = murmur2 by key.
  // The same as WriteBatch with one record.
  [[nodiscard]] Status Write(uint32_t participant, const std::string& topic, int32_t partition,
                             std::string_view key, std::string_view payload, TimestampMs timestamp);
  // A WriteBatch `partition` meaning "each record's TxnRecord::partition".
  static constexpr int32_t kPartitionPerRecord = -2;
  // `records` of `participant` in order, under one lock acquisition: into the open transaction,
  // or held for the next one while the participant is ahead of it. `*written` = records taken
  // (all on OK). kUnavailable (memory for held records exhausted): records [written, end) were
  // not taken; retry them after the pending commit. A record the producer refuses (e.g. larger
  // than message.max.bytes) would leave a hole in the transaction: the transaction is aborted
  // and the group fails with kAborted naming the record's index.
  [[nodiscard]] Status WriteBatch(uint32_t participant, const std::string& topic, int32_t partition,
                                  std::span<const TxnRecord> records, size_t* written);
  // Barrier `checkpoint_id` reached `participant`: its records so far belong to checkpoint
  // <= checkpoint_id. Ids of one participant must grow (kInternal otherwise).
  [[nodiscard]] Status PreCommit(uint32_t participant, int64_t checkpoint_id);
  // Commits everything of epochs <= checkpoint_id atomically with its progress record and
  // begins the next transaction. Idempotent (<= last_committed() is OK). Every participant
  // must have pre-committed checkpoint_id (kInternal otherwise).
  [[nodiscard]] Status Commit(int64_t checkpoint_id) override;
  // Aborts the open transaction; the group is then failed (kAborted) until a restart.
  [[nodiscard]] Status Abort();

  // Tests: called by Commit(N) with N, after the flush and before commit_transaction, without
  // the state lock (writers may run). Set before any Commit.
  void SetCommitHookForTest(std::function<void(int64_t checkpoint_id)> hook) {
    commit_hook_ = std::move(hook);
  }
  // Tests: the transactional producer, e.g. to inject broker errors when it runs on librdkafka's
  // mock cluster (property test.mock.num.brokers).
  rd_kafka_s* producer_for_test() const { return rk_; }

 private:
  struct Buffered {
    std::string topic;
    int32_t partition;
    std::string key;
    std::string payload;
    int64_t timestamp;
    std::vector<OutHeader> headers;
  };
  struct Segment {
    int64_t sealed_at = 0;  // 0: still open
    std::vector<Buffered> records;
  };
  struct Slot {
    int64_t last_precommit = 0;
    std::deque<Segment> segments;
  };

  KafkaTransactionGroup(KafkaTransactionOptions options, uint32_t participants);
  Status Init();
  // The producer's handle of `topic`, made once: producing by handle skips librdkafka's topic
  // lookup (a lock and a search by name) per record.
  Result<rd_kafka_topic_s*> TopicLocked(const std::string& topic);
  Status ProduceLocked(rd_kafka_topic_s* rkt, const std::string& topic, int32_t partition,
                       std::string_view key, std::string_view payload, int64_t timestamp,
                       std::span<const OutHeader> headers = {});
  // Partitions moved to another instance: aborts the open transaction unless the group already
  // failed, and fails the group with `why` (kReassigned).
  Status AbortReassignedLocked(Status why);
  // A record could not be queued: the transaction is incomplete and must never commit.
  Status AbortIncompleteLocked(const Status& cause, std::string_view transaction);
  // Topic handles first: librdkafka requires them released before the producer.
  void DestroyProducerLocked();
  Status TxnErrorLocked(rd_kafka_error_s* error, std::string_view step);
  // The producer was fenced, whichever call noticed: InstanceFencedLocked for an instance,
  // kFenced (another job with this id) otherwise.
  Status FencedLocked(const std::string& cause);
  // An instance's producer was fenced: kReassigned when another instance's takeover did it
  // (txn_detail::KafkaTakeover left its marker), kFenced naming the duplicate --instance otherwise.
  Status InstanceFencedLocked(const std::string& cause);
  // commit_transaction in slices of kTxnWaitSliceMs, retrying retriable errors until
  // `deadline_ms` (monotonic) or cancellation; the final error (owned by the caller) or null,
  // and *cancelled when the job's cancellation ended it. Runs without mu_ (only Commit calls it,
  // holding commit_mu_).
  rd_kafka_error_s* CommitWithRetry(int64_t deadline_ms, bool* cancelled);
  // rd_kafka_flush in slices until the queue is empty, `deadline_ms` passed or the job is
  // cancelled; true when everything was delivered.
  bool FlushUntil(int64_t deadline_ms);
  bool Cancelled() const {
    return options_.cancel != nullptr && options_.cancel->load(std::memory_order_relaxed);
  }
  void FlushBeforeAbortLocked();

  // Sends each source's offsets (instances) into the open transaction; runs without mu_.
  Status SendOffsetsUnlocked(const std::vector<const KafkaReadOffsets*>& reads,
                             int64_t deadline_ms);
  Status CommitLocked(int64_t checkpoint_id, const std::vector<const KafkaReadOffsets*>& reads);
  KafkaTransactionOptions options_;
  std::string progress_key_;                                // the job id, or "<job id>@<instance>"
  std::shared_ptr<KafkaInstanceOffsets> instance_offsets_;  // instances only
  std::unique_ptr<txn_detail::KafkaTakeover> takeover_;     // instances only
  std::string transactional_id_;
  int64_t transaction_timeout_ms_ = 0;
  int64_t run_started_wall_ms_ = 0;  // when Init began: older takeover markers are stale
  rd_kafka_s* rk_ = nullptr;
  // The first record the brokers refused (its delivery report), named in the error of the produce
  // call that finds the transaction failed: librdkafka answers that call with "Erroneous state"
  // only. Own mutex: rd_kafka_poll serves the reports also while mu_ is held.
  static void OnDelivery(rd_kafka_s* rk, const rd_kafka_message_s* m, void* opaque);
  std::mutex delivery_mu_;
  std::string first_refused_;
  std::function<void(int64_t)> commit_hook_;
  std::mutex commit_mu_;  // one Commit or Abort at a time; taken before mu_
  mutable std::mutex mu_;
  std::vector<Slot> slots_;
  std::set<std::string> leaders_ready_;                           // topics WaitForLeaders confirmed
  std::map<std::string, rd_kafka_topic_s*, std::less<>> topics_;  // TopicLocked's handles
  int64_t committed_ = 0;
  size_t buffered_bytes_ = 0;
  Status failed_;
};

// A participant's Recover: the restored checkpoint must be the group's last committed one
// (kInvalidArgument naming both otherwise: restoring an older one would duplicate output, a newer
// one lose it).
[[nodiscard]] Status CheckRestoredIsCommitted(const KafkaTransactionGroup& group,
                                              int64_t restored_checkpoint_id);

struct KafkaExactlyOnceSinkOptions {
  // Required.
  std::string topic{};
  // Default: kKeyHash (murmur2 like the Java client); kExplicit writes to `partition`.
  KafkaPartitioner partitioner = KafkaPartitioner::kKeyHash;
  int32_t partition = 0;
};

// One sink subtask on a shared group. Recover checks the restored checkpoint is the group's
// last committed one (kInvalidArgument naming both otherwise: restoring an older one would
// duplicate output, a newer one lose it). Commit(N) commits the whole group; the other
// participants' Commit(N) are then no-ops. CommitIsResumable() is false.
class KafkaExactlyOnceSink final : public TwoPhaseCommitSink {
 public:
  KafkaExactlyOnceSink(KafkaTransactionGroup* group, uint32_t participant,
                       KafkaExactlyOnceSinkOptions options)
      : group_(group), participant_(participant), options_(std::move(options)) {}

  Status Open(uint32_t subtask, uint32_t parallelism) override;
  Status Recover(int64_t restored_checkpoint_id) override;
  Status BeginTransaction() override;
  Status Write(std::string_view key, std::string_view payload, TimestampMs timestamp) override;
  // One call of the group's WriteBatch.
  Status WriteBatch(std::span<const TxnRecord> records, size_t* written) override;
  Status PreCommit(int64_t checkpoint_id) override;
  Status Commit(int64_t checkpoint_id) override;
  Status Abort(int64_t checkpoint_id) override;
  Status Close() override { return Status::Ok(); }
  bool CommitIsResumable() const override { return false; }

 private:
  KafkaTransactionGroup* group_;
  uint32_t participant_;
  KafkaExactlyOnceSinkOptions options_;
  KafkaStaleStampWarning stale_stamps_;
  bool opened_ = false;
  bool recovered_ = false;
};

}  // namespace flow::rt
