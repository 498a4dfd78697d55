#pragma once
// Exactly-once sinks in a job (docs/exactly-once.md, "Engine wiring"):
//
//   ExactlyOnceSink<Out>(stream, "out", KafkaTxnSink("127.0.0.1:9092", {.topic = "out"}), encode);
//   ExactlyOnceSink<Out>(stream, "files", FileTxnSink({.directory = "out"}), encode);
//
// encode: void(const T&, std::string* key, std::string* payload) (key may stay empty).
//
// The engine knows no sink types: a spec either names a commit group (txn/commit_group.h; every
// exactly-once Kafka sink subtask is a participant of the job's one KafkaTransactionGroup,
// transactional id "flow-<job id>") or makes resumable sinks (files). The engine (txn_sinks.cpp)
// starts the group before it chooses the checkpoint to restore, restores exactly the checkpoint
// the group committed last, opens and recovers every sink subtask before any task runs,
// pre-commits at each barrier, and commits when a checkpoint completes: the group first, then
// resumable sinks. A job with such sinks needs --state-dir; its checkpoint
// interval defaults to 1 s. A bounded job ends with a final checkpoint whose commit makes the
// last epoch visible; a stopped or failed one leaves it uncommitted (replayed after a restart).
// Errors: kFenced (another instance of the job took over) ends the job with exit code 3; a
// failed commit (kAborted, kUnavailable after its bound) fails the job, which restarts from the
// last committed checkpoint.
// Threading: a sink subtask's calls into its TwoPhaseCommitSink are serialised by a per-subtask
// lock, so the commit (which runs on the thread that completed the checkpoint) never overlaps
// the subtask's writes.

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "flow/runtime/engine/job.h"
#include "flow/runtime/txn/txn_sink_spec.h"

namespace flow::rt {

namespace engine_detail {

// One sink subtask's transactional state; the engine's TxnSinks drives it (txn_sinks.cpp).
class TxnSinkSubtask {
 public:
  TxnSinkSubtask(const TxnSinkSpec* spec, OperatorContext ctx)
      : spec_(spec), ctx_(std::move(ctx)) {}
  const OperatorContext& ctx() const { return ctx_; }
  // A participant of the job's commit group (txn/commit_group.h), not a resumable sink.
  bool in_group() const { return spec_->group.has_value(); }
  const TxnSinkSpec& spec() const { return *spec_; }

  // Start-up, before any task runs: creates the sink, Open, Recover(restored), Begin.
  // `group`: the job's started commit group when in_group() (else unused).
  [[nodiscard]] Status Start(CommitGroup* group, uint32_t participant, int64_t restored_id);
  // Task thread: one record into the open transaction (retries kUnavailable with backoff).
  [[nodiscard]] Status Write(std::string_view key, std::string_view payload, TimestampMs ts);
  // Task thread: records in order, one lock and one sink call per attempt (TwoPhaseCommitSink::
  // WriteBatch); on kUnavailable retries the records not taken yet, with backoff.
  [[nodiscard]] Status WriteBatch(std::span<const TxnRecord> records);
  // Task thread: the input's event time moved (TwoPhaseCommitSink::OnEventTime).
  [[nodiscard]] Status EventTime(TimestampMs watermark, bool idle);
  // Task thread: barrier `id` reached the subtask: PreCommit(id), then the next transaction.
  [[nodiscard]] Status Barrier(int64_t id);
  // Task thread: end of input, before the task reports itself finished to the coordinator (which
  // then acknowledges every later checkpoint for it). Pre-commits what the subtask wrote since its
  // last barrier under the next id, the smallest checkpoint that can cover it: every checkpoint
  // from that id on completes only with this data durable, so a restore of any of them commits it.
  [[nodiscard]] Status Finish();
  // Commit thread: a finished subtask seals checkpoint `id` (an empty epoch: Finish sealed its
  // data) so that a sink that commits per checkpoint id (the Kafka group) sees every participant.
  [[nodiscard]] Status PreCommitIfFinished(int64_t id);
  // Commit thread: Commit(id) (resumable sinks; a commit group is committed once by TxnSinks).
  [[nodiscard]] Status Commit(int64_t id);
  // End of the job (after every task ended).
  void Close();

 private:
  const TxnSinkSpec* spec_;
  OperatorContext ctx_;
  std::mutex mu_;
  std::unique_ptr<TwoPhaseCommitSink> sink_;  // guarded by mu_
  bool finished_ = false;
  int64_t last_precommit_ = 0;
};

// One batch's records as its encoder wrote them, back to back in reused buffers (out of line,
// txn_sinks.cpp: it does not depend on the record type). Per record: Start, the encoder fills
// key(), payload() and meta(), Add.
class EncodedBatch {
 public:
  void Clear();
  void Start() {
    key_.clear();
    payload_.clear();
    meta_.timestamp = kNoTimestamp;
    meta_.headers.clear();
  }
  std::string* key() { return &key_; }
  std::string* payload() { return &payload_; }
  OutMeta* meta() { return &meta_; }
  void Add();
  // The records added since Clear, each stamped with its encoder's timestamp or else its event
  // time (`timestamps`, one per record). Valid until the next Clear.
  std::span<const TxnRecord> Records(const std::vector<TimestampMs>& timestamps);

