#pragma once
// Operators: the typed units of work the engine runs. One instance per subtask; every method is
// called from that subtask's thread only, so operators need no locking.
//
// Call order: Open (then RestoreState when restoring), then any interleaving of ProcessBatch /
// OnWatermark / OnProcessingTime / SnapshotState, then Finish at end of input, then Close
// (always, also after a failure).
// Every method returning Status may fail; a failure cancels the job (exit code 1).

#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "flow/runtime/common/metrics.h"
#include "flow/runtime/common/serde.h"
#include "flow/runtime/common/status.h"
#include "flow/runtime/common/time.h"
#include "flow/runtime/engine/batch.h"
#include "flow/runtime/engine/clock.h"
#include "flow/runtime/engine/options.h"
#include "flow/runtime/engine/timers.h"

namespace flow::rt {

struct StateBackendOptions;  // state/keyed_state_backend.h
namespace shuffle {
class SplitTimes;  // shuffle/split_times.h
}
class StateAdoption;  // engine/state_adoption.h
class RunHandover;    // common/run_handover.h

// Key groups [first, end) owned by a subtask (contiguous; see common/key_group.h).
struct KeyGroupRange {
  uint32_t first = 0;
  uint32_t end = 0;
  bool Contains(uint32_t group) const { return group >= first && group < end; }
  uint32_t size() const { return end - first; }
};

KeyGroupRange KeyGroupsOfSubtask(uint32_t subtask, uint32_t parallelism, uint32_t max_parallelism);

struct OperatorContext {
  std::string name;  // the operator's name in the job graph
  uint32_t subtask = 0;
  uint32_t parallelism = 1;
  uint32_t max_parallelism = 128;
  KeyGroupRange key_groups;
  // Every input edge is KeyBy (hash-partitioned by key group). Only then is state that
  // RestoreState splits by key group rescalable: the engine refuses to restore a stateful operator
  // with other inputs at another parallelism (SubtaskCheckpoints::RestoreMembers). Default: false.
  bool keyed_input = false;
  MetricGroup metrics;
  const JobParams* params = nullptr;  // never null when opened by the engine
  // The job's processing clock (JobOptions::clock); never null when opened by the engine.
  Clock* clock = nullptr;
  // Processing-time timers of this operator subtask (engine/timers.h); null for sources and sinks
  // and outside the engine.
  ProcessingTimeService* timers = nullptr;
  // The job's cancellation flag: set when the run fails, cleared before an in-process restart.
  // Operators that wait on the outside world (connectors) poll it to give up early. Null outside
  // the engine.
  const std::atomic<bool>* cancel = nullptr;
  // The job's --state-dir ("" when none): durable across process restarts of the job.
  std::string state_dir;
  // JobOptions::kafka_properties (--kafka-properties); null outside the engine.
  const std::map<std::string, std::string>* kafka_properties = nullptr;
  // JobOptions::job_id and ::instance ("" when not set).
  std::string job_id;
  std::string instance;
  // What connectors keep from one run to the next when the engine restarts at once
  // (common/run_handover.h); owned by the job. Null outside the engine.
  RunHandover* handover = nullptr;
  // How keyed operators keep their state (--state-backend, --state-local-dir,
  // --state-cache-entries); null outside the engine: StateBackendOptionsFromEnvironment().
  const StateBackendOptions* state_backend = nullptr;
  // Where source subtasks publish their splits' event times for writers of repartition topics
  // (shuffle/split_times.h); one per run of the job. Null outside the engine.
  shuffle::SplitTimes* split_times = nullptr;
  // Instances with --state-root (engine/state_adoption.h): the run's adoption of repartition
  // partitions' state; null otherwise.
  StateAdoption* adoption = nullptr;
  // With `adoption`: the repartition source this keyed operator reads through its key-by; its
  // state is adopted by partition instead of restored from this instance's checkpoint. "" else.
  std::string shuffle_reader;
};

class Consumer;
template <typename T>
class BatchConsumer;

// Collects an operator's output records into the outgoing batch. Emit is a push_back; when the
// batch reaches the job's batch size it is handed downstream (which may block: backpressure).
// A downstream failure is kept and reported by the engine after the operator call returns;
// emitting after it is harmless (records are dropped, the job is being cancelled).
template <typename Out>
class Output {
 public:
  Output() = default;
  Output(BatchConsumer<Out>* next, size_t batch_size, Metric* records_out)
      : next_(next), batch_size_(batch_size), records_out_(records_out) {
    batch_.Reserve(batch_size_);
  }

  void Emit(const Out& record, TimestampMs ts) {
    batch_.Add(record, ts);
    if (batch_.size() >= batch_size_) FlushFull();
  }
  void Emit(Out&& record, TimestampMs ts) {
    batch_.Add(std::move(record), ts);
    if (batch_.size() >= batch_size_) FlushFull();
  }

  // Hands the pending records downstream. Called by the engine after each operator call.
  Status Flush();
  // The first downstream error since the last TakeStatus (ok if none).
  Status TakeStatus() { return std::exchange(status_, Status::Ok()); }
  size_t pending() const { return batch_.size(); }

 private:
  void FlushFull() {
    Status s = Flush();
    if (!s.ok() && status_.ok()) status_ = std::move(s);
  }

