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

// ts_fn: TimestampMs(const T&) extracting the event time, or SourceTimestamps.
template <typename T, typename TsFn>
class SourceTask final : public Task {
 public:
  SourceTask(std::unique_ptr<SourceFunction<T>> source, OperatorContext ctx, WatermarkSpec spec,
             TsFn ts_fn, BatchConsumer<T>* next, size_t batch_size, const JobControl* control)
      : Task(ctx.name, ctx.subtask),
        source_(std::move(source)),
        ctx_(std::move(ctx)),
        spec_(spec),
        ts_fn_(std::move(ts_fn)),
        next_(next),
        batch_size_(batch_size),
        control_(control) {}

 protected:
  Status Loop() override {
    records_out_ = ctx_.metrics.Counter(kMetricRecordsOut, kHelpRecordsOut);
    watermark_ = ctx_.metrics.Gauge(kMetricWatermark, kHelpWatermark);
    watermark_->Set(kMinWatermark);
    FLOW_RETURN_IF_ERROR(engine_detail::CallUser(ctx_, [&] { return source_->Open(ctx_); }));
    opened_ = true;
    bool finished_before = false;
    WatermarkGenerator gen(spec_, SteadyNowMs());
    TimestampMs restored_wm = kMinWatermark;  // the watermark to emit again right away
    const uint32_t old_parallelism = checkpoints().RestoredParallelism(ctx_.name);
    if (checkpoints().restoring() && old_parallelism != 0 && old_parallelism != ctx_.parallelism) {
      // Rescaled: the source redistributes the old subtasks' splits by its own rules.
      std::vector<OldSourcePosition> old =
          checkpoints().RestoredSourcePositions(ctx_.name, old_parallelism);
      finished_before = std::all_of(old.begin(), old.end(),
                                    [](const OldSourcePosition& p) { return p.finished; });
      if (!finished_before) {
        Status s = engine_detail::CallUser(
            ctx_, [&] { return source_->RestoreRescaled(old, old_parallelism); });
        if (!s.ok()) {
          return Status(
              s.code(),
              fmt::format("restoring at parallelism {} a checkpoint taken at {}: {} (run with "
                          "--parallelism {}, or --restore none)",
                          ctx_.parallelism, old_parallelism, s.message(), old_parallelism));
        }
        auto floor = checkpoints().RestoredWatermarkFloor(ctx_.name, old_parallelism);
        if (!floor.ok()) return floor.status();
        if (!source_->EventTime()) restored_wm = *floor;
      }
    } else if (checkpoints().restoring()) {
      // No snapshot of this subtask: it had finished before the checkpoint, so it is not rerun.
      const OperatorSnapshot* snap = checkpoints().RestoredSnapshot(ctx_.name, ctx_.subtask);
      finished_before = snap == nullptr;
      if (snap != nullptr && !snap->source_position.empty()) {
        BinaryReader reader(snap->source_position);
        FLOW_RETURN_IF_ERROR(
            engine_detail::CallUser(ctx_, [&] { return source_->RestorePosition(&reader); }));
      }
      // A source that supplies its event time restores it with its position.
      if (snap != nullptr && !snap->source_watermark.empty() && !source_->EventTime()) {
        Status s = gen.Restore(snap->source_watermark, SteadyNowMs(), &restored_wm);
        if (!s.ok()) {
          return Status(s.code(), fmt::format("source '{}' subtask {}: {}", ctx_.name, ctx_.subtask,
                                              s.message()));
        }
      }
    }
    TimestampMs emitted = kMinWatermark;
    // A restored source emits at once the watermark it had reached: windows that were due at
    // the checkpoint fire even when no record ever follows.
    if (!finished_before && restored_wm > kMinWatermark && spec_.mode == TimeMode::kEventTime) {
      emitted = restored_wm;
      watermark_->Set(emitted);
      FLOW_RETURN_IF_ERROR(next_->OnWatermark(emitted));
    }
    MarkStarted();
    bool idle = false;
    int64_t last_emit = SteadyNowMs();
    Batch<T> batch;
    batch.Reserve(batch_size_);
    bool drained = finished_before;
    bool quiet_pending = false;  // records went out since the chain last heard the input was quiet
    int64_t last_records = SteadyNowMs();
    while (!drained) {
      if (control_->cancel.load(std::memory_order_relaxed))
        return Status::Cancelled("job cancelled");
      if (control_->stop.load(std::memory_order_relaxed)) break;
      if (barrier_requested_.load(std::memory_order_acquire) > barrier_done_) {
        FLOW_RETURN_IF_ERROR(TakeRequestedCheckpoints(gen, emitted));
      }
      if (const int64_t done = completed_.load(std::memory_order_acquire); done > completed_told_) {
        completed_told_ = done;
        FLOW_RETURN_IF_ERROR(
            engine_detail::CallUser(ctx_, [&] { return source_->OnCheckpointComplete(done); }));
      }
      const int64_t pause = control_->pause_after_barrier.load(std::memory_order_relaxed);
      if (pause > 0 && barrier_done_ >= pause) {
        // Held at the savepoint until the stop: later barriers still pass (empty epochs).
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        continue;
      }
      FLOW_RETURN_IF_ERROR(FireDueTimers());
      batch.Clear();
      PollResult result = PollResult::kIdle;
      FLOW_RETURN_IF_ERROR(engine_detail::CallUser(ctx_, [&] {
        auto r = source_->PollBatch(batch, batch_size_);
        if (!r.ok()) return r.status();
        result = *r;
        return Status::Ok();
      }));
      int64_t now = SteadyNowMs();
      const bool batch_was_empty = batch.empty();  // Consume below may swap in an empty buffer
      if (!batch.empty()) {
        if (idle) {
          idle = false;
          FLOW_RETURN_IF_ERROR(next_->OnIdle(false));
        }
        AssignTimestamps(batch, gen, now);
        records_out_->Add(static_cast<int64_t>(batch.size()));
        FLOW_RETURN_IF_ERROR(next_->Consume(batch));
      }
      if (result == PollResult::kEnd) {
        drained = true;
        break;
      }
      if (spec_.interval <= 0 || now - last_emit >= spec_.interval) {
        last_emit = now;
        ForgetMovedSplits(gen);
        const std::optional<SourceEventTime> supplied = source_->EventTime();
        TimestampMs wm = supplied                ? supplied->watermark
                         : HoldingForSplits(now) ? kMinWatermark
                                                 : gen.Current(now, ClockNowMs());
        // Before the watermark: a writer downstream reads them when it arrives.
        if (!supplied) {
          PublishSplitTimes(gen, now);
        } else if (ctx_.split_times != nullptr) {
          if (auto groups = source_->KeyGroupTimes(supplied->idle)) {
            ctx_.split_times->Publish(ctx_.name, ctx_.subtask, std::move(*groups));
          }
        }
        if (wm > emitted) {
          emitted = wm;
          watermark_->Set(wm);
          FLOW_RETURN_IF_ERROR(next_->OnWatermark(wm));
        }
        const bool now_idle = supplied ? supplied->idle : gen.IsIdle(now);
        if (idle != now_idle && (now_idle || supplied)) {
          idle = now_idle;
          FLOW_RETURN_IF_ERROR(next_->OnIdle(idle));
        }
      }
      if (!batch_was_empty) {
        quiet_pending = true;
        last_records = now;
      } else if (result == PollResult::kIdle && quiet_pending &&
                 now - last_records >= kInputQuietMs) {
        // The source has had nothing for a while: chained sinks write out what they buffered.
        quiet_pending = false;
        FLOW_RETURN_IF_ERROR(NotifyInputQuiet());
      }
      // A source that reports kIdle without waiting must not spin a core.
      if (batch.empty() && result == PollResult::kIdle)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (drained) {
      watermark_->Set(kMaxWatermark);
      FLOW_RETURN_IF_ERROR(next_->OnWatermark(kMaxWatermark));
    }
    FLOW_RETURN_IF_ERROR(next_->OnEnd(drained));
    if (drained) MarkInputFinished();
    return Status::Ok();
  }

 public:
  // Queues `id`; ids only grow, a repeated or older one is ignored.
  void NotifyCheckpointComplete(int64_t id) override {
    int64_t seen = completed_.load(std::memory_order_relaxed);
    while (id > seen && !completed_.compare_exchange_weak(seen, id, std::memory_order_release)) {
    }
  }

  void RequestBarrier(int64_t id) override {
    std::lock_guard<std::mutex> lock(requests_mu_);
    if (id <= barrier_requested_.load(std::memory_order_relaxed)) return;
    requests_.push_back(id);
    barrier_requested_.store(id, std::memory_order_release);
  }

 protected:
  void CloseSource() override {
    if (!opened_) return;
    opened_ = false;
    Status s = engine_detail::CallUser(ctx_, [&] { return source_->Close(); });
    if (!s.ok())
      Log(LogLevel::kError, "engine", "source close failed",
          {{"task", ctx_.name}, {"error", s.ToString()}});
  }

 private:
  // Takes every barrier requested since the last poll, oldest first. With concurrent
  // checkpoints several may be requested while one poll blocks; skipping any of them would make
  // the downstream aligners see N+1 on this channel and N on the others and decline N.
  Status TakeRequestedCheckpoints(const WatermarkGenerator& gen, TimestampMs emitted) {
    std::vector<int64_t> ids;
    {
      std::lock_guard<std::mutex> lock(requests_mu_);
      ids.swap(requests_);
    }
    for (int64_t id : ids) {
      if (id <= barrier_done_) continue;
      barrier_done_ = id;
      FLOW_RETURN_IF_ERROR(TakeCheckpoint(id, gen, emitted));
    }
    return Status::Ok();
  }

  Status TakeCheckpoint(int64_t id, const WatermarkGenerator& gen, TimestampMs emitted) {
    BinaryWriter position;
    FLOW_RETURN_IF_ERROR(engine_detail::CallUser(ctx_, [&] { return source_->OnCheckpoint(id); }));
    FLOW_RETURN_IF_ERROR(
        engine_detail::CallUser(ctx_, [&] { return source_->SnapshotPosition(&position); }));
    SubtaskCheckpoints::SourceState state;
    state.position = position.Release();
    BinaryWriter watermark;
    const int64_t now = SteadyNowMs();
    // What the source would emit next counts as reached, unless a split it has not heard from
    // yet could still hold older records: then only what it did emit.
    const std::optional<SourceEventTime> supplied = source_->EventTime();
    const TimestampMs next = supplied                ? supplied->watermark
                             : HoldingForSplits(now) ? kMinWatermark
                                                     : gen.Current(now, ClockNowMs());
    gen.Snapshot(std::max(emitted, next), now, &watermark);
    state.watermark = watermark.Release();
    return checkpoints().Checkpoint(id, &state, [&] { return next_->OnBarrier(id); });
  }

  // A source whose splits move at run time (a consumer group's partitions under --instance)
  // reports them; the generator forgets the others. Nothing known or owned yet: kept as is.
  void ForgetMovedSplits(WatermarkGenerator& gen) {
    auto owned = source_->OwnedSplits();
    if (owned && !owned->second.empty()) gen.RetainSplits(owned->second);
  }

  // The event time of each split this subtask reads, for writers of repartition topics
  // (shuffle/split_times.h). A split without a record yet is at kMinWatermark while splits are
  // pending (it may hold old records). Once none is, it is at kMaxWatermark, which the writer
  // lowers to its input's watermark: as in Current, a split that has had nothing holds nothing
  // back beyond the subtask's other splits. It is reported idle only when the whole subtask is
  // (its idle timeout): an idle report outlives an instance that fails, and while the split
  // waits for a new owner the others would push event time past its new records.
  void PublishSplitTimes(const WatermarkGenerator& gen, int64_t now) {
    if (ctx_.split_times == nullptr || spec_.mode != TimeMode::kEventTime) return;
    auto owned = source_->OwnedSplits();
    if (!owned) return;
    shuffle::SourceSplits s;
    s.total = owned->first;
    const bool pending = source_->SplitsPending();
    const bool idle = !pending && gen.IsIdle(now);
    for (int32_t split : owned->second) {
      auto t = gen.SplitWatermark(split, now);
      if (t) {
        s.splits.push_back(shuffle::SplitTime{split, t->first, t->second});
      } else if (pending || idle) {
        s.splits.push_back(shuffle::SplitTime{split, kMinWatermark, idle});
      } else {
        s.splits.push_back(shuffle::SplitTime{split, kMaxWatermark, false});
      }
    }
    ctx_.split_times->Publish(ctx_.name, ctx_.subtask, std::move(s));
  }

  // Event time waits for splits not heard from yet (SourceFunction::SplitsPending): before a
  // partition's first fetch, the others' records say nothing about its times. With an idle
  // timeout, a split silent that long stops holding time back, as an idle one does.
  bool HoldingForSplits(int64_t now) {
    if (spec_.mode != TimeMode::kEventTime || !source_->SplitsPending()) {
      pending_since_ = -1;
      return false;
    }
    if (pending_since_ < 0) pending_since_ = now;
    return spec_.idle_timeout <= 0 || now - pending_since_ < spec_.idle_timeout;
  }

  // The job's processing clock (tests may run on a ManualClock).
  TimestampMs ClockNowMs() const {
    return ctx_.clock != nullptr ? ctx_.clock->NowMs() : WallNowMs();
  }

  void AssignTimestamps(Batch<T>& batch, WatermarkGenerator& gen, int64_t now) {
    const size_t n = batch.size();
    if (spec_.mode == TimeMode::kProcessingTime) {
      TimestampMs wall = ClockNowMs();
      for (size_t i = 0; i < n; ++i) batch.timestamps[i] = wall;
    } else if constexpr (!std::is_same_v<TsFn, SourceTimestamps>) {
      for (size_t i = 0; i < n; ++i) batch.timestamps[i] = ts_fn_(batch.records[i]);
    }
    if (spec_.mode != TimeMode::kEventTime) return;
    const std::vector<int32_t>* splits = source_->LastSplits();
    if (splits != nullptr && splits->size() == n) {
      for (size_t i = 0; i < n; ++i) gen.OnRecord(batch.timestamps[i], (*splits)[i], now);
    } else {
      TimestampMs max_ts = kMinWatermark;
      for (size_t i = 0; i < n; ++i) max_ts = std::max(max_ts, batch.timestamps[i]);
      gen.OnMaxOfBatch(max_ts, -1, now);
    }
  }

  std::unique_ptr<SourceFunction<T>> source_;
  OperatorContext ctx_;
  WatermarkSpec spec_;
  TsFn ts_fn_;
  BatchConsumer<T>* next_;
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

}  // namespace flow::rt
