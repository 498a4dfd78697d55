// Wiring of the checkpoint machinery into a running job (docs/checkpoints.md, "Engine hooks"):
// storage and restore selection at start-up, the coordinator and its timer, each task's part.

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "flow/runtime/checkpoint/state_mapping.h"
#include "flow/runtime/engine/job.h"
#include "flow/runtime/log/log.h"
#include "flow/runtime/state/keyed_state_backend.h"
#include "job_metrics.h"
#include "job_runtime.h"

namespace flow::rt {
namespace {

// How often the timer asks the coordinator whether a checkpoint is due.
constexpr DurationMs kCheckpointTickMs = 10;

// Parallelism is not part of the fingerprint, so only the choices the user made explicitly
// (key, broadcast) count; forward vs. rebalance follows from parallelism.
std::string EdgePart(const engine_detail::EdgeBase& e, const std::string& from,
                     const std::string& to) {
  std::string how = e.kind == Partitioning::kHash        ? "key:" + e.key_name
                    : e.kind == Partitioning::kBroadcast ? std::string("broadcast")
                                                         : std::string("plain");
  return fmt::format("edge:{}->{}:{}:{}", from, to, e.input_index, how);
}

// "count 4->2, events 4->2" for the operators whose parallelism changed; "no" when none did.
// Keyed state is redistributed by key group (SubtaskCheckpoints::RestoreMembers), source positions
// by the source's split rules (SourceFunction::RestoreRescaled).
std::string RescaledOperators(const CheckpointMetadata& m, const JobCheckpointInfo& job) {
  std::string out;
  for (const OperatorParallelism& now : job.operators) {
    for (const OperatorParallelism& then : m.operators) {
      if (then.name != now.name || then.parallelism == now.parallelism) continue;
      out += fmt::format("{}{} {}->{}", out.empty() ? "" : ", ", now.name, then.parallelism,
                         now.parallelism);
    }
  }
  return out.empty() ? "no" : out;
}

// Passes completions to the source tasks (Task::NotifyCheckpointComplete).
class SourceNotifier final : public CheckpointListener {
 public:
  explicit SourceNotifier(const std::vector<std::unique_ptr<Task>>* tasks) : tasks_(tasks) {}
  void OnCheckpointComplete(int64_t id) override {
    for (const auto& t : *tasks_) t->NotifyCheckpointComplete(id);
  }
  void OnCheckpointAborted(int64_t, CheckpointFailureReason) override {}

