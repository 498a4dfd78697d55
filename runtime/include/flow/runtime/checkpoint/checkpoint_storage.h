#pragma once
// CheckpointStorage: checkpoints as objects of a CheckpointStore (checkpoint_store.h; the
// directory --state-dir today):
//
//   chk-<N>/<operator>-<subtask>.snap   one object per operator subtask snapshot
//   chk-<N>/_metadata                   written LAST and atomically (see below)
//   shared/<name>                       incremental files (e.g. RocksDB SSTs) referenced by name
//                                       from several checkpoints
//   sp-<name>/...                       savepoints: self-contained, never retained away
//
// Task threads write their snapshot files (WriteSnapshotFile / WriteSharedFile, each durable) and
// acknowledge with the returned SnapshotFile handles. When all tasks acked, the coordinator calls
// Finalize: check every acknowledged file's size, flush the names, put `_metadata` atomically.
// Then retention keeps the newest `retained` complete checkpoints (and the last one the sinks
// committed, KeepCommitted), deletes older ones and abandoned partial ones older than the new
// one, and deletes shared files that only deleted checkpoints referenced. Nothing here renames or
// appends: an object store can hold the checkpoints.
//
// Threading: WriteSnapshotFile/WriteSharedFile may be called from any threads concurrently (for
// distinct files). Finalize/Discard/CreateSavepoint are serialized by an internal mutex.
// Errors: IoError naming the object and what failed.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "flow/runtime/checkpoint/checkpoint_metadata.h"
#include "flow/runtime/checkpoint/checkpoint_store.h"
#include "flow/runtime/checkpoint/coordinator.h"
#include "flow/runtime/common/status.h"

namespace flow::rt {

struct CheckpointStorageOptions {
  std::string state_dir;  // the directory store, created if missing (unless `store` is given)
  // Complete checkpoints kept. Default: 3. Must be >= 1.
  uint32_t retained = 3;
  // Wall clock for CheckpointMetadata::created_ms; default: system clock.
  std::function<int64_t()> wall_clock;
  // Where the checkpoints go; default: the directory `state_dir`.
  std::shared_ptr<CheckpointStore> store;
};

std::string CheckpointDirName(int64_t checkpoint_id);  // "chk-7"
int64_t ParseCheckpointDir(std::string_view name);     // "chk-7" -> 7; anything else -> -1
std::string SavepointDirName(std::string_view name);   // "sp-<name>"
bool IsValidSavepointName(std::string_view name);      // [A-Za-z0-9_.-]+, not starting with '.'
// "<operator>-<subtask>.snap" with characters other than [A-Za-z0-9_.-] replaced by '_'.
std::string SnapshotFileName(std::string_view operator_name, uint32_t subtask);

class CheckpointStorage final : public CheckpointFinalizer {
 public:
  // InvalidArgument: no state_dir nor store, retained == 0, max_parallelism == 0. IoError:
  // cannot create the directory.
  static Result<std::unique_ptr<CheckpointStorage>> Open(CheckpointStorageOptions options,
                                                         JobCheckpointInfo job);

  // The store's location (the --state-dir path).
  const std::string& state_dir() const { return options_.state_dir; }
  CheckpointStore& store() const { return *options_.store; }
  // For messages: where chk-<id> and sp-<name> are.
  std::string CheckpointPath(int64_t checkpoint_id) const;
  std::string SavepointPath(std::string_view name) const;
  // Whether shared/<name> exists (an incremental backend uploads only what is missing).
  bool HasSharedFile(std::string_view name);
  // Whether savepoint `name` is complete.
  bool HasSavepoint(std::string_view name);

