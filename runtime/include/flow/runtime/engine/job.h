#pragma once
// The job graph builder and runner: what generated programs call.
//
//   Job job(options);
//   auto clicks = job.Source<Click>("clicks", source_factory, WatermarkSpec{...});
//   auto where  = clicks.Chain<Click>("per_minute.where", fused_fn);
//   auto counts = where.KeyBy("user", user_hash).Then<Count>("per_minute.window", window_factory);
//   counts.Sink("stdout", sink_factory);
//   return job.Run();  // exit code: 0 ok/stopped, 1 failed, 3 fenced
//
// Edges: by default forward when both sides have the same parallelism (the downstream operator is
// then CHAINED: it runs in the upstream thread, called directly), else rebalance. KeyBy, Rebalance,
// Broadcast and Forward choose the partitioning of the next edge. A stream may feed any number of
// operators. Parallelism 0 means the job's default.
//
// Threading: build and Run from one thread; RequestStop may be called from any thread (and is
// what SIGINT/SIGTERM trigger when InstallStopSignalHandlers was called).

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "flow/runtime/checkpoint/state_dir.h"
#include "flow/runtime/common/metrics.h"
#include "flow/runtime/common/run_handover.h"
#include "flow/runtime/engine/graph.h"
#include "flow/runtime/engine/options.h"
#include "flow/runtime/engine/stateless.h"

namespace flow::rt {

class Job;

template <typename T>
class Stream {
 public:
  // Applies a one-input operator; `factory` is called once per subtask and returns
  // std::unique_ptr<OneInputOperator<T, Out>> (or of a derived class).
  template <typename Out, typename Factory>
  Stream<Out> Then(std::string name, Factory factory, uint32_t parallelism = 0) const;
  // fn: void(const T&, TimestampMs, Output<Out>&) — a fused chain of stateless steps.
  template <typename Out, typename Fn>
  Stream<Out> Chain(std::string name, Fn fn, uint32_t parallelism = 0) const {
    return Then<Out>(
        std::move(name), [fn] { return std::make_unique<ChainOperator<T, Out, Fn>>(fn); },
        parallelism);
  }
  // fn: Out(const T&).
  template <typename Out, typename Fn>
  Stream<Out> Map(std::string name, Fn fn, uint32_t parallelism = 0) const {
    return Then<Out>(
        std::move(name), [fn] { return std::make_unique<MapOperator<T, Out, Fn>>(fn); },
        parallelism);
  }
  // fn: bool(const T&).
  template <typename Fn>
  Stream<T> Filter(std::string name, Fn fn, uint32_t parallelism = 0) const {
    return Then<T>(
        std::move(name), [fn] { return std::make_unique<FilterOperator<T, Fn>>(fn); }, parallelism);
  }
  // fn: void(const T&, Emit&) with emit(Out&&).
  template <typename Out, typename Fn>
  Stream<Out> FlatMap(std::string name, Fn fn, uint32_t parallelism = 0) const {
    return Then<Out>(
        std::move(name), [fn] { return std::make_unique<FlatMapOperator<T, Out, Fn>>(fn); },
        parallelism);
  }

  // Partitions the next edge by key group of key_hash(record) (uint64_t(const T&), a StableHash).
  // `key_name` documents the key in plans and logs.
  template <typename KeyHash>
  Stream<T> KeyBy(std::string key_name, KeyHash key_hash) const {
    Stream<T> s = *this;
    s.partitioning_ = Partitioning::kHash;
    s.key_name_ = std::move(key_name);
    s.hash_writer_ = [key_hash](std::vector<Channel<T>*> channels, uint32_t max_parallelism,
                                size_t batch_size) -> std::unique_ptr<BatchConsumer<T>> {
      return std::make_unique<HashWriter<T, KeyHash>>(std::move(channels), key_hash,
                                                      max_parallelism, batch_size);
    };
    return s;
  }
  Stream<T> Rebalance() const { return WithPartitioning(Partitioning::kRebalance); }
  Stream<T> Broadcast() const { return WithPartitioning(Partitioning::kBroadcast); }
  Stream<T> Forward() const { return WithPartitioning(Partitioning::kForward); }

  // Merges this stream with `others` (same record type) into one stream.
  Stream<T> Union(std::string name, const std::vector<Stream<T>>& others,
                  uint32_t parallelism = 0) const;

  void Sink(std::string name, SinkFactory<T> factory, uint32_t parallelism = 0) const;

