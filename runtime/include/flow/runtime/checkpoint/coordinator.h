#pragma once
// CheckpointCoordinator: decides when checkpoint N starts, collects the tasks' acknowledgements,
// finalises a checkpoint (metadata written by a CheckpointFinalizer) and tells listeners, in
// checkpoint order, which checkpoints completed or were aborted.
//
// It is a state object driven by calls: Tick() (from a timer thread or a test), Acknowledge /
// Decline / TaskFailed (from task threads), TaskFinished, JobFinishing. Time comes from an
// injected clock, so tests drive it without threads or sleeps. CheckpointTimer (below) is the
// thin thread that calls Tick() in a real job.
//
// Threading: every method is thread-safe (one internal mutex). Listener callbacks run on the
// thread whose call caused them, never under the coordinator's mutex, and never concurrently
// with each other; they are delivered strictly in the order the events happened (completion of
// N is delivered after the aborts of every older pending checkpoint it subsumed).
// The finalizer runs under the mutex (one small metadata write per checkpoint).

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "flow/runtime/checkpoint/checkpoint_types.h"
#include "flow/runtime/common/status.h"
#include "flow/runtime/common/time.h"

namespace flow::rt {

struct CheckpointOptions {
  // Time between checkpoint triggers; 0 = periodic checkpoints off (Trigger() still works).
  // Default: 0; ForJob() makes it 1 s when the job has an exactly-once sink.
  DurationMs interval_ms = 0;
  // A checkpoint not complete this long after its trigger is aborted (kTimeout). Default: 10 min.
  DurationMs timeout_ms = 10 * 60 * 1000;
  // Minimum time from the end of one checkpoint (completion) to the next trigger. Default: 0.
  DurationMs min_pause_ms = 0;
  // Checkpoints pending at the same time. Default: 1.
  uint32_t max_concurrent = 1;
  // Consecutive failed checkpoints tolerated; one more fails the job. Default: 0.
  uint32_t tolerable_failures = 0;

  // The defaults for a job: a 1 s interval when it writes to an exactly-once sink (its output
  // becomes visible only at checkpoints), else off.
  static CheckpointOptions ForJob(bool has_exactly_once_sink);
  // InvalidArgument naming the option: interval < 0 or 1..9 ms (too frequent to be useful),
  // timeout <= 0, min pause < 0, max_concurrent not in 1..64.
  [[nodiscard]] Status Validate() const;
};

// Receives "checkpoint N complete" / "checkpoint N aborted" in event order.
// Contract for two-phase-commit sinks (as in Flink): on complete(N) commit EVERY pre-committed
// transaction with id <= N (a subsumed or aborted older checkpoint's data is covered by N, since
// the job kept running). aborted(N) is informational: keep N's pre-committed transaction, it is
// committed with the next completed checkpoint; transactions are aborted only on restart (the
// job restores the last completed checkpoint and replays from there).
class CheckpointListener {
 public:
  virtual ~CheckpointListener() = default;
  virtual void OnCheckpointComplete(int64_t checkpoint_id) = 0;
  virtual void OnCheckpointAborted(int64_t checkpoint_id, CheckpointFailureReason reason) = 0;
};

// Makes a checkpoint durable once every task acknowledged it (CheckpointStorage implements it).
class CheckpointFinalizer {
 public:
  virtual ~CheckpointFinalizer() = default;
  // Writes the metadata of checkpoint `checkpoint_id` atomically. An error aborts the checkpoint
  // with kStorageIoError.
  [[nodiscard]] virtual Status Finalize(int64_t checkpoint_id,
                                        const std::vector<TaskAck>& acks) = 0;
  // Removes what an aborted checkpoint left behind (best effort).
  virtual void Discard(int64_t checkpoint_id) = 0;
};

// Where the coordinator reports each checkpoint; default writes FormatCheckpointReport to stderr.
using CheckpointReportSink = std::function<void(const CheckpointReport&)>;
using MonotonicClockMs = std::function<int64_t()>;

class CheckpointCoordinator {
 public:
  // `task_names` lists every task that must acknowledge (its index is TaskAck::task); names are
  // for messages ("window#2"). `finalizer` must outlive the coordinator; may be null (tests: the
  // checkpoint completes on the last ack). `first_id`: the id of the first checkpoint (after a
  // restore: restored id + 1). Options must be valid (Validate()); asserted.
  CheckpointCoordinator(CheckpointOptions options, std::vector<std::string> task_names,
                        CheckpointFinalizer* finalizer, MonotonicClockMs clock,
                        int64_t first_id = 1, CheckpointReportSink report_sink = nullptr);

  void AddListener(CheckpointListener* listener);

  // Starts the periodic schedule at the current time: the first trigger is due one interval later.
  void Start();
  // Triggers a checkpoint now (savepoint or manual). Returns its id; the caller injects barrier
  // `id` into every source. Refused (no id consumed): kTooManyConcurrent, kMinPause, kNotRunning,
  // kJobFinishing — as an Aborted Status whose message names the reason.
  Result<int64_t> Trigger();
  // Periodic work: aborts timed-out checkpoints; triggers one when due (interval elapsed since
  // the last trigger, min pause respected, room for one more). Returns the id it triggered.
  std::optional<int64_t> Tick();

