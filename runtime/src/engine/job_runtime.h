#pragma once
// Engine-internal: what one Job::Execute owns while the job runs (job.cpp, job_checkpoints.cpp).

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "flow/runtime/checkpoint/checkpoint_storage.h"
#include "flow/runtime/checkpoint/coordinator.h"
#include "flow/runtime/checkpoint/recovery.h"
#include "flow/runtime/engine/job.h"
#include "txn_sinks.h"

namespace flow::rt {

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
  std::mutex error_mu;
  Status error;
  // Checkpoints (all empty when the job has no state dir and nothing to restore).
  std::unique_ptr<CheckpointStorage> storage;
  std::optional<RestorePoint> restore;
  std::unique_ptr<CheckpointCoordinator> coordinator;
  std::unique_ptr<CheckpointTimer> checkpoint_timer;
  // Exactly-once sinks (null when the job has none); destroyed first (txn_sinks.h).
  std::unique_ptr<TxnSinks> txn;
};

}  // namespace flow::rt
