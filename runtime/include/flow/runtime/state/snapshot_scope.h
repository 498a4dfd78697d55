#pragma once
// Thread-scoped hooks through which the engine takes asynchronous keyed-state snapshots without
// every operator between the task and its KeyedStateBackend knowing about them.
//
// Snapshot: while an AsyncSnapshotScope is alive on a thread, a rocksdb KeyedStateBackend's
// SnapshotState runs only the synchronous part (SnapshotAsync: flush + hard-link checkpoint),
// hands the PendingSnapshot to the scope and writes a small reference into the operator's bytes
// instead of the whole state:
//   u32 magic "FLKA", u32 version (1), string file name (the pending snapshot's own file)
// The owner of the scope writes the pending snapshots afterwards, on any thread, and lists their
// files next to the operator's own file. Heap backends snapshot inline as without a scope (their
// synchronous part is the serialized copy anyway).
//
// Restore: while a SnapshotRestoreScope is alive, KeyedStateBackend::RestoreState resolves such a
// reference by name among the scope's files and restores it through RestoreFrom. A reference
// without a scope, or naming a file the scope does not list, is a Corruption error naming it.
// A scope may also narrow the key groups a restore takes (`only`): a scaled-out job adopts the
// key groups of one repartition partition from another instance's snapshot, and nothing else.
//
// Scopes nest (the innermost one is current) and are strictly per thread.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flow/runtime/common/status.h"
#include "flow/runtime/state/key_group_span.h"
#include "flow/runtime/state/state_snapshot.h"

namespace flow::rt {

class AsyncSnapshotScope {
 public:
  // Snapshots taken in the scope belong to checkpoint `checkpoint_id`; their own files are named
  // "<name_prefix>.ks<n>" (n = 0, 1, ... in the order they are taken).
  AsyncSnapshotScope(int64_t checkpoint_id, std::string name_prefix);
  ~AsyncSnapshotScope();
  AsyncSnapshotScope(const AsyncSnapshotScope&) = delete;
  AsyncSnapshotScope& operator=(const AsyncSnapshotScope&) = delete;

  // The innermost scope of this thread; nullptr when none.
  static AsyncSnapshotScope* Current();

  int64_t checkpoint_id() const { return checkpoint_id_; }
  std::string NextFileName();
  void Add(std::unique_ptr<PendingSnapshot> pending) { pending_.push_back(std::move(pending)); }
  // A synchronous part failed: the checkpoint must be declined with this error (the first kept).
  void Fail(Status s) {
    if (status_.ok()) status_ = std::move(s);
  }
  const Status& status() const { return status_; }
  std::vector<std::unique_ptr<PendingSnapshot>> TakePending() { return std::move(pending_); }

 private:
  int64_t checkpoint_id_;
  std::string name_prefix_;
  int next_ = 0;
  std::vector<std::unique_ptr<PendingSnapshot>> pending_;
  Status status_;
  AsyncSnapshotScope* previous_;
};

class SnapshotRestoreScope {
 public:
  // `files`: every file of the operator snapshot being restored; `source` reads them. Both must
  // outlive the scope.
  SnapshotRestoreScope(SnapshotFileSource* source, std::vector<StoredFile> files);
  // Restores in the scope keep only the key groups of `only` (on top of the backend's own range).
  SnapshotRestoreScope(SnapshotFileSource* source, std::vector<StoredFile> files,
                       KeyGroupSpan only);
  ~SnapshotRestoreScope();
  SnapshotRestoreScope(const SnapshotRestoreScope&) = delete;
  SnapshotRestoreScope& operator=(const SnapshotRestoreScope&) = delete;

  static SnapshotRestoreScope* Current();
  SnapshotFileSource* source() const { return source_; }
  // The file of this snapshot that is not shared and has this name; nullptr when none.
  const StoredFile* Find(std::string_view name) const;
  // The key groups restores in the innermost scope of this thread may take; all without a scope
  // or a limit.
  static KeyGroupSpan Limit();

 private:
  SnapshotFileSource* source_;
  std::vector<StoredFile> files_;
  std::optional<KeyGroupSpan> only_;
  SnapshotRestoreScope* previous_;
};

}  // namespace flow::rt
