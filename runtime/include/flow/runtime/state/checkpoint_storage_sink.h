#pragma once
// Adapters between keyed-state snapshots (state/state_snapshot.h) and the checkpoint storage
// (checkpoint/checkpoint_storage.h): a snapshot of checkpoint N writes its own file into chk-N/
// and its SST files into shared/, whose retention counts references in the checkpoint metadata.
// Header-only so the state library does not depend on the checkpoint library; link both.

#include <string>

#include "flow/runtime/checkpoint/checkpoint_storage.h"
#include "flow/runtime/checkpoint/recovery.h"
#include "flow/runtime/state/state_snapshot.h"

namespace flow::rt {

inline StoredFile ToStoredFile(const SnapshotFile& f) {
  return {f.name, f.size, f.crc32c, f.shared};
}
inline SnapshotFile ToSnapshotFile(const StoredFile& f) {
  return {f.name, f.size, f.crc32c, f.shared};
}

// Writes into checkpoint `checkpoint_id` of `storage`. Thread-safe as CheckpointStorage.
class CheckpointStorageSink : public SnapshotFileSink {
 public:
  CheckpointStorageSink(CheckpointStorage* storage, int64_t checkpoint_id)
      : storage_(storage), checkpoint_id_(checkpoint_id) {}
  Result<StoredFile> WriteOwn(std::string_view name, std::string_view bytes) override {
    auto f = storage_->WriteSnapshotFile(checkpoint_id_, name, bytes);
    if (!f.ok()) return f.status();
    return ToStoredFile(*f);
  }
  Result<StoredFile> WriteShared(std::string_view name, std::string_view bytes) override {
    auto f = storage_->WriteSharedFile(name, bytes);
    if (!f.ok()) return f.status();
    return ToStoredFile(*f);
  }
  bool HasShared(std::string_view name) override { return storage_->HasSharedFile(name); }

 private:
  CheckpointStorage* storage_;
  int64_t checkpoint_id_;
};

// Reads the files of a restore point, verifying size and CRC-32C (ReadRestoreFile). In a
// savepoint, shared files were copied in as own files named "shared-<name>"
// (CheckpointStorage::CreateSavepoint), so a shared file that a snapshot's manifest names is read
// from that copy: a savepoint restores after retention deleted the originals.
class RestorePointSource final : public SnapshotFileSource {
 public:
  explicit RestorePointSource(const RestorePoint* point) : point_(point) {}
  Result<std::string> Read(const StoredFile& file) override {
    SnapshotFile f = ToSnapshotFile(file);
    if (f.shared && !point_->metadata.savepoint_name.empty()) {
      f.name = "shared-" + f.name;
      f.shared = false;
    }
    return ReadRestoreFile(*point_, f);
  }

 private:
  const RestorePoint* point_;
};

}  // namespace flow::rt
