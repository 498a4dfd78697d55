#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "../connectors/kafka_common.h"
#include "flow/runtime/checkpoint/fault_injection.h"
#include "flow/runtime/common/job_id.h"
#include "flow/runtime/txn/kafka_exactly_once_sink.h"
#include "kafka_admin.h"
#include "kafka_takeover.h"

namespace flow::rt {
namespace {

struct ErrorFree {
  void operator()(rd_kafka_error_t* e) const { rd_kafka_error_destroy(e); }
};
using ErrorPtr = std::unique_ptr<rd_kafka_error_t, ErrorFree>;

// What a held record's bytes count against max_buffered_bytes (plus its bookkeeping).
size_t HeldBytes(std::string_view topic, std::string_view key, std::string_view payload,
                 std::span<const OutHeader> headers) {
  size_t n = topic.size() + key.size() + payload.size();
  for (const OutHeader& h : headers) n += h.name.size() + h.value.size() + sizeof(OutHeader);
  return n;
}

void Backoff(int64_t* delay_ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(*delay_ms));
  *delay_ms = std::min<int64_t>(*delay_ms * 2, 2000);
}

}  // namespace

Result<std::string> TransactionalIdForJob(const std::string& job_id) {
  if (!IsValidJobId(job_id)) {
    return Status::InvalidArgument(fmt::format(
        "kafka exactly-once: job id `{}` must be 1..200 characters of [A-Za-z0-9._-] (--job-id)",
        job_id));
  }
  return KafkaTransactionalId(job_id, "");
}

int64_t CommitBoundMs(const KafkaTransactionOptions& options) {
  return int64_t{options.retry_timeout_ms} + kTxnWaitSliceMs;
}

int64_t TransactionOpenBoundMs(const CheckpointOptions& checkpoints, int64_t commit_bound_ms) {
  const int64_t one = checkpoints.interval_ms + checkpoints.timeout_ms;
  return int64_t{checkpoints.tolerable_failures + 1} * one + checkpoints.min_pause_ms +
         commit_bound_ms;
}

Status ValidateTransactionTimeout(int64_t transaction_timeout_ms, int64_t broker_max_timeout_ms,
                                  const CheckpointOptions& checkpoints, int64_t commit_bound_ms,
                                  const std::string& job_id) {
  if (checkpoints.interval_ms <= 0) {
    return Status::InvalidArgument(
        fmt::format("job `{}`: an exactly-once Kafka sink needs periodic checkpoints "
                    "(--checkpoint-interval): its "
                    "output becomes visible only when a checkpoint completes",
                    job_id));
  }
  if (transaction_timeout_ms > broker_max_timeout_ms) {
    return Status::InvalidArgument(fmt::format(
        "job `{}`: the transaction timeout (the sink's `transaction_timeout`, "
        "transaction.timeout.ms) "
        "{} ms exceeds the broker's transaction.max.timeout.ms {}; lower it or raise the broker "
        "setting",
        job_id, transaction_timeout_ms, broker_max_timeout_ms));
  }
  const int64_t needed = TransactionOpenBoundMs(checkpoints, commit_bound_ms);
  if (transaction_timeout_ms <= needed) {
    return Status::InvalidArgument(fmt::format(
        "job `{}`: the transaction timeout (the sink's `transaction_timeout`, "
        "transaction.timeout.ms) "
        "{} ms is too short: a transaction stays open until the next "
        "checkpoint commits, up to (tolerable failures {} + 1) x (checkpoint interval {} + "
        "checkpoint "
        "timeout {}) + min pause {} + the commit's own bound {} (flush and commit retries, "
        "retry_timeout) = {} ms; the broker would abort it and fail the job. Lower "
        "--checkpoint-timeout or --checkpoint-interval, or raise `transaction_timeout` (broker "
        "maximum {} ms)",
        job_id, transaction_timeout_ms, checkpoints.tolerable_failures, checkpoints.interval_ms,
        checkpoints.timeout_ms, checkpoints.min_pause_ms, commit_bound_ms, needed,
        broker_max_timeout_ms));
  }
  return Status::Ok();
}

KafkaTransactionGroup::KafkaTransactionGroup(KafkaTransactionOptions options, uint32_t participants)
    : options_(std::move(options)), slots_(participants) {}

KafkaTransactionGroup::~KafkaTransactionGroup() {
  if (instance_offsets_ != nullptr) instance_offsets_->Detach();
  if (rk_ == nullptr) return;
  // Never commits. Aborting the open transaction now (instead of leaving it to the next
  // incarnation's init_transactions or the broker's timeout) frees read_committed readers at
  // once. The flush also avoids a librdkafka 2.0 assertion when a handle is destroyed while an
  // AddPartitionsToTxn request is in flight. Both are bounded; errors change nothing: an
  // unaborted transaction is never committed either.
  if (failed_.ok()) {
    constexpr int kShutdownMs = 5000;
    (void)rd_kafka_flush(rk_, std::min(options_.operation_timeout_ms, kShutdownMs));
    ErrorPtr error(
        rd_kafka_abort_transaction(rk_, std::min(options_.operation_timeout_ms, kShutdownMs)));
  }
  DestroyProducerLocked();
}

