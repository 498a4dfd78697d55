#pragma once
// Engine-internal: a task's part in checkpoints, in the role of Flink's
// SubtaskCheckpointCoordinator. At start it restores (or adopts) the chain's state; at each
// barrier it takes the synchronous part of every member's snapshot, lets the barrier go, and
// writes the files on its own thread before it acknowledges or declines the checkpoint. The task
// (engine/task.h) runs the loop and calls it; everything about state is here.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "flow/runtime/checkpoint/checkpoint_storage.h"
#include "flow/runtime/checkpoint/coordinator.h"
#include "flow/runtime/checkpoint/recovery.h"
#include "flow/runtime/common/status.h"
#include "flow/runtime/common/time.h"
#include "flow/runtime/engine/operator.h"
#include "flow/runtime/engine/source.h"
#include "flow/runtime/state/key_group_span.h"

namespace flow::rt {

// How a task takes part in checkpoints; all null = checkpoints off and nothing to restore.
struct TaskCheckpointing {
  CheckpointCoordinator* coordinator = nullptr;  // acks go here; null: no checkpoints
  CheckpointStorage* storage = nullptr;          // snapshot files go here (set with coordinator)
  const RestorePoint* restore = nullptr;         // the checkpoint to restore; null: fresh start
  size_t index = 0;                              // this task's index in the coordinator's list
};

// Tests: runs on a task's snapshot writer thread before it writes its files of checkpoint
// `checkpoint_id` (e.g. to hold the write back, or to break the storage). Process-wide; an empty
// function clears it.
void SetSnapshotWriteHookForTest(
    std::function<void(int64_t checkpoint_id, const std::string& task)> hook);

class SnapshotWriterThread;  // subtask_checkpoints.cpp

class SubtaskCheckpoints {
 public:
  // `members`: the task's chain members, downstream first; the task owns the list, which must
  // outlive this object.
  SubtaskCheckpoints(std::string task, uint32_t subtask, const std::vector<Consumer*>* members);
  ~SubtaskCheckpoints();  // finishes the queued snapshot writes

  void Configure(TaskCheckpointing c) { checkpointing_ = c; }

  // ---- start ----
  // Whether the members have state to restore or adopt before the loop starts.
  bool HasStateToRestore() const { return restoring() || Adopting(); }
  // Restores every member's state from the restore point, or adopts a keyed member's state by
  // repartition partition (engine/state_adoption.h).
  [[nodiscard]] Status RestoreMembers();
  bool restoring() const { return checkpointing_.restore != nullptr; }
  // Id of the restored checkpoint, 0 on a fresh start.
  int64_t restored_checkpoint_id() const;
  // The restored snapshot of (operator, subtask) that is not `finished`; null when there is
  // none (the subtask had finished before that checkpoint) or nothing is restored.
  const OperatorSnapshot* RestoredSnapshot(const std::string& op, uint32_t subtask) const;
  // The parallelism `op` had in the restored checkpoint; 0 when unknown or nothing is restored.
  uint32_t RestoredParallelism(const std::string& op) const;
  // Sources restored at another parallelism: every old subtask's position, by old subtask.
  std::vector<OldSourcePosition> RestoredSourcePositions(const std::string& op,
                                                         uint32_t old_parallelism) const;
  // Sources restored at another parallelism: the lowest watermark any old subtask that had not
  // finished had reached (kMinWatermark when none is recorded). Every new subtask may emit it at
  // once: no old subtask was behind it at the checkpoint.
  [[nodiscard]] Result<TimestampMs> RestoredWatermarkFloor(const std::string& op,
                                                           uint32_t old_parallelism) const;

  // ---- each checkpoint ----
  // A source task's position and event-time state.
  struct SourceState {
    std::string position;   // SourceFunction::SnapshotPosition
    std::string watermark;  // WatermarkGenerator::Snapshot
  };
  // Checkpoint `id` at this point of the stream: takes the synchronous part of every chained
  // operator's snapshot (keyed rocksdb state: a hard-link checkpoint only), calls `forward`
  // (which passes the barrier downstream; sinks flush there) and returns; the writer thread then
  // writes the snapshot files and acknowledges, while the task keeps processing. A failed
  // snapshot or write declines the checkpoint without failing the job; only `forward`'s error is
  // returned. Without checkpointing it only calls `forward`.
  // `alignment_ms`: how long the input task waited for the barrier on all channels (stats, log).
  // `source`: a source task's state (null for input tasks).
  [[nodiscard]] Status Checkpoint(int64_t id, const SourceState* source,
                                  const std::function<Status()>& forward,
                                  DurationMs alignment_ms = 0);
  // Tells the coordinator (when there is one) that this task cannot take checkpoint `id`.
  void DeclineCheckpoint(int64_t id, const std::string& why);

  // ---- end ----
  // Waits for the queued snapshot writes (each ends in an ack or a decline), then tells the
  // coordinator how the task ended: failed, finished its input (`input_finished`), or neither
  // (stopped). A finished task's later checkpoints carry no state, so its last one must be in
  // before the coordinator hears it finished.
  void End(const Status& status, bool input_finished);

 private:
  struct TakenSnapshot;
  // `only`: take just these key groups (adopting them from another instance's snapshot).
  Status RestoreOneSnapshot(Consumer* m, const OperatorSnapshot& snap, const RestorePoint& point,
                            std::optional<KeyGroupSpan> only = std::nullopt);
  // A chained keyed operator adopts its state by repartition partition (engine/state_adoption.h).
  bool Adopting() const;
  Status AdoptKeyedState(Consumer* m, const OperatorContext& ctx);
  // Runs on the writer thread: writes the files, then acknowledges (or declines) checkpoint.
  void WriteSnapshot(TakenSnapshot* taken);
  std::vector<std::string> OperatorNames() const;

  std::string task_;
  uint32_t subtask_;
  const std::vector<Consumer*>* members_;
  TaskCheckpointing checkpointing_;
  std::unique_ptr<SnapshotWriterThread> writer_;  // null until the first checkpoint
};

}  // namespace flow::rt