 private:
  const std::vector<std::unique_ptr<Task>>* tasks_;
};
}  // namespace

Status Job::PrepareCheckpoints(Runtime* rt) {
  rt->txn = TxnSinks::Find(nodes_);  // exactly-once sinks: txn_sinks.cpp
  if (rt->txn) FLOW_RETURN_IF_ERROR(rt->txn->ApplyDefaults(&options_.checkpoint));
  const CheckpointFlags& flags = options_.checkpoint;
  if (flags.state_dir.empty() && flags.restore.empty()) return Status::Ok();
  JobCheckpointInfo info;
  info.max_parallelism = options_.max_parallelism;
  info.state_schemas = state_schemas_;
  info.allow_dropped_state = options_.allow_dropped_state;
  std::vector<std::string> parts;
  for (const auto& node : nodes_) {
    parts.push_back(fmt::format("node:{}:{}", node->name, node->kind()));
    info.operators.push_back(
        OperatorParallelism{node->name, node->parallelism, node->state_schema});
  }
  for (const auto& e : edges_)
    parts.push_back(EdgePart(*e, nodes_[e->from]->name, nodes_[e->to]->name));
  info.fingerprint = JobFingerprint(parts);
  if (rt->adoption) rt->adoption->SetFingerprint(info.fingerprint);

  if (!flags.state_dir.empty()) {
    // One process per state dir, and the dir of one job only: both checked before anything in
    // it (or in Kafka) is touched. Held across in-process restarts.
    if (!state_dir_) {
      auto dir = StateDirectory::Open(flags.state_dir);
      if (!dir.ok()) return dir.status();
      state_dir_ = std::move(dir).value();
      FLOW_RETURN_IF_ERROR(state_dir_->Claim(options_.job_id));
    }
    auto storage = CheckpointStorage::Open(
        CheckpointStorageOptions{flags.state_dir, flags.retained, {}, {}}, info);
    if (!storage.ok()) return storage.status();
    rt->storage = std::move(storage).value();
    if (rt->adoption) {
      // Another instance may still have to adopt state from a checkpoint a committed offset names.
      rt->storage->KeepNamed([adoption = rt->adoption.get()] { return adoption->Named(); });
    }
  }
  if (rt->txn) FLOW_RETURN_IF_ERROR(rt->txn->Start(options_, rt->storage.get(), state_dir_.get()));
  if (state_dir_) FLOW_RETURN_IF_ERROR(state_dir_->ConfirmClaim());  // the start-up checks passed
  auto selection = rt->txn ? rt->txn->SelectRestore(flags, info)
                           : ResolveRestore(flags.state_dir, flags.restore, info);
  if (!selection.ok()) {
    // Another job's checkpoint, or one this script cannot take (state_mapping.h).
    restore_refused_ = selection.status().code() == StatusCode::kInvalidArgument;
    return selection.status();
  }
  for (const std::string& w : selection->warnings) Log(LogLevel::kWarn, "checkpoint", w);
  int64_t first_id = 1;
  if (selection->point && info.state_schemas && selection->point->metadata.state_schemas) {
    // Refusals were reported by the selection; what is dropped is taken out, so those operators
    // start empty, and a restore into a changed script says what carried over.
    StateMapping mapping = MapRestoredState(selection->point->metadata, info);
    DropUnmappedState(mapping, &selection->point->metadata);
    const bool same = mapping.migrated.empty() && mapping.fresh.empty() && mapping.dropped.empty();
    if (!same)
      Log(mapping.dropped.empty() ? LogLevel::kInfo : LogLevel::kWarn, "checkpoint",
          "state mapped by operator",
          {{"path", selection->point->path}, {"state", DescribeStateMapping(mapping)}});
  }
  if (selection->point) {
    rt->restore = std::move(selection->point);
    first_id = rt->restore->metadata.checkpoint_id + 1;
    Log(LogLevel::kInfo, "checkpoint", "restoring",
        {{"path", rt->restore->path},
         {"id", std::to_string(rt->restore->metadata.checkpoint_id)},
         {"rescaled", RescaledOperators(rt->restore->metadata, info)}});
  }

  if (rt->storage && flags.options.interval_ms > 0) {
    std::vector<std::string> names;
    for (const auto& t : rt->tasks) names.push_back(fmt::format("{}#{}", t->name(), t->subtask()));
    rt->coordinator = std::make_unique<CheckpointCoordinator>(
        flags.options, std::move(names), rt->storage.get(), [] { return SteadyNowMs(); }, first_id,
        [metrics = checkpoint_metrics_.get()](const CheckpointReport& r) {
          Log(r.completed ? LogLevel::kInfo : LogLevel::kWarn, "checkpoint",
              FormatCheckpointReport(r));
          metrics->Report(r);
        });
  }
  if (rt->txn) {
    FLOW_RETURN_IF_ERROR(rt->txn->Recover(rt->restore ? rt->restore->metadata.checkpoint_id : 0,
                                          rt->coordinator.get(),
                                          [this, rt](const Status& s) { Fail(rt, s); }));
  }
  if (rt->coordinator) {
    // After the exactly-once sinks: a savepoint is reported only once its checkpoint committed.
    rt->savepoints = std::make_unique<SavepointWaiter>();
    rt->coordinator->AddListener(rt->savepoints.get());
    // After the exactly-once sinks too: a source hears of a completion once it committed (a
    // Kafka source of an instance then commits its offsets to the group).
    rt->source_notifier = std::make_unique<SourceNotifier>(&rt->tasks);
    rt->coordinator->AddListener(rt->source_notifier.get());
  }
  for (size_t i = 0; i < rt->tasks.size(); ++i) {
    TaskCheckpointing c;
    c.coordinator = rt->coordinator.get();
    c.storage = rt->storage.get();
    c.restore = rt->restore ? &*rt->restore : nullptr;
    c.index = i;
    rt->tasks[i]->SetCheckpointing(c);
  }
  return Status::Ok();
}

void Job::StartCheckpoints(Runtime* rt) {
  if (!rt->coordinator) return;
  rt->coordinator->Start();
  // Barriers enter at the sources; each source task takes its checkpoint between two polls.
  rt->checkpoint_timer =
      std::make_unique<CheckpointTimer>(rt->coordinator.get(), kCheckpointTickMs, [rt](int64_t id) {
        for (auto& t : rt->tasks) t->RequestBarrier(id);
      });
}

void SavepointWaiter::OnCheckpointComplete(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  done_[id] = true;
  cv_.notify_all();
}

void SavepointWaiter::OnCheckpointAborted(int64_t id, CheckpointFailureReason reason) {
  std::lock_guard<std::mutex> lock(mu_);
  done_[id] = false;
  why_[id] = reason;
  cv_.notify_all();
}

Status SavepointWaiter::Wait(int64_t id, int64_t deadline_ms, const std::function<bool()>& gone) {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    if (auto it = done_.find(id); it != done_.end()) {
      if (it->second) return Status::Ok();
      return Status::Aborted(
          fmt::format("checkpoint {} failed ({})", id, CheckpointFailureReasonName(why_[id])));
    }
    if (gone())
      return Status::Cancelled(fmt::format("the job ended before checkpoint {} completed", id));
    if (SteadyNowMs() >= deadline_ms)
      return Status::TimedOut(fmt::format("checkpoint {} did not complete in time", id));
    cv_.wait_for(lock, std::chrono::milliseconds(20));
  }
}

