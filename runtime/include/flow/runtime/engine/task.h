#pragma once
// Engine-internal: a task is one thread running one subtask of an operator chain. A source task
// pulls its SourceFunction and generates watermarks; an input task reads its InputGate, combines
// channel watermarks, aligns checkpoint barriers and detects end of input. Both push into the
// chain's first consumer (direct calls; chained operators share the thread).

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "flow/runtime/checkpoint/checkpoint_storage.h"
#include "flow/runtime/checkpoint/coordinator.h"
#include "flow/runtime/checkpoint/recovery.h"
#include "flow/runtime/engine/channel.h"
#include "flow/runtime/engine/drivers.h"
#include "flow/runtime/engine/source.h"
#include "flow/runtime/engine/subtask_checkpoints.h"
#include "flow/runtime/engine/timers.h"
#include "flow/runtime/engine/watermark.h"
#include "flow/runtime/log/log.h"
#include "flow/runtime/shuffle/split_times.h"
#include "flow/runtime/state/key_group_span.h"

namespace flow::rt {

// Shared by all tasks of a running job.
struct JobControl {
  std::atomic<bool> stop{false};    // graceful: sources end their input (not drained)
  std::atomic<bool> cancel{false};  // failure: every task ends as soon as it can
  // Stop with savepoint: sources read nothing after taking this barrier (0 = never), so no
  // record follows the savepoint before the stop.
  std::atomic<int64_t> pause_after_barrier{0};
};

// How long a task's input must stay empty, after elements flowed, before its sinks write out what
// they buffered (Consumer::OnInputQuiet). Bounds the output delay of a quiet job without a flush
// per batch while data streams.
inline constexpr int64_t kInputQuietMs = 100;

class Task {
 public:
  Task(std::string name, uint32_t subtask);
  virtual ~Task();

  // Opens the chain members, restores their state (when restoring), runs the loop, closes the
  // members (always). Tells the coordinator when the task finished its input or failed.
  // Returns the first error.
  Status Run();
  void SetMembers(std::vector<Consumer*> members) { members_ = std::move(members); }
  void SetCheckpointing(TaskCheckpointing c) { checkpoints_.Configure(c); }
  // Called by Run with its error as soon as the loop ends with one, before anything closes.
  void SetFailureHandler(std::function<void(const Status&)> handler) {
    on_failure_ = std::move(handler);
  }
  // The processing-time timers of the chained operators (engine/timers.h); none by default.
  void SetTimers(std::unique_ptr<TaskTimers> timers) { timers_ = std::move(timers); }
  // Source tasks: take checkpoint `id` between two polls, after every id requested before it
  // (each requested barrier is taken, in order). Thread-safe; others ignore it.
  virtual void RequestBarrier(int64_t id) {}
  // Source tasks: checkpoint `id` completed; the source hears it (SourceFunction::
  // OnCheckpointComplete) on its own thread before its next poll. Thread-safe; others ignore it.
  virtual void NotifyCheckpointComplete(int64_t id) {}
  const std::string& name() const { return name_; }
  uint32_t subtask() const { return subtask_; }
  // The task opened its operators (and source), restored their state and processes its input.
  // Stays true once set. Thread-safe (readiness checks).
  bool started() const { return started_.load(std::memory_order_acquire); }
  // Gauge set, once a start restored state from a checkpoint, to how long opening and restoring
  // the operators took (ms); optional.
  void SetRestoreMetric(Metric* m) { restore_ms_ = m; }