void KafkaTransactionGroup::DestroyProducerLocked() {
  for (auto& [name, rkt] : topics_) rd_kafka_topic_destroy(rkt);
  topics_.clear();
  rd_kafka_destroy(rk_);
  rk_ = nullptr;
}

Result<rd_kafka_topic_t*> KafkaTransactionGroup::TopicLocked(const std::string& topic) {
  if (auto it = topics_.find(topic); it != topics_.end()) return it->second;
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk_, topic.c_str(), nullptr);
  if (rkt == nullptr) {
    return Status::InvalidArgument(
        fmt::format("kafka exactly-once (job `{}`): cannot use topic `{}`: {}", options_.job_id,
                    topic, rd_kafka_err2str(rd_kafka_last_error())));
  }
  topics_.emplace(topic, rkt);
  return rkt;
}

Result<std::unique_ptr<KafkaTransactionGroup>> KafkaTransactionGroup::Start(
    KafkaTransactionOptions options, uint32_t participants) {
  if (options.brokers.empty())
    return Status::InvalidArgument("kafka exactly-once: `brokers` is empty");
  if (participants == 0) return Status::InvalidArgument("kafka exactly-once: no participants");
  if (options.operation_timeout_ms <= 0 || options.retry_timeout_ms < 0) {
    return Status::InvalidArgument("kafka exactly-once: operation/retry timeouts must be positive");
  }
  Result<std::string> id = TransactionalIdForJob(options.job_id);
  if (!id.ok()) return id.status();
  if (!options.instance.empty() &&
      (options.instance.size() > 64 || !IsValidJobId(options.instance))) {
    return Status::InvalidArgument(fmt::format(
        "kafka exactly-once: instance `{}` must be 1..64 characters of [A-Za-z0-9._-] (--instance)",
        options.instance));
  }
  if (options.progress_topic.empty()) {
    // An instance's own topic: a read_committed reader of a topic that other instances also
    // commit to would wait behind their open transactions (and a killed one's until it restarts).
    options.progress_topic = KafkaProgressTopic(options.job_id, options.instance);
    if (options.progress_topic.size() > 249) {
      return Status::InvalidArgument(
          fmt::format("kafka exactly-once: the progress topic `{}` is longer than Kafka's 249 "
                      "characters: shorten the "
                      "--job-id or the --instance name",
                      options.progress_topic));
    }
  }
  const std::string key =
      options.instance.empty() ? options.job_id : options.job_id + "@" + options.instance;
  const bool instance = !options.instance.empty();
  const std::string job_id = options.job_id;
  std::unique_ptr<KafkaTransactionGroup> group(
      new KafkaTransactionGroup(std::move(options), participants));
  group->transactional_id_ = KafkaTransactionalId(job_id, group->options_.instance);
  group->progress_key_ = key;
  FLOW_RETURN_IF_ERROR(group->Init());
  if (instance) {
    // Sources open after the group: they find it attached and leave their offsets to it.
    group->instance_offsets_ = KafkaInstanceOffsets::ForJob(job_id);
    group->instance_offsets_->Attach();
    const KafkaTransactionOptions& o = group->options_;
    group->takeover_ = std::make_unique<txn_detail::KafkaTakeover>(
        txn_detail::KafkaTakeover::Options{.brokers = o.brokers,
                                           .connection = KafkaConnectionProperties(o.properties),
                                           .job_id = o.job_id,
                                           .instance = o.instance,
                                           .transaction_timeout_ms = group->transaction_timeout_ms_,
                                           .operation_timeout_ms = o.operation_timeout_ms});
    group->instance_offsets_->SetAssignedListener(
        [takeover = group->takeover_.get()](const std::string& g) { takeover->Assigned(g); });
  }
  return group;
}