Result<SavepointResult> Job::TakeSavepoint(const SavepointRequest& request) {
  if (!request.name.empty() && !IsValidSavepointName(request.name)) {
    return Status::InvalidArgument(fmt::format(
        "savepoint name '{}': use letters, digits, '_', '-' and '.', not starting with '.'",
        request.name));
  }
  Runtime* rt = nullptr;
  {
    std::lock_guard<std::mutex> lock(run_mu_);
    if (running_ == nullptr)
      return Status::Unavailable("the job is not running (starting, restarting or ending)");
    rt = running_;
    ++savepoint_calls_;
  }
  struct Leave {
    Job* job;
    ~Leave() {
      std::lock_guard<std::mutex> lock(job->run_mu_);
      --job->savepoint_calls_;
      job->run_cv_.notify_all();
    }
  } leave{this};
  if (!rt->storage || !rt->coordinator || !rt->checkpoint_timer || !rt->savepoints) {
    return Status::InvalidArgument(
        "savepoints need checkpoints: run the job with --state-dir DIR and a --checkpoint-interval "
        "above 0");
  }
  std::lock_guard<std::mutex> one_at_a_time(rt->savepoint_mu);
  const int64_t start = SteadyNowMs();
  std::string path;
  if (!request.name.empty()) {
    path = rt->storage->SavepointPath(request.name);
    if (rt->storage->HasSavepoint(request.name))
      return Status::InvalidArgument(fmt::format("savepoint '{}' already exists", path));
  }
  // Stopping: no periodic checkpoint after the savepoint, so it stays the last one the
  // exactly-once sinks commit (restoring an older one than their last commit is refused).
  if (request.stop) rt->checkpoint_timer->SetPaused(true);
  // Checkpoints may be refused for a moment (as many pending as allowed, the minimum pause).
  Result<int64_t> id = Status::Internal("unset");
  for (int64_t deadline = start + 10000; SteadyNowMs() < deadline && !rt->ended.load();) {
    id = rt->checkpoint_timer->TriggerNow([&](int64_t n) {
      if (request.stop) control_.pause_after_barrier.store(n);
    });
    if (id.ok()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!id.ok()) {
    if (request.stop) rt->checkpoint_timer->SetPaused(false);
    return Status(id.status().code(),
                  "savepoint: cannot trigger a checkpoint: " + id.status().message());
  }
  Status done = rt->savepoints->Wait(*id, start + request.timeout_ms,
                                     [rt] { return rt->ended.load() || rt->running.load() == 0; });
  if (done.ok()) {
    std::lock_guard<std::mutex> lock(rt->error_mu);
    if (!rt->error.ok()) done = Status::Aborted("the job failed: " + rt->error.ToString());
  }
  const std::string name = request.name.empty() ? std::to_string(*id) : request.name;
  if (done.ok()) done = rt->storage->CreateSavepoint(*id, name);
  if (!done.ok()) {
    if (request.stop) {  // the job goes on
      control_.pause_after_barrier.store(0);
      rt->checkpoint_timer->SetPaused(false);
    }
    Log(LogLevel::kWarn, "checkpoint", "savepoint failed",
        {{"id", std::to_string(*id)}, {"error", done.ToString()}});
    return Status(done.code(), "savepoint: " + done.message());
  }
  SavepointResult result;
  result.checkpoint_id = *id;
  result.path = rt->storage->SavepointPath(name);
  Log(LogLevel::kInfo, "checkpoint", request.stop ? "savepoint taken; stopping" : "savepoint taken",
      {{"path", result.path},
       {"id", std::to_string(*id)},
       {"ms", std::to_string(SteadyNowMs() - start)}});
  if (request.stop) RequestStop();
  return result;
}

}  // namespace flow::rt
