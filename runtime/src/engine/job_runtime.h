#pragma once
// Engine-internal: what one Job::Execute owns while the job runs (job.cpp, job_run.cpp,
// job_checkpoints.cpp).

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "flow/runtime/checkpoint/checkpoint_storage.h"
#include "flow/runtime/checkpoint/coordinator.h"
#include "flow/runtime/checkpoint/recovery.h"
#include "flow/runtime/engine/job.h"
#include "flow/runtime/engine/state_adoption.h"
#include "txn_sinks.h"

namespace flow::rt {

// Hears which checkpoints completed or were aborted, for Job::TakeSavepoint. Registered after
// the exactly-once sinks, so a completion seen here is also committed.
class SavepointWaiter final : public CheckpointListener {
 public:
  void OnCheckpointComplete(int64_t id) override;
  void OnCheckpointAborted(int64_t id, CheckpointFailureReason reason) override;
  // OK once `id` completed; kAborted naming the reason; kTimedOut at `deadline_ms` (steady);
  // kCancelled as soon as `gone()` says the job ended.
  [[nodiscard]] Status Wait(int64_t id, int64_t deadline_ms, const std::function<bool()>& gone);

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<int64_t, bool> done_;  // id -> completed (true) or aborted (false)
  std::map<int64_t, CheckpointFailureReason> why_;
};

struct Job::Runtime {
  std::vector<std::unique_ptr<ChannelBase>> channels;
  std::vector<std::unique_ptr<Consumer>> consumers;
  std::vector<std::unique_ptr<Task>> tasks;
  std::vector<InputGate*> gates;
  std::vector<Metric*> source_out;
  std::vector<Metric*> sink_in;
  std::vector<Metric*> sink_watermark;
  // Each input gate with its subtask's backpressure time from earlier attempts (Job member).
  std::vector<std::pair<InputGate*, std::atomic<int64_t>*>> backpressure;
  std::atomic<size_t> running{0};
  std::atomic<bool> ended{false};  // every task thread returned: no checkpoint completes any more
  std::mutex error_mu;
  Status error;
  // Instances with --state-root: which partitions' state this run adopts (OperatorContext). The
  // storage's retention asks it, so it is declared first and outlives the storage.
  std::unique_ptr<StateAdoption> adoption;
  // Checkpoints (all empty when the job has no state dir and nothing to restore).
  std::unique_ptr<CheckpointStorage> storage;
  std::optional<RestorePoint> restore;
  std::unique_ptr<SavepointWaiter> savepoints;  // declared before the coordinator: outlives it
  std::unique_ptr<CheckpointListener> source_notifier;  // tells source tasks of completions
  std::mutex savepoint_mu;                              // one savepoint at a time
  std::unique_ptr<CheckpointCoordinator> coordinator;
  std::unique_ptr<CheckpointTimer> checkpoint_timer;
  // Sources publish their splits' event times here for repartition writers (OperatorContext).
  shuffle::SplitTimes split_times;
  // Exactly-once sinks (null when the job has none); destroyed first (txn_sinks.h).
  std::unique_ptr<TxnSinks> txn;
};

}  // namespace flow::rt