Status KafkaTransactionGroup::Init() {
  const KafkaTransactionOptions& o = options_;
  // Admin steps with a plain client: the transactional producer needs the timeout first. It
  // connects like the producer (security.*, sasl.*, ssl.* of the properties).
  const std::map<std::string, std::string> connection = KafkaConnectionProperties(o.properties);
  std::map<std::string, std::string> admin_settings = connection;
  admin_settings["bootstrap.servers"] = o.brokers;
  KafkaSecurityWatch watch;
  Result<rd_kafka_t*> admin =
      txn_detail::MakeClient(RD_KAFKA_PRODUCER, admin_settings, "kafka exactly-once admin", &watch);
  if (!admin.ok()) return admin.status();
  std::unique_ptr<rd_kafka_t, void (*)(rd_kafka_t*)> admin_rk(*admin, rd_kafka_destroy);
  // A refused login or an untrusted certificate fails the start at once: no retry cures it, and
  // the producer's init_transactions would only time out on it.
  const std::string what = fmt::format("kafka exactly-once (job `{}`)", o.job_id);
  FLOW_RETURN_IF_ERROR(KafkaAwaitBrokers(
      admin_rk.get(), [&] { rd_kafka_poll(admin_rk.get(), 0); },
      [&] { return watch.Failure(what, o.brokers); }, o.brokers, o.operation_timeout_ms, what));
  Result<int64_t> broker_max =
      txn_detail::BrokerMaxTransactionTimeout(admin_rk.get(), o.brokers, o.operation_timeout_ms);
  if (!broker_max.ok()) return broker_max.status();
  transaction_timeout_ms_ = o.transaction_timeout_ms > 0 ? o.transaction_timeout_ms : *broker_max;
  if (o.transaction_timeout_ms <= 0 && !o.instance.empty()) {
    // An instance that dies for good holds back read_committed readers of its output until its
    // open transaction times out: keep that as short as the checkpoints allow.
    transaction_timeout_ms_ =
        std::min(*broker_max, TransactionOpenBoundMs(o.checkpoints, CommitBoundMs(o)) +
                                  kInstanceTransactionMarginMs);
  }
  FLOW_RETURN_IF_ERROR(ValidateTransactionTimeout(transaction_timeout_ms_, *broker_max,
                                                  o.checkpoints, CommitBoundMs(o), o.job_id));
  FLOW_RETURN_IF_ERROR(txn_detail::EnsureProgressTopic(
      admin_rk.get(), o.progress_topic, o.progress_replication_factor, o.operation_timeout_ms));
  admin_rk.reset();

  std::map<std::string, std::string> settings = {
      {"bootstrap.servers", o.brokers},
      {"transactional.id", transactional_id_},
      {"transaction.timeout.ms", std::to_string(transaction_timeout_ms_)},
      {"message.timeout.ms", std::to_string(transaction_timeout_ms_)},
      {"partitioner", "murmur2_random"},
      {"linger.ms", "5"},
  };
  for (const auto& [k, v] : o.properties) settings[k] = v;
  Result<rd_kafka_t*> producer = txn_detail::MakeClient(
      RD_KAFKA_PRODUCER, settings, "kafka exactly-once producer", nullptr, &OnDelivery, this);
  if (!producer.ok()) return producer.status();
  rk_ = *producer;

  std::lock_guard<std::mutex> lock(mu_);
  run_started_wall_ms_ = WallNowMs();
  // Fences older instances and aborts what they left open. Retried while brokers are away.
  int64_t deadline = SteadyNowMs() + o.retry_timeout_ms;
  int64_t delay = 100;
  while (true) {
    ErrorPtr error(rd_kafka_init_transactions(rk_, o.operation_timeout_ms));
    if (!error) break;
    if (rd_kafka_error_is_retriable(error.get()) && SteadyNowMs() < deadline && !Cancelled()) {
      Backoff(&delay);
      continue;
    }
    return TxnErrorLocked(error.get(), "init_transactions");
  }
  Result<KafkaProgress> progress = ReadCommittedProgress(o.brokers, o.progress_topic, progress_key_,
                                                         o.operation_timeout_ms, connection);
  while (!progress.ok() && progress.status().code() == StatusCode::kUnavailable &&
         SteadyNowMs() < deadline && !Cancelled()) {
    Backoff(&delay);
    progress = ReadCommittedProgress(o.brokers, o.progress_topic, progress_key_,
                                     o.operation_timeout_ms, connection);
  }
  if (!progress.ok()) return progress.status();
  committed_ = progress->checkpoint_id;
  ErrorPtr error(rd_kafka_begin_transaction(rk_));
  if (error) return TxnErrorLocked(error.get(), "begin_transaction");
  return Status::Ok();
}

int64_t KafkaTransactionGroup::last_committed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return committed_;
}

Status KafkaTransactionGroup::TxnErrorLocked(rd_kafka_error_t* error, std::string_view step) {
  std::string what =
      fmt::format("kafka exactly-once (job `{}`, transactional id `{}`): {}: {}", options_.job_id,
                  transactional_id_, step, rd_kafka_error_string(error));
  rd_kafka_resp_err_t code = rd_kafka_error_code(error);
  if (rd_kafka_error_is_fatal(error)) {
    char reason[512];
    rd_kafka_resp_err_t fatal = rd_kafka_fatal_error(rk_, reason, sizeof reason);
    if (fatal == RD_KAFKA_RESP_ERR__FENCED || fatal == RD_KAFKA_RESP_ERR_PRODUCER_FENCED ||
        code == RD_KAFKA_RESP_ERR__FENCED || code == RD_KAFKA_RESP_ERR_PRODUCER_FENCED ||
        fatal == RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH) {
      failed_ = FencedLocked(fmt::format("{}: {}", step, rd_kafka_error_string(error)));
    } else {
      failed_ = Status::IoError(what + " (fatal; producer destroyed)");
    }
    DestroyProducerLocked();
    return failed_;
  }
  if (rd_kafka_error_txn_requires_abort(error)) {
    FlushBeforeAbortLocked();
    ErrorPtr abort_error(rd_kafka_abort_transaction(rk_, options_.operation_timeout_ms));
    if (abort_error && rd_kafka_error_is_fatal(abort_error.get())) {
      // A newer producer's fencing can reach the commit as an abortable error (Kafka 4.1 answers
      // an EndTxn during the fence's pending state with UNKNOWN_SERVER_ERROR) and only the abort
      // as a fencing. Judged as what it is: restarting would fence the newer producer in turn.
      return TxnErrorLocked(abort_error.get(), fmt::format("{}: {}; then its abort", step,
                                                           rd_kafka_error_string(error)));
    }
    failed_ = Status::Aborted(what + "; transaction aborted" +
                              (abort_error ? std::string(" (abort failed: ") +
                                                 rd_kafka_error_string(abort_error.get()) + ")"
                                           : std::string()) +
                              "; restart from the last completed checkpoint");
    return failed_;
  }
  if (rd_kafka_error_is_retriable(error)) return Status::Unavailable(what);
  return Status::IoError(what);
}