  bool keyed() const { return partitioning_ == Partitioning::kHash; }
  int node() const { return node_; }

 private:
  friend class Job;
  template <typename U>
  friend class Stream;
  template <typename A, typename B>
  friend class ConnectedStreams;
  Stream(Job* job, int node) : job_(job), node_(node) {}
  Stream<T> WithPartitioning(Partitioning p) const {
    Stream<T> s = *this;
    s.partitioning_ = p;
    return s;
  }

  Job* job_;
  int node_;
  Partitioning partitioning_ = Partitioning::kDefault;
  std::string key_name_;
  engine_detail::HashWriterFactory<T> hash_writer_;
};

template <typename T>
using KeyedStream = Stream<T>;

// Two streams feeding one TwoInputOperator (joins); each keeps its own partitioning.
template <typename A, typename B>
class ConnectedStreams {
 public:
  ConnectedStreams(Stream<A> a, Stream<B> b) : a_(std::move(a)), b_(std::move(b)) {}
  // factory returns std::unique_ptr<TwoInputOperator<A, B, Out>> (or of a derived class).
  template <typename Out, typename Factory>
  Stream<Out> Then(std::string name, Factory factory, uint32_t parallelism = 0) const;

 private:
  Stream<A> a_;
  Stream<B> b_;
};

template <typename A, typename B>
ConnectedStreams<A, B> Connect(Stream<A> a, Stream<B> b) {
  return ConnectedStreams<A, B>(std::move(a), std::move(b));
}

// Job::TakeSavepoint (docs/checkpoints.md, "Savepoints").
struct SavepointRequest {
  std::string name;  // the directory is <state dir>/sp-<name>; "" = the checkpoint's id
  // Stop with savepoint: sources read nothing after its barrier; once it is complete, committed
  // and copied, the job stops (Execute returns OK, exit code 0).
  bool stop = false;
  DurationMs timeout_ms = 600000;  // until the checkpoint completes; default 10 min
};
struct SavepointResult {
  int64_t checkpoint_id = 0;
  std::string path;
};

class CheckpointMetrics;
class OperatorRates;

// Where a repartition writer's records come from (Job::ForwardSourcesOf), by operator name.
struct ForwardOrigins {
  std::vector<std::string> sources;  // sources: their splits are their input's partitions
  std::vector<std::string> readers;  // repartition readers: their splits are key groups
  // Both: whose progress the reading side of the writer's topic combines.
  std::vector<std::string> Names() const {
    std::vector<std::string> all = sources;
    all.insert(all.end(), readers.begin(), readers.end());
    return all;
  }
};

class Job {
 public:
  explicit Job(JobOptions options = {});
  ~Job();
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  // A source; parallelism 0 = job default (use 1 for non-parallel inputs such as stdin).
  // ts_fn: TimestampMs(const T&) extracts event time; by default the source's timestamps are used.
  template <typename T, typename TsFn = SourceTimestamps>
  Stream<T> Source(std::string name, SourceFactory<T> factory, WatermarkSpec spec = {},
                   uint32_t parallelism = 0, TsFn ts_fn = {}) {
    auto node = std::make_unique<engine_detail::SourceNode<T, TsFn>>();
    node->factory = std::move(factory);
    node->spec = spec;
    node->ts_fn = std::move(ts_fn);
    node->is_source = true;
    return Stream<T>(this, AddNode(std::move(node), std::move(name), parallelism));
  }