  BatchConsumer<Out>* next_ = nullptr;
  size_t batch_size_ = 1024;
  Metric* records_out_ = nullptr;
  Batch<Out> batch_;
  Status status_;
};

template <typename In, typename Out>
class OneInputOperator {
 public:
  virtual ~OneInputOperator() = default;
  // True when the operator keeps nothing between records (no state, timers or snapshot): such
  // operators may run in several instances of a job that each see some partitions
  // (--instance). Default: false.
  virtual bool stateless() const { return false; }
  [[nodiscard]] virtual Status Open(OperatorContext& ctx) { return Status::Ok(); }
  [[nodiscard]] virtual Status ProcessBatch(const Batch<In>& batch, Output<Out>& out) = 0;
  // The combined input watermark advanced to `wm`; the engine forwards it downstream after this
  // returns, so records emitted here are ahead of the watermark.
  [[nodiscard]] virtual Status OnWatermark(TimestampMs wm, Output<Out>& out) {
    return Status::Ok();
  }
  // A processing-time timer registered through OperatorContext::timers is due; `now` is the clock.
  [[nodiscard]] virtual Status OnProcessingTime(TimestampMs now, Output<Out>& out) {
    return Status::Ok();
  }
  [[nodiscard]] virtual Status SnapshotState(BinaryWriter* out) { return Status::Ok(); }
  [[nodiscard]] virtual Status RestoreState(BinaryReader* in) { return Status::Ok(); }
  // End of input (after the kMaxWatermark OnWatermark when the input was drained).
  [[nodiscard]] virtual Status Finish(Output<Out>& out) { return Status::Ok(); }
  virtual void Close() {}
};

template <typename In1, typename In2, typename Out>
class TwoInputOperator {
 public:
  virtual ~TwoInputOperator() = default;
  [[nodiscard]] virtual Status Open(OperatorContext& ctx) { return Status::Ok(); }
  [[nodiscard]] virtual Status ProcessBatch1(const Batch<In1>& batch, Output<Out>& out) = 0;
  [[nodiscard]] virtual Status ProcessBatch2(const Batch<In2>& batch, Output<Out>& out) = 0;
  // Called with the minimum over both inputs' watermarks when it advances.
  [[nodiscard]] virtual Status OnWatermark(TimestampMs wm, Output<Out>& out) {
    return Status::Ok();
  }
  [[nodiscard]] virtual Status OnProcessingTime(TimestampMs now, Output<Out>& out) {
    return Status::Ok();
  }
  [[nodiscard]] virtual Status SnapshotState(BinaryWriter* out) { return Status::Ok(); }
  [[nodiscard]] virtual Status RestoreState(BinaryReader* in) { return Status::Ok(); }
  [[nodiscard]] virtual Status Finish(Output<Out>& out) { return Status::Ok(); }
  virtual void Close() {}
};

// Engine-internal: something a task pushes elements into (an operator driver, a channel writer,
// a fan-out). Public because generated code never needs it but tests may.
class Consumer {
 public:
  virtual ~Consumer() = default;
  [[nodiscard]] virtual Status Open() { return Status::Ok(); }
  [[nodiscard]] virtual Status OnWatermark(TimestampMs wm) = 0;
  [[nodiscard]] virtual Status OnIdle(bool idle) = 0;
  [[nodiscard]] virtual Status OnBarrier(int64_t checkpoint_id) = 0;
  // Checkpoint `checkpoint_id` was abandoned upstream (its alignment aborted): plumbing passes the
  // marker on so downstream tasks stop aligning it. Operators and sinks ignore it.
  [[nodiscard]] virtual Status OnCancelCheckpoint(int64_t checkpoint_id) { return Status::Ok(); }
  // drained: true at real end of input, false when the job was stopped on request.
  [[nodiscard]] virtual Status OnEnd(bool drained) = 0;
  // A processing-time timer of this consumer's operator is due (TaskTimers::FireDue); not
  // forwarded: every operator has its own timers.
  [[nodiscard]] virtual Status OnProcessingTime(TimestampMs now) { return Status::Ok(); }
  // The task's input has been quiet for kInputQuietMs after records flowed: sink drivers let
  // their sink write out buffered output (SinkFunction::OnInputQuiet). Called on every member.
  [[nodiscard]] virtual Status OnInputQuiet() { return Status::Ok(); }
  virtual void Close() {}
  // Checkpoint hooks. Operator and sink drivers return their operator's context and snapshot /
  // restore its state; plumbing (channel writers, fan-outs) has no state and returns null.
  virtual const OperatorContext* operator_context() const { return nullptr; }
  [[nodiscard]] virtual Status SnapshotOperator(BinaryWriter* out) { return Status::Ok(); }
  [[nodiscard]] virtual Status RestoreOperator(BinaryReader* in) { return Status::Ok(); }
};

template <typename T>
class BatchConsumer : public Consumer {
 public:
  // Reads the batch; must not keep references into it.
  [[nodiscard]] virtual Status ConsumeView(const Batch<T>& batch) = 0;
  // Takes the records and leaves `batch` empty (possibly a different, recycled buffer).
  [[nodiscard]] virtual Status Consume(Batch<T>& batch) {
    Status s = ConsumeView(batch);
    batch.Clear();
    return s;
  }
};

template <typename Out>
Status Output<Out>::Flush() {
  if (batch_.empty()) return Status::Ok();
  if (records_out_ != nullptr) records_out_->Add(static_cast<int64_t>(batch_.size()));
  if (next_ == nullptr) {
    batch_.Clear();
    return Status::Ok();
  }
  Status s = next_->Consume(batch_);
  batch_.Clear();
  return s;
}

}  // namespace flow::rt