Status KafkaTransactionGroup::FencedLocked(const std::string& cause) {
  if (!options_.instance.empty()) return InstanceFencedLocked(cause);
  return Status::Fenced(
      fmt::format("another instance of job `{}` took over (transactional id `{}`); this instance "
                  "stops. Two jobs with the same --job-id fence each other. ({})",
                  options_.job_id, transactional_id_, cause));
}

Status KafkaTransactionGroup::InstanceFencedLocked(const std::string& cause) {
  // Each takeover leaves a marker in this instance's progress topic just before it fences; a
  // second process under this instance's name leaves none.
  constexpr int kMarkerReadMs = 10000;
  Result<std::string> taker = txn_detail::FindTakeoverMarker(
      options_.brokers, KafkaConnectionProperties(options_.properties), options_.progress_topic,
      run_started_wall_ms_ - txn_detail::kTakeoverMarkerSlackMs, kMarkerReadMs);
  if (taker.ok() && taker->empty()) {
    return Status::Fenced(fmt::format(
        "another process runs as instance `{}` of job `{}`: it fenced transactional id `{}` ({}). "
        "Every instance of a job needs its own --instance name",
        options_.instance, options_.job_id, transactional_id_, cause));
  }
  // Taken for stopped by another instance. When the marker could not be read, restarting is the
  // safe side: a duplicate's next fencing is judged again.
  return Status::Reassigned(fmt::format(
      "instance `{}` took this one for stopped and aborted its open transaction (transactional "
      "id `{}`: {})",
      taker.ok() ? *taker : std::string("?"), transactional_id_, cause));
}

void KafkaTransactionGroup::FlushBeforeAbortLocked() {
  // librdkafka may send EndTxn(abort) before the coordinator processed AddPartitionsToTxn for the
  // records in flight; the broker then answers INVALID_TXN_STATE, which is fatal (librdkafka
  // issue 4849). Once the records are acknowledged their partitions are registered. A flush
  // timeout is fine: the abort is attempted anyway and a failure leaves nothing committed. A live
  // broker acknowledges in milliseconds; waiting the full operation timeout for a dead one would
  // only delay the job's restart.
  (void)FlushUntil(SteadyNowMs() + std::min(options_.operation_timeout_ms, kFlushBeforeAbortMs));
}

bool KafkaTransactionGroup::FlushUntil(int64_t deadline_ms) {
  while (true) {
    const int64_t left = deadline_ms - SteadyNowMs();
    if (left <= 0 || Cancelled()) return rd_kafka_outq_len(rk_) == 0;
    if (rd_kafka_flush(rk_, static_cast<int>(std::min<int64_t>(left, kTxnWaitSliceMs))) ==
        RD_KAFKA_RESP_ERR_NO_ERROR) {
      return true;
    }
  }
}

Status KafkaTransactionGroup::WaitForLeaders(const std::string& topic, int32_t partitions) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!failed_.ok()) return failed_;
  if (leaders_ready_.count(topic) != 0) return Status::Ok();
  Status s = KafkaWaitForLeaders(rk_, topic, partitions, options_.retry_timeout_ms);
  if (!s.ok()) return s;
  leaders_ready_.insert(topic);
  return Status::Ok();
}

Result<std::optional<int64_t>> KafkaTransactionGroup::StampRetention(const std::string& topic) {
  return KafkaTopicStampRetention(rk_, topic, options_.operation_timeout_ms);
}

Result<int32_t> KafkaTransactionGroup::PartitionCount(const std::string& topic) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!failed_.ok()) return failed_;
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk_, topic.c_str(), nullptr);
  if (rkt == nullptr)
    return Status::InvalidArgument(fmt::format("kafka exactly-once: bad topic `{}`", topic));
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_resp_err_t err = rd_kafka_metadata(rk_, 0, rkt, &md, options_.operation_timeout_ms);
  rd_kafka_topic_destroy(rkt);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable(fmt::format("kafka exactly-once: brokers {} unreachable ({})",
                                           options_.brokers, rd_kafka_err2str(err)));
  }
  int32_t count = md->topic_cnt == 1 && md->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR
                      ? md->topics[0].partition_cnt
                      : 0;
  rd_kafka_metadata_destroy(md);
  if (count <= 0)
    return Status::NotFound(fmt::format("kafka exactly-once: topic `{}` not found", topic));
  return count;
}

Status KafkaTransactionGroup::CreateTopicIfMissing(
    const std::string& topic, int32_t partitions, const std::map<std::string, std::string>& configs,
    int replication_factor, std::string_view what) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!failed_.ok()) return failed_;
  return txn_detail::CreateTopicIfMissing(rk_, topic, partitions, replication_factor, configs,
                                          options_.operation_timeout_ms, what);
}

