#include "flow/runtime/checkpoint/coordinator.h"

#include <cassert>
#include <chrono>
#include <cstdio>
#include <utility>

namespace flow::rt {

CheckpointOptions CheckpointOptions::ForJob(bool has_exactly_once_sink) {
  CheckpointOptions o;
  if (has_exactly_once_sink) o.interval_ms = 1000;
  return o;
}

Status CheckpointOptions::Validate() const {
  if (interval_ms < 0) {
    return Status::InvalidArgument("checkpoint interval must be >= 0 ms (0 = off), got " +
                                   std::to_string(interval_ms));
  }
  if (interval_ms > 0 && interval_ms < 10) {
    return Status::InvalidArgument("checkpoint interval must be 0 (off) or at least 10 ms, got " +
                                   std::to_string(interval_ms) + " ms");
  }
  if (timeout_ms <= 0) {
    return Status::InvalidArgument("checkpoint timeout must be > 0 ms, got " +
                                   std::to_string(timeout_ms));
  }
  if (min_pause_ms < 0) {
    return Status::InvalidArgument("checkpoint min pause must be >= 0 ms, got " +
                                   std::to_string(min_pause_ms));
  }
  if (max_concurrent < 1 || max_concurrent > 64) {
    return Status::InvalidArgument("max concurrent checkpoints must be in 1..64, got " +
                                   std::to_string(max_concurrent));
  }
  return Status::Ok();
}

CheckpointCoordinator::CheckpointCoordinator(CheckpointOptions options,
                                             std::vector<std::string> task_names,
                                             CheckpointFinalizer* finalizer, MonotonicClockMs clock,
                                             int64_t first_id, CheckpointReportSink report_sink)
    : options_(options),
      task_names_(std::move(task_names)),
      finalizer_(finalizer),
      clock_(std::move(clock)),
      report_sink_(std::move(report_sink)),
      next_id_(first_id) {
  assert(options_.Validate().ok() &&
         "CheckpointCoordinator built with invalid options; call Validate() first");
  assert(clock_ && "CheckpointCoordinator needs a clock");
  assert(first_id >= 1 && "checkpoint ids start at 1");
}

void CheckpointCoordinator::AddListener(CheckpointListener* listener) {
  std::lock_guard<std::mutex> lock(mu_);
  listeners_.push_back(listener);
}

void CheckpointCoordinator::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  started_ = true;
  last_trigger_ms_ = clock_();
}

std::optional<int64_t> CheckpointCoordinator::CanTriggerLocked(int64_t now,
                                                               CheckpointFailureReason* why) const {
  if (!started_ || job_failure_ || failed_) {
    *why = CheckpointFailureReason::kNotRunning;
  } else if (finishing_) {
    *why = CheckpointFailureReason::kJobFinishing;
  } else if (pending_.size() >= options_.max_concurrent) {
    *why = CheckpointFailureReason::kTooManyConcurrent;
  } else if (last_completion_ms_ && now - *last_completion_ms_ < options_.min_pause_ms) {
    *why = CheckpointFailureReason::kMinPause;
  } else {
    return next_id_;
  }
  return std::nullopt;
}

int64_t CheckpointCoordinator::TriggerLocked(int64_t now) {
  int64_t id = next_id_++;
  last_trigger_ms_ = now;
  Pending& p = pending_[id];
  p.id = id;
  p.trigger_ms = now;
  p.acked.assign(task_names_.size(), false);
  for (const auto& [task, ops] : finished_tasks_) AckFinishedLocked(p, task);
  MaybeCompleteLocked(id, now);
  return id;
}

Result<int64_t> CheckpointCoordinator::Trigger() {
  Result<int64_t> result = Status::Internal("unset");
  {
    std::lock_guard<std::mutex> lock(mu_);
    int64_t now = clock_();
    CheckpointFailureReason why{};
    if (!CanTriggerLocked(now, &why)) {
      return Status::Aborted(
          std::string("checkpoint trigger refused: ") + CheckpointFailureReasonName(why) + " (" +
          std::to_string(pending_.size()) +
          " pending, max_concurrent=" + std::to_string(options_.max_concurrent) + ")");
    }
    result = TriggerLocked(now);
  }
  Deliver();
  return result;
}

std::optional<int64_t> CheckpointCoordinator::Tick() {
  std::optional<int64_t> triggered;
  {
    std::lock_guard<std::mutex> lock(mu_);
    int64_t now = clock_();
    std::vector<int64_t> expired;
    for (const auto& [id, p] : pending_) {
      if (now - p.trigger_ms >= options_.timeout_ms) expired.push_back(id);
    }
    for (int64_t id : expired) {
      AbortLocked(
          id, CheckpointFailureReason::kTimeout,
          "not acknowledged by all tasks within " + std::to_string(options_.timeout_ms) + " ms",
          now);
    }
    CheckpointFailureReason why{};
    if (options_.interval_ms > 0 && now - last_trigger_ms_ >= options_.interval_ms &&
        CanTriggerLocked(now, &why)) {
      triggered = TriggerLocked(now);
    }
  }
  Deliver();
  return triggered;
}

