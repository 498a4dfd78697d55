#include <algorithm>
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "flow/runtime/engine/task.h"
#include "flow/runtime/log/log.h"

namespace flow::rt {

Status SourceTaskBase::Loop() {
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
    finished_before =
        std::all_of(old.begin(), old.end(), [](const OldSourcePosition& p) { return p.finished; });
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
  bool drained = finished_before;
  bool quiet_pending = false;  // records went out since the chain last heard the input was quiet
  int64_t last_records = SteadyNowMs();
  while (!drained) {
    if (control_->cancel.load(std::memory_order_relaxed)) return Status::Cancelled("job cancelled");
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
    PollResult result = PollResult::kIdle;
    FLOW_RETURN_IF_ERROR(Poll(&result));
    int64_t now = SteadyNowMs();
    const size_t polled = Polled();
    const bool batch_was_empty = polled == 0;  // Emit below may swap in an empty buffer
    if (polled > 0) {
      if (idle) {
        idle = false;
        FLOW_RETURN_IF_ERROR(next_->OnIdle(false));
      }
      AssignTimestamps(gen, now);
      records_out_->Add(static_cast<int64_t>(polled));
      FLOW_RETURN_IF_ERROR(Emit());
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
    if (Polled() == 0 && result == PollResult::kIdle)
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

void SourceTaskBase::NotifyCheckpointComplete(int64_t id) {
  int64_t seen = completed_.load(std::memory_order_relaxed);
  while (id > seen && !completed_.compare_exchange_weak(seen, id, std::memory_order_release)) {
  }
}

void SourceTaskBase::RequestBarrier(int64_t id) {
  std::lock_guard<std::mutex> lock(requests_mu_);
  if (id <= barrier_requested_.load(std::memory_order_relaxed)) return;
  requests_.push_back(id);
  barrier_requested_.store(id, std::memory_order_release);
}

void SourceTaskBase::CloseSource() {
  if (!opened_) return;
  opened_ = false;
  Status s = engine_detail::CallUser(ctx_, [&] { return source_->Close(); });
  if (!s.ok())
    Log(LogLevel::kError, "engine", "source close failed",
        {{"task", ctx_.name}, {"error", s.ToString()}});
}

// Takes every barrier requested since the last poll, oldest first. With concurrent
// checkpoints several may be requested while one poll blocks; skipping any of them would make
// the downstream aligners see N+1 on this channel and N on the others and decline N.
Status SourceTaskBase::TakeRequestedCheckpoints(const WatermarkGenerator& gen,
                                                TimestampMs emitted) {
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

Status SourceTaskBase::TakeCheckpoint(int64_t id, const WatermarkGenerator& gen,
                                      TimestampMs emitted) {
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
void SourceTaskBase::ForgetMovedSplits(WatermarkGenerator& gen) {
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
void SourceTaskBase::PublishSplitTimes(const WatermarkGenerator& gen, int64_t now) {
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
bool SourceTaskBase::HoldingForSplits(int64_t now) {
  if (spec_.mode != TimeMode::kEventTime || !source_->SplitsPending()) {
    pending_since_ = -1;
    return false;
  }
  if (pending_since_ < 0) pending_since_ = now;
  return spec_.idle_timeout <= 0 || now - pending_since_ < spec_.idle_timeout;
}

// The job's processing clock (tests may run on a ManualClock).
TimestampMs SourceTaskBase::ClockNowMs() const {
  return ctx_.clock != nullptr ? ctx_.clock->NowMs() : WallNowMs();
}

void SourceTaskBase::AssignTimestamps(WatermarkGenerator& gen, int64_t now) {
  const bool processing = spec_.mode == TimeMode::kProcessingTime;
  std::vector<TimestampMs>& ts = Timestamps(!processing);
  const size_t n = ts.size();
  if (processing) {
    TimestampMs wall = ClockNowMs();
    for (size_t i = 0; i < n; ++i) ts[i] = wall;
  }
  if (spec_.mode != TimeMode::kEventTime) return;
  const std::vector<int32_t>* splits = source_->LastSplits();
  if (splits != nullptr && splits->size() == n) {
    for (size_t i = 0; i < n; ++i) gen.OnRecord(ts[i], (*splits)[i], now);
  } else {
    TimestampMs max_ts = kMinWatermark;
    for (size_t i = 0; i < n; ++i) max_ts = std::max(max_ts, ts[i]);
    gen.OnMaxOfBatch(max_ts, -1, now);
  }
}

}  // namespace flow::rt