void KafkaTransactionGroup::OnDelivery(rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
  if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) return;
  auto* group = static_cast<KafkaTransactionGroup*>(opaque);
  std::lock_guard<std::mutex> lock(group->delivery_mu_);
  if (!group->first_refused_.empty()) return;
  group->first_refused_ =
      fmt::format("the brokers refused a record of `{}` [{}]: {}", rd_kafka_topic_name(m->rkt),
                  m->partition, rd_kafka_err2str(m->err));
  if (m->err == RD_KAFKA_RESP_ERR_INVALID_TIMESTAMP) {
    // The sinks stamp records with their event time (a failed report no longer carries it).
    group->first_refused_ +=
        " (records are stamped with their event time; the broker's "
        "log.message.timestamp.before.max.ms and after.max.ms bound how far from its clock that "
        "may be: an event time in the future, or one far in the past; a topic with "
        "message.timestamp.type=LogAppendTime is stamped by the broker and takes any)";
  }
}

Status KafkaTransactionGroup::ProduceLocked(rd_kafka_topic_t* rkt, const std::string& topic,
                                            int32_t partition, std::string_view key,
                                            std::string_view payload, int64_t timestamp,
                                            std::span<const OutHeader> headers) {
  int64_t deadline = 0;  // set when the queue is first found full
  KafkaHeaders h = MakeKafkaHeaders(headers);
  while (true) {
    rd_kafka_resp_err_t err = rd_kafka_producev(
        rk_, RD_KAFKA_V_RKT(rkt), RD_KAFKA_V_PARTITION(partition),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_VALUE(const_cast<char*>(payload.data()), payload.size()),
        RD_KAFKA_V_KEY(key.empty() ? nullptr : key.data(), key.size()),
        RD_KAFKA_V_TIMESTAMP(timestamp), RD_KAFKA_V_HEADERS(h.get()), RD_KAFKA_V_END);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      (void)h.release();  // the message owns them now
      return Status::Ok();
    }
    if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      char reason[512];
      if (err == RD_KAFKA_RESP_ERR__FATAL) {
        rd_kafka_resp_err_t fatal = rd_kafka_fatal_error(rk_, reason, sizeof reason);
        if (fatal == RD_KAFKA_RESP_ERR__FENCED || fatal == RD_KAFKA_RESP_ERR_PRODUCER_FENCED ||
            fatal == RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH) {
          // As when the commit notices: an instance taken for stopped restarts (kReassigned).
          failed_ = FencedLocked(fmt::format("produce: {}", reason));
        } else {
          failed_ = Status::IoError(fmt::format(
              "kafka exactly-once (job `{}`): fatal producer error: {}", options_.job_id, reason));
        }
        return failed_;
      }
      std::string why = rd_kafka_err2str(err);
      if (err == RD_KAFKA_RESP_ERR__STATE) {
        rd_kafka_poll(rk_, 0);  // the reports of the records that failed the transaction
        std::lock_guard<std::mutex> delivery(delivery_mu_);
        if (!first_refused_.empty())
          why = fmt::format("the open transaction failed: {}", first_refused_);
      }
      return Status::IoError(
          fmt::format("kafka exactly-once (job `{}`): cannot produce to `{}`: {}", options_.job_id,
                      topic, why));
    }
    // Backpressure: wait for deliveries to free queue space. Records wait for a broker up to
    // message.timeout.ms (= transaction.timeout.ms, up to 15 min): a cluster that is down must
    // fail the attempt long before that.
    const int64_t now = SteadyNowMs();
    if (deadline == 0) deadline = now + options_.retry_timeout_ms;
    if (Cancelled()) {
      return Status::Cancelled(
          fmt::format("kafka exactly-once (job `{}`): job cancelled while the producer queue "
                      "was full",
                      options_.job_id));
    }
    if (now >= deadline) {
      return Status::Unavailable(
          fmt::format("kafka exactly-once (job `{}`): producer queue still full after {} ms "
                      "(retry_timeout): brokers {} take no "
                      "records ({} records queued for `{}` and others)",
                      options_.job_id, options_.retry_timeout_ms, options_.brokers,
                      rd_kafka_outq_len(rk_), topic));
    }
    rd_kafka_poll(rk_, static_cast<int>(std::min<int64_t>(deadline - now, 100)));
  }
}

Status KafkaTransactionGroup::AbortIncompleteLocked(const Status& cause,
                                                    std::string_view transaction) {
  if (!failed_.ok()) return failed_;  // fenced or fatal: nothing left to abort with
  FlushBeforeAbortLocked();
  ErrorPtr abort_error(rd_kafka_abort_transaction(rk_, options_.operation_timeout_ms));
  if (abort_error && rd_kafka_error_is_fatal(abort_error.get())) {
    // A fencing only the abort saw (see TxnErrorLocked).
    return TxnErrorLocked(abort_error.get(),
                          fmt::format("{}; then the abort of {}", cause.message(), transaction));
  }
  failed_ = Status::Aborted(fmt::format(
      "{}; {} aborted{}; restart from the last completed checkpoint", cause.message(), transaction,
      abort_error ? fmt::format(" (abort failed: {})", rd_kafka_error_string(abort_error.get()))
                  : std::string()));
  return failed_;
}

