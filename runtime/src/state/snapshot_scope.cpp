#include "flow/runtime/state/snapshot_scope.h"

#include <cstdint>
#include <utility>

namespace flow::rt {
namespace {
thread_local AsyncSnapshotScope* current_snapshot_scope = nullptr;
thread_local SnapshotRestoreScope* current_restore_scope = nullptr;
}  // namespace

AsyncSnapshotScope::AsyncSnapshotScope(int64_t checkpoint_id, std::string name_prefix)
    : checkpoint_id_(checkpoint_id),
      name_prefix_(std::move(name_prefix)),
      previous_(current_snapshot_scope) {
  current_snapshot_scope = this;
}

AsyncSnapshotScope::~AsyncSnapshotScope() {
  current_snapshot_scope = previous_;
}

AsyncSnapshotScope* AsyncSnapshotScope::Current() {
  return current_snapshot_scope;
}

std::string AsyncSnapshotScope::NextFileName() {
  return name_prefix_ + ".ks" + std::to_string(next_++);
}

SnapshotRestoreScope::SnapshotRestoreScope(SnapshotFileSource* source,
                                           std::vector<StoredFile> files)
    : source_(source), files_(std::move(files)), previous_(current_restore_scope) {
  current_restore_scope = this;
}

SnapshotRestoreScope::SnapshotRestoreScope(SnapshotFileSource* source,
                                           std::vector<StoredFile> files, KeyGroupSpan only)
    : SnapshotRestoreScope(source, std::move(files)) {
  only_ = only;
}

KeyGroupSpan SnapshotRestoreScope::Limit() {
  if (current_restore_scope == nullptr || !current_restore_scope->only_)
    return KeyGroupSpan{0, UINT32_MAX};
  return *current_restore_scope->only_;
}

SnapshotRestoreScope::~SnapshotRestoreScope() {
  current_restore_scope = previous_;
}

SnapshotRestoreScope* SnapshotRestoreScope::Current() {
  return current_restore_scope;
}

const StoredFile* SnapshotRestoreScope::Find(std::string_view name) const {
  for (const StoredFile& f : files_) {
    if (!f.shared && f.name == name) return &f;
  }
  return nullptr;
}

}  // namespace flow::rt
