#pragma once
// Plain data shared by the checkpoint components: what a task reports when it acknowledges a
// checkpoint, why a checkpoint failed, and the per-checkpoint report the coordinator logs.
// See docs/checkpoints.md for the protocol.

#include <cstdint>
#include <string>
#include <vector>

#include "flow/runtime/common/time.h"

namespace flow::rt {

// Why a checkpoint did not complete. Every abort carries one; only some count as failures
// toward CheckpointOptions::tolerable_failures (see CountsAsFailure).
enum class CheckpointFailureReason {
  kTimeout,            // not all tasks acknowledged within CheckpointOptions::timeout
  kTaskDeclined,       // a task could not take its snapshot (e.g. alignment aborted)
  kTaskFailed,         // a task failed while the checkpoint was pending
  kStorageIoError,     // writing snapshot files or the metadata failed
  kTooManyConcurrent,  // a trigger was refused: max_concurrent checkpoints are pending
  kMinPause,           // a trigger was refused: min_pause since the last completion not over
  kJobFinishing,       // the job is finishing or stopping; pending checkpoints are dropped
  kSubsumed,           // a newer checkpoint completed first
  kNotRunning,         // triggered before the job started or after it ended
};

const char* CheckpointFailureReasonName(CheckpointFailureReason reason);
// Timeouts, declines, task and storage failures count; refused triggers, subsumption and job
// shutdown do not (they say nothing about the health of the job).
bool CountsAsFailure(CheckpointFailureReason reason);

// One file of a task snapshot, as recorded in the checkpoint metadata. `name` is relative to the
// checkpoint directory (own files) or to the shared area (shared files, e.g. incremental
// RocksDB files referenced by several checkpoints).
struct SnapshotFile {
  std::string name;
  uint64_t size = 0;
  uint32_t crc32c = 0;
  bool shared = false;
};

// The snapshot of one operator subtask (a chained task may report several).
struct OperatorSnapshot {
  std::string operator_name;
  uint32_t subtask = 0;
  // Key groups [key_group_first, key_group_end) the state in `files` covers; empty for
  // operators without keyed state.
  uint32_t key_group_first = 0;
  uint32_t key_group_end = 0;
  std::vector<SnapshotFile> files;
  // Source position bytes (SourceFunction::SnapshotPosition); empty for non-sources.
  std::string source_position;
  // The source subtask's event-time state (WatermarkGenerator::Snapshot); empty for non-sources
  // and in checkpoints written before it was recorded (metadata version 1).
  std::string source_watermark;
  // The subtask had finished (end of input) before this checkpoint: nothing to restore or rerun.
  bool finished = false;
};

struct TaskCheckpointStats {
  uint64_t bytes = 0;           // bytes written for this task's snapshot files
  DurationMs alignment_ms = 0;  // first barrier received -> all barriers received
  DurationMs sync_ms = 0;       // synchronous part of the snapshot (task thread paused)
  DurationMs async_ms = 0;      // asynchronous write of the snapshot files
};

// A task's acknowledgement of checkpoint `checkpoint_id`. `task` is the task's index in the list
// the coordinator was built with.
struct TaskAck {
  int64_t checkpoint_id = 0;
  size_t task = 0;
  std::vector<OperatorSnapshot> snapshots;
  TaskCheckpointStats stats;
};

// What the coordinator reports (logs) once per checkpoint, completed or aborted.
struct CheckpointReport {
  int64_t checkpoint_id = 0;
  bool completed = false;
  CheckpointFailureReason reason = CheckpointFailureReason::kTimeout;  // when !completed
  std::string message;                                                 // details of a failure
  DurationMs duration_ms = 0;  // trigger -> completion/abort
  uint64_t bytes = 0;          // sum over acknowledged tasks
  DurationMs max_alignment_ms = 0;
  size_t acked_tasks = 0;
  size_t total_tasks = 0;
};

// "checkpoint id=7 result=completed duration_ms=120 bytes=4096 max_alignment_ms=3 acked=4/4"
// (failures add reason=... and message=...). Stable: tests and log parsers rely on the keys.
std::string FormatCheckpointReport(const CheckpointReport& report);

}  // namespace flow::rt