Status KafkaTransactionGroup::Write(uint32_t participant, const std::string& topic,
                                    int32_t partition, std::string_view key,
                                    std::string_view payload, TimestampMs timestamp) {
  const TxnRecord record{key, payload, timestamp};
  size_t written = 0;
  return WriteBatch(participant, topic, partition, std::span<const TxnRecord>(&record, 1),
                    &written);
}

Status KafkaTransactionGroup::WriteBatch(uint32_t participant, const std::string& topic,
                                         int32_t partition, std::span<const TxnRecord> records,
                                         size_t* written) {
  *written = 0;
  std::lock_guard<std::mutex> lock(mu_);
  if (!failed_.ok()) return failed_;
  if (participant >= slots_.size())
    return Status::Internal("kafka exactly-once: participant out of range");
  if (records.empty()) return Status::Ok();
  Slot& slot = slots_[participant];
  if (slot.last_precommit <= committed_ && slot.segments.empty()) {
    Result<rd_kafka_topic_t*> rkt = TopicLocked(topic);
    if (!rkt.ok()) return rkt.status();
    for (const TxnRecord& r : records) {
      const int64_t ts = r.timestamp == kNoTimestamp ? 0 : r.timestamp;
      const int32_t p = partition == kPartitionPerRecord ? r.partition : partition;
      Status s = ProduceLocked(*rkt, topic, p, r.key, r.payload, ts, r.headers);
      if (!s.ok()) {
        return AbortIncompleteLocked(
            Status(s.code(), fmt::format("{} (record {} of a batch of {})", s.message(), *written,
                                         records.size())),
            "the open transaction");
      }
      ++*written;
    }
    // Serves delivery reports and errors once per batch (librdkafka needs regular polls).
    rd_kafka_poll(rk_, 0);
    return Status::Ok();
  }
  // Ahead of the open transaction: hold the records for the one after it.
  for (const TxnRecord& r : records) {
    const size_t bytes = HeldBytes(topic, r.key, r.payload, r.headers) + sizeof(Buffered);
    if (buffered_bytes_ + bytes > options_.max_buffered_bytes) {
      return Status::Unavailable(
          fmt::format("kafka exactly-once (job `{}`): {} bytes held for checkpoints after {}; "
                      "waiting for its commit",
                      options_.job_id, buffered_bytes_, committed_));
    }
    if (slot.segments.empty() || slot.segments.back().sealed_at != 0) slot.segments.emplace_back();
    slot.segments.back().records.push_back(
        Buffered{topic,
                 partition == kPartitionPerRecord ? r.partition : partition,
                 std::string(r.key),
                 std::string(r.payload),
                 r.timestamp == kNoTimestamp ? 0 : r.timestamp,
                 {r.headers.begin(), r.headers.end()}});
    buffered_bytes_ += bytes;
    ++*written;
  }
  return Status::Ok();
}

Status KafkaTransactionGroup::PreCommit(uint32_t participant, int64_t checkpoint_id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!failed_.ok()) return failed_;
    if (participant >= slots_.size())
      return Status::Internal("kafka exactly-once: participant out of range");
    Slot& slot = slots_[participant];
    if (checkpoint_id <= slot.last_precommit || checkpoint_id <= committed_) {
      return Status::Internal(
          fmt::format("kafka exactly-once: participant {} PreCommit({}) after {} (committed {})",
                      participant, checkpoint_id, slot.last_precommit, committed_));
    }
    if (!slot.segments.empty() && slot.segments.back().sealed_at == 0) {
      slot.segments.back().sealed_at = checkpoint_id;
    }
    slot.last_precommit = checkpoint_id;
  }
  FaultPoint("after-precommit");
  return Status::Ok();
}

rd_kafka_error_t* KafkaTransactionGroup::CommitWithRetry(int64_t deadline_ms, bool* cancelled) {
  *cancelled = false;
  while (true) {
    // Short attempts: a commit_transaction that timed out is resumed by calling it again
    // (librdkafka >= 1.9), so slicing costs nothing and lets the deadline and cancellation in.
    const int slice =
        static_cast<int>(std::clamp<int64_t>(deadline_ms - SteadyNowMs(), 1, kTxnWaitSliceMs));
    ErrorPtr error(rd_kafka_commit_transaction(rk_, slice));
    if (!error) return nullptr;
    if (!rd_kafka_error_is_retriable(error.get()) ||
        rd_kafka_error_txn_requires_abort(error.get()) || rd_kafka_error_is_fatal(error.get()) ||
        SteadyNowMs() >= deadline_ms) {
      return error.release();
    }
    if (Cancelled()) {
      *cancelled = true;
      return error.release();
    }
    if (rd_kafka_error_code(error.get()) != RD_KAFKA_RESP_ERR__TIMED_OUT) {
      // A retriable broker answer (coordinator loading, not available): wait a little.
      std::this_thread::sleep_for(std::chrono::milliseconds(
          std::min<int64_t>(100, std::max<int64_t>(deadline_ms - SteadyNowMs(), 0))));
    }
  }
}