  // Runs until every source is exhausted, RequestStop, or a failure. Returns the first task error
  // (kCancelled errors caused by the cancellation itself are not reported); OK when stopped.
  // With a state dir, a retriable failure (IoError, Unavailable, TimedOut, Aborted — e.g. too
  // many failed checkpoints) restarts the job in-process after the RestartBackoff delay
  // (--restart-attempts, --restart-delay, ...), restoring the newest complete checkpoint; the
  // error is returned when it is not retriable or the attempts are exhausted. Call once.
  Status Execute();
  // --instance (JobOptions::instance): kInvalidArgument naming the first operator that needs
  // records of other instances (behind a key-by or broadcast edge that does not come from a
  // repartition topic's reader, engine/shuffle_key_by.h) or keeps state without such a key-by in
  // front of every input (OneInputOperator::stateless is false; every two-input operator, since
  // joins do not cross instances yet): instances read disjoint partitions. OK otherwise. RunMain
  // checks it before Run (exit code 2); Execute checks it again.
  [[nodiscard]] Status CheckInstancePlan() const;
  // Execute + logs the error; returns the exit code (0 ok/stopped, 1 failed or a stop with
  // savepoint that could not take one, 2 the checkpoint to restore does not fit the job, 3 fenced).
  int Run();
  // Graceful stop: sources end their input, in-flight data drains, sinks flush. Thread-safe.
  void RequestStop();
  // A savepoint of the running job: a checkpoint triggered now and, once it is complete (and
  // committed by exactly-once sinks), copied into a self-contained directory that --restore
  // takes. Thread-safe; blocks until done. kInvalidArgument without --state-dir or with
  // checkpoints off, or for a bad or taken name; kUnavailable when the job is not running (yet);
  // kAborted when the checkpoint failed; kTimedOut past request.timeout_ms.
  Result<SavepointResult> TakeSavepoint(const SavepointRequest& request);
  // OK when the job serves its input: running, every task opened and restored its state, no
  // failure being handled. Otherwise kUnavailable saying why (starting, restoring, failing,
  // restarting, finished). Thread-safe; what GET /readyz answers.
  [[nodiscard]] Status Readiness();
  // The job page's data (GET /api/job, job_status.cpp): the graph with per-operator totals and
  // watermarks, readiness, checkpoint counts and history, as JSON. Thread-safe.
  std::string StatusJson();

  const JobOptions& options() const { return options_; }
  const JobParams& params() const { return options_.params; }
  MetricsRegistry& metrics() { return metrics_; }
  // The port of the metrics endpoint while running (after binding), else 0. Thread-safe.
  int metrics_port() const { return bound_port_.load(); }
  // Instrumentation: the highest depth any channel reached in the last run (elements).
  size_t MaxChannelDepth() const { return max_channel_depth_.load(); }
  // Number of threads (tasks) the last run used: one per chain subtask.
  size_t TaskCount() const { return task_count_.load(); }

  // The state schema of the operator named `name` (checkpoint/state_schema.h), declared by
  // generated code for every stateful operator and source: restores then map state by operator
  // name into a changed script (checkpoint/state_mapping.h). An unknown name fails Execute.
  void SetStateSchema(const std::string& name, std::vector<std::string> parts);

  // Graph building (used by Stream and engine/shuffle_key_by.h; not needed by generated code).
  // Where the records that reach `node` through forward edges only (an edge of default
  // partitioning counts when both sides have the same parallelism) start, in graph order, each
  // once: sources, and the repartition readers whose key-by feeds a keyed operator on the way (a
  // second key-by). kInvalidArgument naming `what` and the edge when a path crosses another
  // partitioning or reaches a reader other than through its key-by: a repartition sink reports
  // its source subtask's splits, or its keyed operator's subtask's key groups
  // (txn/repartition_sink.h), which are its input's only when every record came straight down.
  [[nodiscard]] Result<ForwardOrigins> ForwardSourcesOf(int node, std::string_view what) const;
  uint32_t ParallelismOf(int node) const { return nodes_[node]->parallelism; }
  // `node` (a source) reads a repartition topic: CheckInstancePlan lets a key-by behind it, and
  // the keyed operator it feeds, run under --instance.
  void MarkShuffleReader(int node) { nodes_[node]->shuffle_reader = true; }
  int AddNode(std::unique_ptr<engine_detail::NodeBase> node, std::string name,
              uint32_t parallelism);
  template <typename T>
  void AddEdge(const Stream<T>& from, int to, int input_index) {
    auto e = std::make_unique<engine_detail::Edge<T>>();
    e->from = from.node_;
    e->to = to;
    e->input_index = input_index;
    e->kind = from.partitioning_;
    e->hash_writer = from.hash_writer_;
    e->key_name = from.key_name_;
    AddEdgeBase(std::move(e));
  }

 private:
  struct Runtime;
  void AddEdgeBase(std::unique_ptr<engine_detail::EdgeBase> edge);
  Status Build(Runtime* rt);

  // One run of the graph; *checkpoint_completed: a checkpoint completed during it;
  // *all_started: every task opened and restored (the run got going; false when it failed first).
  Status ExecuteOnce(bool* checkpoint_completed, bool* all_started);
  // With a state dir or --restore: opens the storage, picks the checkpoint to restore and (when
  // checkpoints are on) creates the coordinator; hands each task its part (job_checkpoints.cpp).
  Status PrepareCheckpoints(Runtime* rt);
  void StartCheckpoints(Runtime* rt);
  void Monitor(Runtime* rt);
  // Records the job's first error and cancels every task.
  void Fail(Runtime* rt, const Status& s);