 protected:
  void MarkStarted() { started_.store(true, std::memory_order_release); }
  virtual Status Loop() = 0;
  virtual void CloseSource() {}
  // Restores, checkpoints and acknowledges for this task (engine/subtask_checkpoints.h).
  SubtaskCheckpoints& checkpoints() { return checkpoints_; }
  // The loop drained its whole input (not stopped): the coordinator hears TaskFinished.
  void MarkInputFinished() { input_finished_ = true; }
  // Null when no chained operator can register processing-time timers.
  TaskTimers* timers() const { return timers_.get(); }
  // Fires the chained operators' due processing-time timers (loops call it between elements).
  [[nodiscard]] Status FireDueTimers() {
    return timers_ && !timers_->empty() ? timers_->FireDue() : Status::Ok();
  }
  // Tells every chain member that the input went quiet (sinks write out their buffers).
  [[nodiscard]] Status NotifyInputQuiet() {
    for (Consumer* m : members_) FLOW_RETURN_IF_ERROR(m->OnInputQuiet());
    return Status::Ok();
  }

 private:
  std::string name_;
  uint32_t subtask_;
  std::vector<Consumer*> members_;  // every consumer of this chain subtask
  std::function<void(const Status&)> on_failure_;
  bool input_finished_ = false;
  std::atomic<bool> started_{false};
  Metric* restore_ms_ = nullptr;
  std::unique_ptr<TaskTimers> timers_;  // processing-time timers; null: none
  // Last: destroyed first, so the snapshot writes end before anything else of the task goes.
  SubtaskCheckpoints checkpoints_;
};

// Reads one element from a channel: batches go to the typed target; control elements are
// returned to the task.
class ChannelBindingBase {
 public:
  virtual ~ChannelBindingBase() = default;
  virtual Status ReadOne(ElementKind* kind, int64_t* value) = 0;
};

template <typename T>
class ChannelBinding final : public ChannelBindingBase {
 public:
  ChannelBinding(Channel<T>* channel, BatchConsumer<T>* target)
      : channel_(channel), target_(target) {}
  Status ReadOne(ElementKind* kind, int64_t* value) override {
    if (!channel_->Pop(&e_))
      return Status::Internal("input gate reported an empty channel as ready");
    *kind = e_.kind;
    *value = e_.value;
    if (e_.kind != ElementKind::kBatch) return Status::Ok();
    Status s = target_->Consume(e_.batch);
    channel_->Recycle(std::move(e_.batch));
    e_.batch = Batch<T>();
    return s;
  }

 private:
  Channel<T>* channel_;
  BatchConsumer<T>* target_;
  Element<T> e_;
};

class InputTask final : public Task {
 public:
  InputTask(std::string name, uint32_t subtask, std::unique_ptr<InputGate> gate,
            std::vector<std::unique_ptr<ChannelBindingBase>> bindings, Consumer* head,
            Metric* watermark)
      : Task(std::move(name), subtask),
        gate_(std::move(gate)),
        bindings_(std::move(bindings)),
        head_(head),
        watermark_(watermark) {}
  InputGate* gate() { return gate_.get(); }
  // Gauge set to the duration of each completed alignment (ms); optional.
  void SetAlignmentMetric(Metric* m) { alignment_ms_ = m; }

 protected:
  // Reads the gate and feeds every element to a BarrierAligner (aligned checkpoints: a channel
  // that delivered barrier N is blocked until N arrived on every live channel), executing its
  // actions in order; an aborted alignment declines N and forwards a cancel marker downstream.
  Status Loop() override;

 private:
  std::unique_ptr<InputGate> gate_;
  std::vector<std::unique_ptr<ChannelBindingBase>> bindings_;
  Consumer* head_;
  Metric* watermark_;
  Metric* alignment_ms_ = nullptr;
};

// Placeholder for "use the timestamps the source provides".
struct SourceTimestamps {};

// A source subtask's loop (engine/source_task.cpp): polls, timestamps, watermarks, idleness,
// checkpoints between polls, restore and rescaling. It is the same for every record type; the
// typed part (SourceTask below) polls into its batch, reads event times and passes the batch on.
class SourceTaskBase : public Task {
 public:
  SourceTaskBase(SourceFunctionBase* source, OperatorContext ctx, WatermarkSpec spec,
                 Consumer* next, size_t batch_size, const JobControl* control)
      : Task(ctx.name, ctx.subtask),
        source_(source),
        ctx_(std::move(ctx)),
        spec_(spec),
        next_(next),
        batch_size_(batch_size),
        control_(control) {}