Status KafkaTransactionGroup::Commit(int64_t checkpoint_id) {
  if (instance_offsets_ == nullptr) return CommitLocked(checkpoint_id, {});
  // Instances: the offsets as of this checkpoint go into its transaction; a revocation of this
  // run's partitions waits for this commit and stops every later one (KafkaInstanceOffsets).
  Status s = instance_offsets_->Commit(checkpoint_id,
                                       [&](const std::vector<const KafkaReadOffsets*>& reads) {
                                         return CommitLocked(checkpoint_id, reads);
                                       });
  if (s.code() == StatusCode::kReassigned) {
    // Revoked before this commit: its content must never commit. Abort now (not at the next
    // start) so that read_committed readers are not held back meanwhile.
    std::lock_guard<std::mutex> commit_lock(commit_mu_);
    std::lock_guard<std::mutex> lock(mu_);
    if (failed_.ok()) (void)AbortReassignedLocked(s);
  }
  return s;
}

Status KafkaTransactionGroup::AbortReassignedLocked(Status why) {
  if (failed_.ok()) {
    FlushBeforeAbortLocked();
    // A failed abort changes nothing: the transaction is never committed and the next start's
    // init_transactions (or a takeover) ends it.
    ErrorPtr abort_error(rd_kafka_abort_transaction(rk_, options_.operation_timeout_ms));
  }
  failed_ = std::move(why);
  return failed_;
}

Status KafkaTransactionGroup::CommitLocked(int64_t checkpoint_id,
                                           const std::vector<const KafkaReadOffsets*>& reads) {
  // One commit or abort at a time; mu_ itself is let go while the broker commits (below).
  std::lock_guard<std::mutex> commit_lock(commit_mu_);
  std::unique_lock<std::mutex> lock(mu_);
  if (!failed_.ok()) return failed_;
  if (checkpoint_id <= committed_) return Status::Ok();
  for (size_t p = 0; p < slots_.size(); ++p) {
    if (slots_[p].last_precommit < checkpoint_id) {
      return Status::Internal(
          fmt::format("kafka exactly-once: commit of checkpoint {} before participant {} "
                      "pre-committed it (last {})",
                      checkpoint_id, p, slots_[p].last_precommit));
    }
  }
  // A record that cannot be queued leaves the transaction incomplete: it must not commit.
  const std::string transaction = fmt::format("transaction of checkpoint {}", checkpoint_id);
  auto fail = [&](const Status& cause) { return AbortIncompleteLocked(cause, transaction); };
  auto produce_held = [&](const Buffered& r) -> Status {
    Result<rd_kafka_topic_t*> rkt = TopicLocked(r.topic);
    if (!rkt.ok()) return rkt.status();
    return ProduceLocked(*rkt, r.topic, r.partition, r.key, r.payload, r.timestamp, r.headers);
  };
  // Held records of epochs <= checkpoint_id join this transaction.
  for (Slot& slot : slots_) {
    while (!slot.segments.empty() && slot.segments.front().sealed_at != 0 &&
           slot.segments.front().sealed_at <= checkpoint_id) {
      for (const Buffered& r : slot.segments.front().records) {
        Status st = produce_held(r);
        if (!st.ok()) return fail(st);
        buffered_bytes_ -= HeldBytes(r.topic, r.key, r.payload, r.headers) + sizeof(Buffered);
      }
      slot.segments.pop_front();
    }
  }
  std::string progress = txn_detail::EncodeProgress(progress_key_, checkpoint_id,
                                                    static_cast<uint32_t>(slots_.size()));
  Result<rd_kafka_topic_t*> progress_rkt = TopicLocked(options_.progress_topic);
  if (!progress_rkt.ok()) return fail(progress_rkt.status());
  Status queued =
      ProduceLocked(*progress_rkt, options_.progress_topic, 0, progress_key_, progress, 0);
  if (!queued.ok()) return fail(queued);
  // The transaction's content is complete. Every participant pre-committed checkpoint_id and
  // committed_ changes only below, so until then every Write is held in memory for the next
  // transaction and none touches the producer: the flush and the broker's commit run without
  // mu_, and the writers go on instead of waiting for the broker's acknowledgements.
  lock.unlock();
  // The flush and every commit attempt share one deadline (CommitBoundMs), so a cluster that is
  // down fails the commit within retry_timeout_ms, never after transaction.timeout.ms.
  const int64_t deadline = SteadyNowMs() + options_.retry_timeout_ms;
  if (!reads.empty()) {
    Status sent = SendOffsetsUnlocked(reads, deadline);
    if (!sent.ok()) {
      lock.lock();
      return sent;
    }
  }
  // Not required (commit flushes), but makes `during-commit` mean "everything is in the log".
  // A flush timeout is not an error here: commit_transaction flushes again and reports it.
  (void)FlushUntil(deadline);
  FaultPoint("during-commit");
  if (commit_hook_) commit_hook_(checkpoint_id);
  bool cancelled = false;
  ErrorPtr commit_error(CommitWithRetry(deadline, &cancelled));
  lock.lock();
  if (cancelled) {
    // The broker may still finish this commit: the next start's init_transactions waits for it
    // or aborts the transaction, and the progress topic then says which. Nothing more here.
    failed_ = Status::Cancelled(
        fmt::format("kafka exactly-once (job `{}`): commit of checkpoint {} given up: job "
                    "cancelled",
                    options_.job_id, checkpoint_id));
    return failed_;
  }
  if (commit_error) {
    // "gave up" only when the bound was what ended it: a broker's refusal comes at once.
    const std::string bound = SteadyNowMs() >= deadline
                                  ? fmt::format(", gave up after {} ms", options_.retry_timeout_ms)
                                  : std::string();
    return TxnErrorLocked(commit_error.get(), fmt::format("commit of checkpoint {} (brokers {}{})",
                                                          checkpoint_id, options_.brokers, bound));
  }
  FaultPoint("after-commit-before-cleanup");
  committed_ = checkpoint_id;
  ErrorPtr error(rd_kafka_begin_transaction(rk_));
  if (error) return TxnErrorLocked(error.get(), "begin_transaction");
  // Participants now level with the transaction write into it directly again.
  for (Slot& slot : slots_) {
    if (slot.last_precommit > committed_) continue;
    for (Segment& segment : slot.segments) {
      for (const Buffered& r : segment.records) {
        Status st = produce_held(r);
        if (!st.ok()) return fail(st);
        buffered_bytes_ -= HeldBytes(r.topic, r.key, r.payload, r.headers) + sizeof(Buffered);
      }
    }
    slot.segments.clear();
  }
  return Status::Ok();
}