Status CheckpointCoordinator::Acknowledge(TaskAck ack) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (ack.task >= task_names_.size()) {
      return Status::InvalidArgument("checkpoint ack from unknown task #" +
                                     std::to_string(ack.task) + " (job has " +
                                     std::to_string(task_names_.size()) + " tasks)");
    }
    if (ack.checkpoint_id < 1 || ack.checkpoint_id >= next_id_) {
      return Status::InvalidArgument("task " + task_names_[ack.task] + " acknowledged checkpoint " +
                                     std::to_string(ack.checkpoint_id) +
                                     ", which was never triggered");
    }
    auto it = pending_.find(ack.checkpoint_id);
    if (it == pending_.end()) return Status::Ok();  // late ack of an aborted/completed checkpoint
    Pending& p = it->second;
    if (p.acked[ack.task]) {
      return Status::InvalidArgument("task " + task_names_[ack.task] + " acknowledged checkpoint " +
                                     std::to_string(ack.checkpoint_id) + " twice");
    }
    p.acked[ack.task] = true;
    ++p.acked_count;
    int64_t id = ack.checkpoint_id;
    p.acks.push_back(std::move(ack));
    MaybeCompleteLocked(id, clock_());
  }
  Deliver();
  return Status::Ok();
}

void CheckpointCoordinator::Decline(int64_t checkpoint_id, size_t task, std::string message) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::string who =
        task < task_names_.size() ? task_names_[task] : "task #" + std::to_string(task);
    AbortLocked(checkpoint_id, CheckpointFailureReason::kTaskDeclined, who + ": " + message,
                clock_());
  }
  Deliver();
}

void CheckpointCoordinator::TaskFailed(size_t task, std::string message) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::string who =
        task < task_names_.size() ? task_names_[task] : "task #" + std::to_string(task);
    int64_t now = clock_();
    while (!pending_.empty()) {
      AbortLocked(pending_.begin()->first, CheckpointFailureReason::kTaskFailed,
                  who + " failed: " + message, now);
    }
  }
  Deliver();
}

void CheckpointCoordinator::TaskFinished(size_t task, std::vector<std::string> operator_names) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (task >= task_names_.size()) return;
    finished_tasks_[task] = std::move(operator_names);
    std::vector<int64_t> ids;
    for (auto& [id, p] : pending_) {
      AckFinishedLocked(p, task);
      ids.push_back(id);
    }
    int64_t now = clock_();
    for (int64_t id : ids) MaybeCompleteLocked(id, now);
  }
  Deliver();
}

void CheckpointCoordinator::AckFinishedLocked(Pending& p, size_t task) {
  if (p.acked[task]) return;
  TaskAck ack;
  ack.checkpoint_id = p.id;
  ack.task = task;
  for (const std::string& op : finished_tasks_[task]) {
    OperatorSnapshot s;
    s.operator_name = op;
    s.finished = true;
    ack.snapshots.push_back(std::move(s));
  }
  p.acked[task] = true;
  ++p.acked_count;
  p.acks.push_back(std::move(ack));
}

void CheckpointCoordinator::JobFinishing() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    finishing_ = true;
    int64_t now = clock_();
    while (!pending_.empty()) {
      AbortLocked(pending_.begin()->first, CheckpointFailureReason::kJobFinishing,
                  "job is finishing", now);
    }
  }
  Deliver();
}

void CheckpointCoordinator::JobFailed(const std::string& message) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    failed_ = true;
    int64_t now = clock_();
    while (!pending_.empty()) {
      AbortLocked(pending_.begin()->first, CheckpointFailureReason::kNotRunning,
                  "the job failed: " + message, now);
    }
  }
  Deliver();
}

void CheckpointCoordinator::MaybeCompleteLocked(int64_t id, int64_t now) {
  auto it = pending_.find(id);
  if (it == pending_.end() || it->second.acked_count < task_names_.size()) return;
  if (finalizer_ != nullptr) {
    Status s = finalizer_->Finalize(id, it->second.acks);
    if (!s.ok()) {
      AbortLocked(id, CheckpointFailureReason::kStorageIoError, s.ToString(), now);
      return;
    }
  }
  // Older checkpoints still pending are subsumed: this one covers everything they would have.
  while (!pending_.empty() && pending_.begin()->first < id) {
    AbortLocked(pending_.begin()->first, CheckpointFailureReason::kSubsumed,
                "checkpoint " + std::to_string(id) + " completed first", now);
  }
  it = pending_.find(id);
  ReportLocked(it->second, true, CheckpointFailureReason::kTimeout, "", now);
  pending_.erase(it);
  last_completed_id_ = id;
  last_completion_ms_ = now;
  consecutive_failures_ = 0;
  notifications_.push_back({id, true, CheckpointFailureReason::kTimeout});
}