  JobOptions options_;
  // --state-backend, --state-local-dir, --state-cache-entries, for every keyed operator
  // (OperatorContext::state_backend); set by Build. A pointer: the state layer's header stays out
  // of every job's includes.
  std::shared_ptr<const StateBackendOptions> state_backend_;
  MetricsRegistry metrics_;
  std::unique_ptr<CheckpointMetrics> checkpoint_metrics_;  // job_metrics.h
  std::unique_ptr<OperatorRates> rates_;                   // job_metrics.h; sampled by Monitor
  std::vector<std::unique_ptr<engine_detail::NodeBase>> nodes_;
  bool state_schemas_ = false;    // SetStateSchema was called
  bool restore_refused_ = false;  // the checkpoint to restore does not fit this job: exit 2
  std::vector<std::unique_ptr<engine_detail::EdgeBase>> edges_;
  Status build_status_;
  JobControl control_;
  // Connectors' handover between runs (Kafka group members): kept only across a restart at once.
  RunHandover handover_;
  std::atomic<int> bound_port_{0};
  std::atomic<size_t> max_channel_depth_{0};
  std::atomic<size_t> task_count_{0};
  // flow_backpressure_ms_total of earlier attempts by "operator/subtask": channels are rebuilt
  // on restart, and the counter must not go back.
  std::map<std::string, std::atomic<int64_t>> backpressure_before_;
  std::mutex run_mu_;
  std::condition_variable run_cv_;
  Runtime* running_ = nullptr;  // while tasks run, for TakeSavepoint; guarded by run_mu_
  int savepoint_calls_ = 0;     // TakeSavepoint calls using running_; guarded by run_mu_
  std::atomic<bool> stop_savepoint_failed_{false};  // --savepoint-on-stop could not take one
  std::atomic<bool> stop_savepoint_taken_{false};   // --savepoint-on-stop took one
  bool ran_ = false;
  // The state dir's lock and records, held across in-process restarts (checkpoint/state_dir.h).
  std::unique_ptr<StateDirectory> state_dir_;
};

template <typename T>
template <typename Out, typename Factory>
Stream<Out> Stream<T>::Then(std::string name, Factory factory, uint32_t parallelism) const {
  auto node = std::make_unique<engine_detail::OneInputNode<T, Out>>();
  node->factory = [factory]() -> std::unique_ptr<OneInputOperator<T, Out>> { return factory(); };
  int id = job_->AddNode(std::move(node), std::move(name), parallelism);
  job_->AddEdge(*this, id, 0);
  return Stream<Out>(job_, id);
}

template <typename T>
Stream<T> Stream<T>::Union(std::string name, const std::vector<Stream<T>>& others,
                           uint32_t parallelism) const {
  auto node = std::make_unique<engine_detail::OneInputNode<T, T>>();
  node->factory = [] { return std::make_unique<IdentityOperator<T>>(); };
  int id = job_->AddNode(std::move(node), std::move(name), parallelism);
  job_->AddEdge(*this, id, 0);
  for (const Stream<T>& o : others) job_->AddEdge(o, id, 0);
  return Stream<T>(job_, id);
}

template <typename T>
void Stream<T>::Sink(std::string name, SinkFactory<T> factory, uint32_t parallelism) const {
  auto node = std::make_unique<engine_detail::SinkNode<T>>();
  node->factory = std::move(factory);
  int id = job_->AddNode(std::move(node), std::move(name), parallelism);
  job_->AddEdge(*this, id, 0);
}

template <typename A, typename B>
template <typename Out, typename Factory>
Stream<Out> ConnectedStreams<A, B>::Then(std::string name, Factory factory,
                                         uint32_t parallelism) const {
  Job* job = a_.job_;
  auto node = std::make_unique<engine_detail::TwoInputNode<A, B, Out>>();
  node->factory = [factory]() -> std::unique_ptr<TwoInputOperator<A, B, Out>> { return factory(); };
  int id = job->AddNode(std::move(node), std::move(name), parallelism);
  job->AddEdge(a_, id, 0);
  job->AddEdge(b_, id, 1);
  return Stream<Out>(job, id);
}

// Installs SIGINT/SIGTERM handlers that request a graceful stop of the running job(s); a second
// signal terminates the process immediately.
void InstallStopSignalHandlers();
// True once a stop signal arrived (for tests and long-running loops).
bool StopSignalReceived();

}  // namespace flow::rt