  // Queues `id`; ids only grow, a repeated or older one is ignored.
  void NotifyCheckpointComplete(int64_t id) override;
  void RequestBarrier(int64_t id) override;

 protected:
  Status Loop() override;
  void CloseSource() override;

  // The typed part. Empties the batch and polls up to batch_size() records into it.
  [[nodiscard]] virtual Status Poll(PollResult* result) = 0;
  // The records in the batch now (Emit may swap in an empty buffer).
  virtual size_t Polled() const = 0;
  // The batch's timestamps; with `from_records` and an event-time function, set from it first.
  virtual std::vector<TimestampMs>& Timestamps(bool from_records) = 0;
  // Passes the batch to the chain.
  [[nodiscard]] virtual Status Emit() = 0;

  const OperatorContext& ctx() const { return ctx_; }
  size_t batch_size() const { return batch_size_; }

 private:
  Status TakeRequestedCheckpoints(const WatermarkGenerator& gen, TimestampMs emitted);
  Status TakeCheckpoint(int64_t id, const WatermarkGenerator& gen, TimestampMs emitted);
  void ForgetMovedSplits(WatermarkGenerator& gen);
  void PublishSplitTimes(const WatermarkGenerator& gen, int64_t now);
  bool HoldingForSplits(int64_t now);
  TimestampMs ClockNowMs() const;
  void AssignTimestamps(WatermarkGenerator& gen, int64_t now);

  SourceFunctionBase* source_;
  OperatorContext ctx_;
  WatermarkSpec spec_;
  Consumer* next_;
  size_t batch_size_;
  const JobControl* control_;
  Metric* records_out_ = nullptr;
  Metric* watermark_ = nullptr;
  bool opened_ = false;
  std::mutex requests_mu_;
  std::vector<int64_t> requests_;              // requested, not yet taken; guarded by requests_mu_
  std::atomic<int64_t> barrier_requested_{0};  // newest requested id: the loop's lock-free check
  int64_t barrier_done_ = 0;                   // task thread only
  std::atomic<int64_t> completed_{0};  // newest completed checkpoint (NotifyCheckpointComplete)
  int64_t completed_told_ = 0;         // the newest the source heard of; task thread only
  int64_t pending_since_ = -1;         // HoldingForSplits: since when; task thread only
};

// ts_fn: TimestampMs(const T&) extracting the event time, or SourceTimestamps.
template <typename T, typename TsFn>
class SourceTask final : public SourceTaskBase {
 public:
  SourceTask(std::unique_ptr<SourceFunction<T>> source, OperatorContext ctx, WatermarkSpec spec,
             TsFn ts_fn, BatchConsumer<T>* next, size_t batch_size, const JobControl* control)
      : SourceTaskBase(source.get(), std::move(ctx), spec, next, batch_size, control),
        source_(std::move(source)),
        ts_fn_(std::move(ts_fn)),
        next_(next) {
    batch_.Reserve(batch_size);
  }

 protected:
  Status Poll(PollResult* result) override {
    batch_.Clear();
    return engine_detail::CallUser(ctx(), [&] {
      auto r = source_->PollBatch(batch_, batch_size());
      if (!r.ok()) return r.status();
      *result = *r;
      return Status::Ok();
    });
  }
  size_t Polled() const override { return batch_.size(); }
  std::vector<TimestampMs>& Timestamps(bool from_records) override {
    if constexpr (!std::is_same_v<TsFn, SourceTimestamps>) {
      if (from_records) {
        const size_t n = batch_.size();
        for (size_t i = 0; i < n; ++i) batch_.timestamps[i] = ts_fn_(batch_.records[i]);
      }
    }
    return batch_.timestamps;
  }
  Status Emit() override { return next_->Consume(batch_); }

 private:
  std::unique_ptr<SourceFunction<T>> source_;
  TsFn ts_fn_;
  BatchConsumer<T>* next_;
  Batch<T> batch_;
};

}  // namespace flow::rt