void CheckpointCoordinator::AbortLocked(int64_t id, CheckpointFailureReason reason,
                                        const std::string& message, int64_t now) {
  auto it = pending_.find(id);
  if (it == pending_.end()) return;
  ReportLocked(it->second, false, reason, message, now);
  pending_.erase(it);
  if (finalizer_ != nullptr) finalizer_->Discard(id);
  notifications_.push_back({id, false, reason});
  if (!CountsAsFailure(reason)) return;
  ++consecutive_failures_;
  if (consecutive_failures_ > options_.tolerable_failures && !job_failure_) {
    job_failure_ = Status::Aborted("checkpoint " + std::to_string(id) + " failed (" +
                                   CheckpointFailureReasonName(reason) + ": " + message + "); " +
                                   std::to_string(consecutive_failures_) +
                                   " consecutive checkpoint failures exceed tolerable_failures=" +
                                   std::to_string(options_.tolerable_failures));
  }
}

void CheckpointCoordinator::ReportLocked(const Pending& p, bool completed,
                                         CheckpointFailureReason reason, const std::string& message,
                                         int64_t now) {
  CheckpointReport r;
  r.checkpoint_id = p.id;
  r.completed = completed;
  r.reason = reason;
  r.message = message;
  r.duration_ms = now - p.trigger_ms;
  r.acked_tasks = p.acked_count;
  r.total_tasks = task_names_.size();
  for (const TaskAck& a : p.acks) {
    r.bytes += a.stats.bytes;
    if (a.stats.alignment_ms > r.max_alignment_ms) r.max_alignment_ms = a.stats.alignment_ms;
  }
  if (report_sink_) {
    report_sink_(r);
  } else {
    // Same shape as the engine's log lines; the engine passes a sink that uses its logger.
    int64_t wall = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
    std::fprintf(stderr, "%s %s %s\n", FormatTimestamp(wall).c_str(), completed ? "INFO" : "WARN",
                 FormatCheckpointReport(r).c_str());
  }
}

void CheckpointCoordinator::Deliver() {
  std::unique_lock<std::mutex> lock(mu_);
  if (delivering_) return;  // the thread already delivering picks up what we queued, in order
  delivering_ = true;
  while (!notifications_.empty()) {
    Notification n = notifications_.front();
    notifications_.pop_front();
    std::vector<CheckpointListener*> listeners = listeners_;
    lock.unlock();
    for (CheckpointListener* l : listeners) {
      if (n.completed) {
        l->OnCheckpointComplete(n.id);
      } else {
        l->OnCheckpointAborted(n.id, n.reason);
      }
    }
    lock.lock();
  }
  delivering_ = false;
}

std::optional<Status> CheckpointCoordinator::JobFailure() const {
  std::lock_guard<std::mutex> lock(mu_);
  return job_failure_;
}

int64_t CheckpointCoordinator::LastCompletedId() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_completed_id_;
}

size_t CheckpointCoordinator::PendingCount() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pending_.size();
}

uint32_t CheckpointCoordinator::ConsecutiveFailures() const {
  std::lock_guard<std::mutex> lock(mu_);
  return consecutive_failures_;
}

CheckpointTimer::CheckpointTimer(CheckpointCoordinator* coordinator, DurationMs period_ms,
                                 std::function<void(int64_t)> on_trigger)
    : coordinator_(coordinator),
      period_ms_(period_ms > 0 ? period_ms : 10),
      on_trigger_(std::move(on_trigger)) {
  thread_ = std::thread([this] { Run(); });
}

CheckpointTimer::~CheckpointTimer() {
  Stop();
}

void CheckpointTimer::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void CheckpointTimer::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, std::chrono::milliseconds(period_ms_));
    if (stop_) break;
    lock.unlock();
    if (!paused_.load()) {
      std::lock_guard<std::mutex> trigger(trigger_mu_);
      std::optional<int64_t> id = coordinator_->Tick();
      if (id && on_trigger_) on_trigger_(*id);
    }
    lock.lock();
  }
}

Result<int64_t> CheckpointTimer::TriggerNow(const std::function<void(int64_t)>& before) {
  std::lock_guard<std::mutex> trigger(trigger_mu_);
  Result<int64_t> id = coordinator_->Trigger();
  if (!id.ok()) return id;
  if (before) before(*id);
  if (on_trigger_) on_trigger_(*id);
  return id;
}

}  // namespace flow::rt