 private:
  // Per record: the timestamp its encoder chose (or none) and its range of headers_.
  struct Meta {
    TimestampMs timestamp;
    size_t headers_begin, headers_end;
  };
  std::string key_, payload_;
  OutMeta meta_;
  std::string encoded_;                          // the batch's keys and payloads, back to back
  std::vector<std::pair<size_t, size_t>> ends_;  // per record: end of its key, end of its payload
  std::vector<Meta> metas_;
  std::vector<OutHeader> headers_;  // the batch's headers, record after record
  std::vector<TxnRecord> records_;
};

// Nodes of exactly-once sinks list their subtasks so the engine can find them.
struct TxnSinkNodeBase {
  virtual ~TxnSinkNodeBase() = default;
  std::vector<TxnSinkSubtask*> subtasks;
};

template <typename T>
class TxnSinkDriver final : public BatchConsumer<T> {
 public:
  using Encode = SinkEncode<T>;
  TxnSinkDriver(const TxnSinkSpec* spec, OperatorContext ctx, Encode encode)
      : sub_(spec, ctx), ctx_(std::move(ctx)), encode_(std::move(encode)) {}
  TxnSinkSubtask* subtask() { return &sub_; }

  Status Open() override {
    records_in_ = ctx_.metrics.Counter(kMetricRecordsIn, kHelpRecordsIn);
    watermark_ = ctx_.metrics.Gauge(kMetricWatermark, kHelpWatermark);
    watermark_->Set(kMinWatermark);
    latency_ = LatencyHistogram(ctx_.metrics);
    return Status::Ok();
  }
  // Encodes the whole batch into one reused buffer, then writes it with one WriteBatch: one lock
  // per batch instead of per record, and no allocation per record once the buffers have grown.
  Status ConsumeView(const Batch<T>& batch) override {
    records_in_->Add(static_cast<int64_t>(batch.size()));
    ObserveLatency(latency_, batch.timestamps.data(), batch.timestamps.size());
    return CallUser(ctx_, [&] {
      encoded_.Clear();
      for (size_t i = 0; i < batch.size(); ++i) {
        encoded_.Start();
        encode_(batch.records[i], encoded_.key(), encoded_.payload(), encoded_.meta());
        encoded_.Add();
      }
      return sub_.WriteBatch(encoded_.Records(batch.timestamps));
    });
  }
  Status OnWatermark(TimestampMs wm) override {
    watermark_->Set(wm);
    wm_ = wm;
    return CallUser(ctx_, [&] { return sub_.EventTime(wm_, idle_); });
  }
  Status OnIdle(bool idle) override {
    idle_ = idle;
    return CallUser(ctx_, [&] { return sub_.EventTime(wm_, idle_); });
  }
  Status OnBarrier(int64_t id) override {
    return CallUser(ctx_, [&] { return sub_.Barrier(id); });
  }
  Status OnEnd(bool drained) override {
    if (!drained) return Status::Ok();
    return CallUser(ctx_, [&] { return sub_.Finish(); });
  }
  // Nothing of the sink is snapshotted: Recover works from the restored id alone (Kafka: the
  // progress topic; files: the checkpoint id in each pending name).
  const OperatorContext* operator_context() const override { return &ctx_; }

 private:
  TxnSinkSubtask sub_;
  OperatorContext ctx_;
  Encode encode_;
  EncodedBatch encoded_;
  Metric* records_in_ = nullptr;
  Metric* watermark_ = nullptr;
  HistogramMetric* latency_ = nullptr;
  TimestampMs wm_ = kMinWatermark;  // of the input, with its idleness
  bool idle_ = false;
};

template <typename T>
struct TxnSinkNode final : TypedNode<T>, TxnSinkNodeBase {
  TxnSinkNode() { this->is_sink = true; }
  TxnSinkSpec spec;
  typename TxnSinkDriver<T>::Encode encode;
  std::unique_ptr<Consumer> MakeDriver(OperatorContext ctx, Consumer*, size_t) override {
    if (ctx.subtask == 0) subtasks.clear();  // a new build (in-process restart) starts over
    auto d = std::make_unique<TxnSinkDriver<T>>(&spec, std::move(ctx), encode);
    subtasks.push_back(d->subtask());
    return d;
  }
};

}  // namespace engine_detail

// Adds an exactly-once sink consuming `stream` (spec: txn/txn_sink_spec.h).
template <typename T, typename Encode>
void ExactlyOnceSink(const Stream<T>& stream, Job& job, std::string name, TxnSinkSpec spec,
                     Encode encode, uint32_t parallelism = 0) {
  auto node = std::make_unique<engine_detail::TxnSinkNode<T>>();
  node->spec = std::move(spec);
  node->encode = ToSinkEncode<T>(std::move(encode));
  int id = job.AddNode(std::move(node), std::move(name), parallelism);
  job.AddEdge(stream, id, 0);
}

// For generated code: the sink of `kind` (one the connector catalog lists as exactly-once) with
// the script's options.
template <typename T, typename Encode>
[[nodiscard]] Status AddExactlyOnceSink(Job& job, const Stream<T>& stream, std::string name,
                                        const std::string& kind,
                                        const std::map<std::string, std::string>& options,
                                        Encode encode) {
  auto spec = TxnSinkSpecFor(kind, options);
  if (!spec.ok()) return spec.status();
  ExactlyOnceSink<T>(stream, job, std::move(name), std::move(spec).value(), std::move(encode));
  return Status::Ok();
}

}  // namespace flow::rt
