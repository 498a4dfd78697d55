#pragma once
// Recovery: which checkpoint to restore, and what each new subtask must read from it.
//
// SelectRestoreCheckpoint looks at the store's chk-<N> (checkpoint_store.h) from the newest down
// and takes the first one that verifies: `_metadata` present and decodable, every listed file
// present with the recorded size and CRC-32C. Each skipped checkpoint adds a warning naming the
// problem, e.g.
//   "skipping chk-7: no _metadata (incomplete checkpoint)"
//   "skipping chk-6: chk-6/window-1.snap: checksum mismatch (expected 1a2b3c4d, actual 99aa00ff)"
//   "skipping chk-5: chk-5/_metadata: checkpoint metadata truncated: 301 bytes, expected 602"
// A verified checkpoint of ANOTHER job (fingerprint) or another max parallelism is refused with
// InvalidArgument rather than skipped: the state dir is most likely the wrong one.
//
// --restore PATH|none overrides the selection: "none" starts fresh; PATH must verify (no
// fallback: the user asked for exactly that one) and may be a checkpoint or a savepoint.
//
// Threading: free functions, no shared state.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flow/runtime/checkpoint/checkpoint_metadata.h"
#include "flow/runtime/checkpoint/checkpoint_store.h"
#include "flow/runtime/common/status.h"

namespace flow::rt {

struct RestorePoint {
  std::shared_ptr<CheckpointStore> store;  // where it is; its shared files are the store's shared/
  std::string name;                        // "chk-7" or "sp-before-upgrade"
  std::string path;                        // store->Describe(name), for messages
  CheckpointMetadata metadata;
};

struct RestoreSelection {
  std::optional<RestorePoint> point;  // nullopt: start without state
  std::vector<std::string> warnings;  // one per skipped checkpoint; the engine logs them (WARN)
};

// Verifies checkpoint or savepoint `name` of `store` (shared files are the store's `shared/`).
// Corruption/NotFound naming the file and the problem.
Result<RestorePoint> VerifyCheckpoint(std::shared_ptr<CheckpointStore> store, std::string name);
// The same for a directory path "<store directory>/<name>".
Result<RestorePoint> VerifyCheckpoint(const std::string& dir);

// InvalidArgument when `m` was taken with another max parallelism, or belongs to another job:
// when both carry state schemas, when some operator's state cannot be mapped into this job
// (state_mapping.h); otherwise when the job graph differs (fingerprint).
[[nodiscard]] Status CheckCompatible(const CheckpointMetadata& m, const JobCheckpointInfo& job,
                                     std::string_view where);

// Newest verifying chk-<N> of `store` (an empty store means nothing to restore).
Result<RestoreSelection> SelectRestoreCheckpoint(std::shared_ptr<CheckpointStore> store,
                                                 const JobCheckpointInfo& job);
// The same for the directory store at state_dir (a missing state_dir means nothing to restore).
Result<RestoreSelection> SelectRestoreCheckpoint(const std::string& state_dir,
                                                 const JobCheckpointInfo& job);

// restore_flag: "" = SelectRestoreCheckpoint; "none" = fresh start; else a directory path.
Result<RestoreSelection> ResolveRestore(const std::string& state_dir, std::string_view restore_flag,
                                        const JobCheckpointInfo& job);

// One key group of one snapshot file that a new subtask must read.
struct RestorePiece {
  SnapshotFile file;
  uint32_t old_subtask = 0;
  uint32_t key_group = 0;
  bool operator==(const RestorePiece& o) const {
    return file.name == o.file.name && file.shared == o.file.shared &&
           old_subtask == o.old_subtask && key_group == o.key_group;
  }
};

// Rescaling: for each subtask 0..new_parallelism-1 of `operator_name`, the (file, key group)
// pieces it must read, ordered by key group then file. Key groups go to
// SubtaskForKeyGroup(g, max_parallelism, new_parallelism). An operator without keyed snapshots
// gives empty lists. InvalidArgument: new_parallelism 0 or > max_parallelism. Corruption: two
// snapshots claim the same key group, or some key group is in none (unless a subtask of the
// operator had finished: a finished snapshot has no key groups, and its groups start empty).
Result<std::vector<std::vector<RestorePiece>>> PlanKeyedRestore(const CheckpointMetadata& m,
                                                                std::string_view operator_name,
                                                                uint32_t new_parallelism);

// The snapshots of one operator, ordered by old subtask (source positions, finished flags).
std::vector<const OperatorSnapshot*> SnapshotsOf(const CheckpointMetadata& m,
                                                 std::string_view operator_name);

// Reads one file of a restore point and checks size and CRC-32C (Corruption naming the file on
// mismatch). Fault point: during-restore.
Result<std::string> ReadRestoreFile(const RestorePoint& point, const SnapshotFile& file);

}  // namespace flow::rt