  // A task's acknowledgement. Unknown task index or checkpoint id that was never triggered:
  // InvalidArgument. A late ack for an already aborted/completed checkpoint is ignored (OK).
  [[nodiscard]] Status Acknowledge(TaskAck ack);
  // A task could not snapshot checkpoint `id`: aborts it (kTaskDeclined).
  void Decline(int64_t checkpoint_id, size_t task, std::string message);
  // A task failed: every pending checkpoint is aborted (kTaskFailed).
  void TaskFailed(size_t task, std::string message);
  // The task reached end of input: it acknowledges every pending and future checkpoint as
  // finished (OperatorSnapshot::finished), so checkpoints can still complete.
  void TaskFinished(size_t task, std::vector<std::string> operator_names);
  // The job is finishing or stopping: aborts all pending checkpoints (kJobFinishing, not counted
  // as failures) and refuses further triggers.
  void JobFinishing();
  // The job failed (it is being cancelled and will restart or exit): aborts all pending
  // checkpoints (kNotRunning, not counted) and refuses every later trigger, so snapshot writes
  // that drain after the cancel complete nothing and run no retention.
  void JobFailed(const std::string& message);

  // Set once more than tolerable_failures consecutive checkpoints failed: the job must fail
  // (and be restarted by the restart policy). The Status names the last failure.
  std::optional<Status> JobFailure() const;
  int64_t LastCompletedId() const;  // 0 when none
  size_t PendingCount() const;
  uint32_t ConsecutiveFailures() const;

 private:
  struct Pending {
    int64_t id = 0;
    int64_t trigger_ms = 0;
    std::vector<bool> acked;
    size_t acked_count = 0;
    std::vector<TaskAck> acks;
  };
  struct Notification {
    int64_t id;
    bool completed;
    CheckpointFailureReason reason;
  };

  std::optional<int64_t> CanTriggerLocked(int64_t now, CheckpointFailureReason* why) const;
  int64_t TriggerLocked(int64_t now);
  void AckFinishedLocked(Pending& p, size_t task);
  void MaybeCompleteLocked(int64_t id, int64_t now);
  void AbortLocked(int64_t id, CheckpointFailureReason reason, const std::string& message,
                   int64_t now);
  void ReportLocked(const Pending& p, bool completed, CheckpointFailureReason reason,
                    const std::string& message, int64_t now);
  void Deliver();

  const CheckpointOptions options_;
  const std::vector<std::string> task_names_;
  CheckpointFinalizer* const finalizer_;
  const MonotonicClockMs clock_;
  const CheckpointReportSink report_sink_;

  mutable std::mutex mu_;
  std::vector<CheckpointListener*> listeners_;
  std::map<int64_t, Pending> pending_;
  std::map<size_t, std::vector<std::string>> finished_tasks_;  // task -> its operator names
  int64_t next_id_;
  int64_t last_completed_id_ = 0;
  bool started_ = false;
  bool finishing_ = false;
  bool failed_ = false;  // JobFailed
  int64_t last_trigger_ms_ = 0;
  std::optional<int64_t> last_completion_ms_;
  uint32_t consecutive_failures_ = 0;
  std::optional<Status> job_failure_;
  std::deque<Notification> notifications_;
  bool delivering_ = false;
};

// Calls coordinator->Tick() every `period_ms` on its own thread and hands each triggered id to
// `on_trigger` (the engine injects barriers there). Stop() (or the destructor) joins the thread.
class CheckpointTimer {
 public:
  CheckpointTimer(CheckpointCoordinator* coordinator, DurationMs period_ms,
                  std::function<void(int64_t)> on_trigger);
  ~CheckpointTimer();
  CheckpointTimer(const CheckpointTimer&) = delete;
  CheckpointTimer& operator=(const CheckpointTimer&) = delete;
  void Stop();
  // Triggers a checkpoint now (coordinator->Trigger) and hands its id to `on_trigger`, serialized
  // with the periodic triggers: barriers reach every source in id order, so none is skipped.
  // `before`, if given, runs with the id before any barrier is injected.
  Result<int64_t> TriggerNow(const std::function<void(int64_t)>& before = {});
  // While paused no periodic checkpoint is triggered (TriggerNow still works). Stop with
  // savepoint pauses before its trigger, so the savepoint is the last checkpoint the sinks commit.
  void SetPaused(bool paused) { paused_.store(paused); }

 private:
  void Run();
  CheckpointCoordinator* coordinator_;
  DurationMs period_ms_;
  std::function<void(int64_t)> on_trigger_;
  std::mutex trigger_mu_;  // a trigger and the injection of its barriers, one at a time
  std::atomic<bool> paused_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace flow::rt
