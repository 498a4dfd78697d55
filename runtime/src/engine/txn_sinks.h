#pragma once
// Engine-internal: the exactly-once sinks of one running job (docs/exactly-once.md, "Engine
// wiring"). Job::PrepareCheckpoints calls, in order: Find, ApplyDefaults, Start (commit group,
// before the restore point is chosen), SelectRestore, Recover (every sink subtask opened and
// recovered before any task runs; registers as checkpoint listener). Execute calls Finish after
// every task ended (final checkpoint of a bounded job, then close).
// Commits run on the thread that delivers the checkpoint's completion (listener callbacks never
// overlap). Newer checkpoints may complete while a commit is slow; retention keeps the last
// committed one all the same (KeepCommitted), so a failed commit can always restart from it.

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "flow/runtime/checkpoint/checkpoint_flags.h"
#include "flow/runtime/checkpoint/checkpoint_storage.h"
#include "flow/runtime/checkpoint/coordinator.h"
#include "flow/runtime/checkpoint/recovery.h"
#include "flow/runtime/checkpoint/state_dir.h"
#include "flow/runtime/engine/graph.h"
#include "flow/runtime/engine/options.h"
#include "flow/runtime/engine/txn_sink.h"

namespace flow::rt {

class TxnSinks final : public CheckpointListener {
 public:
  // The exactly-once sink subtasks of the built graph; null when it has none.
  static std::unique_ptr<TxnSinks> Find(
      const std::vector<std::unique_ptr<engine_detail::NodeBase>>& nodes);
  ~TxnSinks() override;

  // A state dir is required; the checkpoint interval defaults to 1 s.
  [[nodiscard]] Status ApplyDefaults(CheckpointFlags* flags) const;
  // With grouped sinks (Kafka; txn/commit_group.h): starts the group (fences older instances,
  // aborts what they left open, reads the committed checkpoint C), refuses to go on when the
  // state dir recorded a newer commit than C (the group's progress was lost: nothing is
  // deleted), and deletes checkpoints newer than C from `storage` (never committed; their output
  // was aborted). Retention of `storage` then always keeps the last committed checkpoint
  // (CheckpointStorage::KeepCommitted).
  [[nodiscard]] Status Start(const JobOptions& options, CheckpointStorage* storage,
                             StateDirectory* state_dir);
  // With a group: exactly C (none when 0); a missing or corrupt chk-C is an error, never a
  // fallback. Resumable sinks only: the usual selection (newest valid checkpoint), refused when
  // it is older than the checkpoint the state dir recorded as committed (its epochs' files are
  // visible already).
  [[nodiscard]] Result<RestoreSelection> SelectRestore(const CheckpointFlags& flags,
                                                       const JobCheckpointInfo& info) const;
  // Open, Recover(restored_id), BeginTransaction for every subtask; listens to `coordinator`.
  // `fail` fails the job (commit errors after their bound, fencing).
  [[nodiscard]] Status Recover(int64_t restored_id, CheckpointCoordinator* coordinator,
                               std::function<void(const Status&)> fail);
  // After every task ended: when `bounded_end`, a final checkpoint commits the last epoch.
  void Finish(CheckpointCoordinator* coordinator, bool bounded_end);

  void OnCheckpointComplete(int64_t checkpoint_id) override;
  void OnCheckpointAborted(int64_t, CheckpointFailureReason) override {}

  int64_t committed() const;

 private:
  TxnSinks() = default;
  void FailWith(const Status& s);

  std::vector<engine_detail::TxnSinkSubtask*> subtasks_;
  std::unique_ptr<CommitGroup> group_;    // null when no sink is in a group
  CheckpointStorage* storage_ = nullptr;  // null without a state dir
  StateDirectory* state_dir_ = nullptr;   // likewise
  std::function<void(const Status&)> fail_;
  mutable std::mutex mu_;
  int64_t committed_ = 0;  // guarded by mu_
  bool failed_ = false;    // guarded by mu_
};

}  // namespace flow::rt
