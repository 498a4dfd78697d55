// Wiring of the checkpoint machinery into a running job (docs/checkpoints.md, "Engine hooks"):
// storage and restore selection at start-up, the coordinator and its timer, each task's part.

#include <string>
#include <vector>

#include <fmt/format.h>

#include "flow/runtime/engine/job.h"
#include "flow/runtime/engine/log.h"
#include "flow/runtime/state/keyed_state_backend.h"
#include "job_runtime.h"

namespace flow::rt {
namespace {

// How often the timer asks the coordinator whether a checkpoint is due.
constexpr DurationMs kCheckpointTickMs = 10;

const char* KindOf(const engine_detail::NodeBase& node) {
  if (node.is_source) return "source";
  if (node.is_sink) return "sink";
  return "operator";
}

// Parallelism is not part of the fingerprint, so only the choices the user made explicitly
// (key, broadcast) count; forward vs. rebalance follows from parallelism.
std::string EdgePart(const engine_detail::EdgeBase& e, const std::string& from, const std::string& to) {
  std::string how = e.kind == Partitioning::kHash        ? "key:" + e.key_name
                    : e.kind == Partitioning::kBroadcast ? std::string("broadcast")
                                                         : std::string("plain");
  return fmt::format("edge:{}->{}:{}:{}", from, to, e.input_index, how);
}

// "count 4->2, events 4->2" for the operators whose parallelism changed; "no" when none did.
// Keyed state is redistributed by key group (Task::RestoreMembers), source positions by the
// source's split rules (SourceFunction::RestoreRescaled).
std::string RescaledOperators(const CheckpointMetadata& m, const JobCheckpointInfo& job) {
  std::string out;
  for (const OperatorParallelism& now : job.operators) {
    for (const OperatorParallelism& then : m.operators) {
      if (then.name != now.name || then.parallelism == now.parallelism) continue;
      out += fmt::format("{}{} {}->{}", out.empty() ? "" : ", ", now.name, then.parallelism, now.parallelism);
    }
  }
  return out.empty() ? "no" : out;
}

}  // namespace

Status Job::PrepareCheckpoints(Runtime* rt) {
  // Keyed operators build their backends with the state layer's defaults when they open (after
  // this): --state-backend, --state-local-dir and --state-cache-entries become those defaults.
  StateBackendOptions state;
  auto kind = ParseStateBackendKind(options_.state_backend);
  if (!kind.ok()) return Status(kind.status().code(), "--state-backend: " + kind.status().message());
  state.kind = *kind;
  state.local_dir = options_.state_local_dir;
  if (options_.state_cache_entries > 0) state.cache_entries = static_cast<size_t>(options_.state_cache_entries);
  SetDefaultStateBackendOptions(std::move(state));
  rt->txn = TxnSinks::Find(nodes_);  // exactly-once sinks: txn_sinks.cpp
  if (rt->txn) FLOW_RETURN_IF_ERROR(rt->txn->ApplyDefaults(&options_.checkpoint));
  const CheckpointFlags& flags = options_.checkpoint;
  if (flags.state_dir.empty() && flags.restore.empty()) return Status::Ok();
  JobCheckpointInfo info;
  info.max_parallelism = options_.max_parallelism;
  std::vector<std::string> parts;
  for (const auto& node : nodes_) {
    parts.push_back(fmt::format("node:{}:{}", node->name, KindOf(*node)));
    info.operators.push_back(OperatorParallelism{node->name, node->parallelism});
  }
  for (const auto& e : edges_) parts.push_back(EdgePart(*e, nodes_[e->from]->name, nodes_[e->to]->name));
  info.fingerprint = JobFingerprint(parts);

  if (!flags.state_dir.empty()) {
    // One process per state dir, and the dir of one job only: both checked before anything in
    // it (or in Kafka) is touched. Held across in-process restarts.
    if (!state_dir_) {
      auto dir = StateDirectory::Open(flags.state_dir);
      if (!dir.ok()) return dir.status();
      state_dir_ = std::move(dir).value();
      FLOW_RETURN_IF_ERROR(state_dir_->Claim(options_.job_id));
    }
    auto storage = CheckpointStorage::Open(CheckpointStorageOptions{flags.state_dir, flags.retained, {}}, info);
    if (!storage.ok()) return storage.status();
    rt->storage = std::move(storage).value();
  }
  if (rt->txn) FLOW_RETURN_IF_ERROR(rt->txn->Start(options_, rt->storage.get(), state_dir_.get()));
  if (state_dir_) FLOW_RETURN_IF_ERROR(state_dir_->ConfirmClaim());  // the start-up checks passed
  auto selection = rt->txn ? rt->txn->SelectRestore(flags, info) : ResolveRestore(flags.state_dir, flags.restore, info);
  if (!selection.ok()) return selection.status();
  for (const std::string& w : selection->warnings) Log(LogLevel::kWarn, "checkpoint", w);
  int64_t first_id = 1;
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
        [](const CheckpointReport& r) {
          Log(r.completed ? LogLevel::kInfo : LogLevel::kWarn, "checkpoint", FormatCheckpointReport(r));
        });
  }
  if (rt->txn) {
    FLOW_RETURN_IF_ERROR(rt->txn->Recover(rt->restore ? rt->restore->metadata.checkpoint_id : 0, rt->coordinator.get(),
                                          [this, rt](const Status& s) { Fail(rt, s); }));
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
  rt->checkpoint_timer = std::make_unique<CheckpointTimer>(rt->coordinator.get(), kCheckpointTickMs, [rt](int64_t id) {
    for (auto& t : rt->tasks) t->RequestBarrier(id);
  });
}

}  // namespace flow::rt