  // Writes `bytes` as chk-<id>/<file_name> (created with the directory), fsynced. Returns the
  // handle (size + CRC-32C) the task puts into its OperatorSnapshot. Fault point:
  // during-snapshot-write (half the bytes written).
  Result<SnapshotFile> WriteSnapshotFile(int64_t checkpoint_id, std::string_view file_name,
                                         std::string_view bytes);
  // Writes shared/<name> atomically unless it already exists with the same bytes; returns a
  // handle with shared = true. Names must be unique per content (e.g. "<run id>-<SST number>"):
  // an existing file with other bytes is an InvalidArgument error, never overwritten.
  Result<SnapshotFile> WriteSharedFile(std::string_view name, std::string_view bytes);

  // CheckpointFinalizer: writes chk-<id>/_metadata from the acks, then applies retention.
  // Fault points: after-state-before-metadata, after-metadata. InvalidArgument when a listed file
  // is missing (a task acked a file it did not write).
  [[nodiscard]] Status Finalize(int64_t checkpoint_id, const std::vector<TaskAck>& acks) override;
  // Deletes chk-<id> (best effort; an aborted checkpoint).
  void Discard(int64_t checkpoint_id) override;

  // Copies complete checkpoint `checkpoint_id` into sp-<name>, shared files included, so the
  // savepoint depends on nothing else; its _metadata is written last. InvalidArgument: bad name or
  // a complete savepoint of that name; NotFound: no such complete checkpoint.
  [[nodiscard]] Status CreateSavepoint(int64_t checkpoint_id, std::string_view name);

  // Applies retention now (Finalize does it after every checkpoint).
  [[nodiscard]] Status ApplyRetention();

  // Retention never deletes checkpoint `id` (0: none), on top of the newest `retained`: the last
  // checkpoint the job's two-phase-commit sinks committed, which a restart must restore even when
  // newer checkpoints completed while that commit was slow or failed. Thread-safe.
  void KeepCommitted(int64_t id) { committed_.store(id); }
  // Retention also keeps the checkpoints `named` returns (instances with --state-root: those a
  // committed offset names, engine/state_adoption.h); when it returns nullopt, nothing is deleted
  // this time. Set before the first checkpoint.
  void KeepNamed(std::function<std::optional<std::set<int64_t>>()> named) {
    named_ = std::move(named);
  }
  // Deletes every chk-<N> with N > `id`, complete or not: checkpoints whose output was never
  // committed (a restart restores exactly the committed one). IoError naming the directory.
  [[nodiscard]] Status DiscardNewerThan(int64_t id);

 private:
  CheckpointStorage(CheckpointStorageOptions options, JobCheckpointInfo job)
      : options_(std::move(options)), job_(std::move(job)) {}

  CheckpointStorageOptions options_;
  JobCheckpointInfo job_;
  std::mutex mu_;
  std::atomic<int64_t> committed_{0};
  std::function<std::optional<std::set<int64_t>>()> named_;
};

// Deletes every checkpoint of `store` but `keep` (complete or not), then the shared files only
// the deleted ones referenced (savepoints and their files stay). For a store no process uses
// (its directory's _lock held by the caller): forgetting an instance removed for good
// (docs/deploy.md). Returns the ids deleted; IoError naming the first object that could not be
// deleted.
[[nodiscard]] Result<std::vector<int64_t>> DeleteCheckpointsExcept(CheckpointStore& store,
                                                                   const std::set<int64_t>& keep);
// The same for the directory store at `state_dir`.
[[nodiscard]] Result<std::vector<int64_t>> DeleteCheckpointsExcept(const std::string& state_dir,
                                                                   const std::set<int64_t>& keep);

// Low-level file helpers of the directory store, also used by file sinks and local state files
// (exposed for tests). All return IoError naming the
// path and errno text.
namespace checkpoint_fs {
[[nodiscard]] Status WriteFileDurably(const std::string& path, std::string_view bytes);
// write temp, fsync, rename over `path`, fsync the directory.
[[nodiscard]] Status WriteFileAtomically(const std::string& path, std::string_view bytes);
Result<std::string> ReadFile(const std::string& path);
[[nodiscard]] Status SyncDir(const std::string& dir);
bool Exists(const std::string& path);
}  // namespace checkpoint_fs

}  // namespace flow::rt