Status KafkaTransactionGroup::SendOffsetsUnlocked(const std::vector<const KafkaReadOffsets*>& reads,
                                                  int64_t deadline_ms) {
  for (const KafkaReadOffsets* read : reads) {
    if (read->next_offsets.empty()) continue;
    rd_kafka_topic_partition_list_t* list =
        rd_kafka_topic_partition_list_new(static_cast<int>(read->next_offsets.size()));
    // Each offset names the snapshot of the state as of it (restore on assignment, deploy.md).
    const std::string metadata =
        KafkaInstanceOffsetMetadata(options_.instance, read->checkpoint_id);
    for (const auto& [p, off] : read->next_offsets) {
      rd_kafka_topic_partition_t* tp =
          rd_kafka_topic_partition_list_add(list, read->topic.c_str(), p);
      tp->offset = off;
      // The list frees it (librdkafka's allocator is malloc's).
      tp->metadata = std::malloc(metadata.size());
      if (tp->metadata != nullptr) {
        std::memcpy(tp->metadata, metadata.data(), metadata.size());
        tp->metadata_size = metadata.size();
      }
    }
    ErrorPtr error;
    int64_t delay = 100;
    while (true) {
      const int remaining = static_cast<int>(std::max<int64_t>(deadline_ms - SteadyNowMs(), 1));
      error.reset(rd_kafka_send_offsets_to_transaction(rk_, list, read->group.get(), remaining));
      if (!error || !rd_kafka_error_is_retriable(error.get()) || SteadyNowMs() >= deadline_ms ||
          Cancelled())
        break;
      Backoff(&delay);
    }
    rd_kafka_topic_partition_list_destroy(list);
    if (!error) continue;
    const rd_kafka_resp_err_t code = rd_kafka_error_code(error.get());
    // The group moved on since the barrier (KIP-447 fencing): the partitions may be another
    // instance's now, so this transaction must not commit.
    const bool moved = code == RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION ||
                       code == RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID ||
                       code == RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID ||
                       code == RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS;
    std::lock_guard<std::mutex> lock(mu_);
    Status s = TxnErrorLocked(error.get(), fmt::format("offsets of topic `{}` for checkpoint {}",
                                                       read->topic, read->checkpoint_id));
    if (moved && failed_.code() != StatusCode::kFenced) {
      // Not marked as needing an abort: abort here, the transaction lacks its offsets.
      return AbortReassignedLocked(
          Status::Reassigned(fmt::format("the consumer group rebalanced after checkpoint {} ({}); "
                                         "its transaction was aborted",
                                         read->checkpoint_id, rd_kafka_error_string(error.get()))));
    }
    // A plain error that left the transaction open: it must not commit without these offsets.
    return AbortIncompleteLocked(s,
                                 fmt::format("transaction of checkpoint {}", read->checkpoint_id));
  }
  return Status::Ok();
}

Status KafkaTransactionGroup::Abort() {
  std::lock_guard<std::mutex> commit_lock(commit_mu_);
  std::lock_guard<std::mutex> lock(mu_);
  if (!failed_.ok()) return failed_;
  FlushBeforeAbortLocked();
  ErrorPtr error(rd_kafka_abort_transaction(rk_, options_.operation_timeout_ms));
  if (error) return TxnErrorLocked(error.get(), "abort_transaction");
  failed_ = Status::Aborted(
      fmt::format("kafka exactly-once (job `{}`): transaction aborted on request; restart "
                  "from the last completed checkpoint",
                  options_.job_id));
  return Status::Ok();
}

}  // namespace flow::rt
