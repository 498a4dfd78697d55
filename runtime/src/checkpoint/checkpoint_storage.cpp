#include "flow/runtime/checkpoint/checkpoint_storage.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <map>
#include <set>

#include "flow/runtime/checkpoint/fault_injection.h"
#include "flow/runtime/common/serde.h"

namespace flow::rt {

namespace {

constexpr std::string_view kSharedDir = "shared";

bool ValidName(std::string_view name) {
  if (name.empty() || name[0] == '.') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
  });
}

std::string Key(std::string_view prefix, std::string_view name) {
  std::string k(prefix);
  k.push_back('/');
  k.append(name);
  return k;
}

std::optional<CheckpointMetadata> TryReadMetadata(CheckpointStore& store, std::string_view dir) {
  auto bytes = store.Get(Key(dir, kMetadataFileName));
  if (!bytes.ok()) return std::nullopt;
  auto m = DecodeCheckpointMetadata(*bytes);
  if (!m.ok()) return std::nullopt;
  return std::move(*m);
}

// The metadata first: a checkpoint half deleted by a crash must not look complete.
Status DeleteCheckpointObjects(CheckpointStore& store, const std::string& dir) {
  FLOW_RETURN_IF_ERROR(store.Delete(Key(dir, kMetadataFileName)));
  return store.DeleteAll(dir);
}

void AddSharedRefs(const CheckpointMetadata& m, std::set<std::string>* out) {
  for (const OperatorSnapshot& s : m.snapshots) {
    for (const SnapshotFile& f : s.files) {
      if (f.shared) out->insert(f.name);
    }
  }
}

std::string Hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", v);
  return buf;
}

}  // namespace

std::string CheckpointDirName(int64_t checkpoint_id) {
  return "chk-" + std::to_string(checkpoint_id);
}

int64_t ParseCheckpointDir(std::string_view name) {
  if (name.size() < 5 || name.substr(0, 4) != "chk-") return -1;
  int64_t id = 0;
  for (size_t i = 4; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9' || id > (INT64_MAX - 9) / 10) return -1;
    id = id * 10 + (name[i] - '0');
  }
  return id;
}
std::string SavepointDirName(std::string_view name) {
  return "sp-" + std::string(name);
}
bool IsValidSavepointName(std::string_view name) {
  return ValidName(name);
}

std::string SnapshotFileName(std::string_view operator_name, uint32_t subtask) {
  std::string s;
  for (char c : operator_name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.';
    s.push_back(ok ? c : '_');
  }
  if (s.empty() || s[0] == '.') s.insert(s.begin(), '_');
  return s + "-" + std::to_string(subtask) + ".snap";
}

Result<std::unique_ptr<CheckpointStorage>> CheckpointStorage::Open(CheckpointStorageOptions options,
                                                                   JobCheckpointInfo job) {
  if (options.state_dir.empty() && !options.store)
    return Status::InvalidArgument("--state-dir: empty directory name");
  if (options.retained == 0)
    return Status::InvalidArgument("retained checkpoints must be >= 1, got 0");
  if (job.max_parallelism == 0)
    return Status::InvalidArgument("max parallelism must be >= 1, got 0");
  if (!options.store) {
    auto store = OpenCheckpointStore(options.state_dir);
    if (!store.ok())
      return Status(store.status().code(), "--state-dir: " + store.status().message());
    options.store = std::move(store).value();
  }
  if (options.state_dir.empty()) options.state_dir = options.store->location();
  if (!options.wall_clock) {
    options.wall_clock = [] {
      return std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::system_clock::now().time_since_epoch())
          .count();
    };
  }
  return std::unique_ptr<CheckpointStorage>(
      new CheckpointStorage(std::move(options), std::move(job)));
}

std::string CheckpointStorage::CheckpointPath(int64_t checkpoint_id) const {
  return store().Describe(CheckpointDirName(checkpoint_id));
}

std::string CheckpointStorage::SavepointPath(std::string_view name) const {
  return store().Describe(SavepointDirName(name));
}

bool CheckpointStorage::HasSharedFile(std::string_view name) {
  return ValidName(name) && store().Size(Key(kSharedDir, name)).ok();
}

Result<SnapshotFile> CheckpointStorage::WriteSnapshotFile(int64_t checkpoint_id,
                                                          std::string_view file_name,
                                                          std::string_view bytes) {
  if (!ValidName(file_name) || file_name == kMetadataFileName || file_name.ends_with(".tmp")) {
    return Status::InvalidArgument("invalid snapshot file name '" + std::string(file_name) + "'");
  }
  // Verified, not atomic: _metadata records the size and CRC every reader checks.
  FLOW_RETURN_IF_ERROR(
      store().Put(Key(CheckpointDirName(checkpoint_id), file_name), bytes, PutMode::kVerified));
  SnapshotFile f;
  f.name = std::string(file_name);
  f.size = bytes.size();
  f.crc32c = Crc32c(bytes);
  return f;
}

Result<SnapshotFile> CheckpointStorage::WriteSharedFile(std::string_view name,
                                                        std::string_view bytes) {
  if (!ValidName(name) || name.ends_with(".tmp")) {
    return Status::InvalidArgument("invalid shared file name '" + std::string(name) + "'");
  }
  const std::string key = Key(kSharedDir, name);
  SnapshotFile f;
  f.name = std::string(name);
  f.size = bytes.size();
  f.crc32c = Crc32c(bytes);
  f.shared = true;
  auto existing = store().Get(key);
  if (existing.ok()) {
    // Reused only when identical: overwriting could corrupt a retained checkpoint that refers to
    // it.
    if (existing->size() != f.size || Crc32c(*existing) != f.crc32c) {
      return Status::InvalidArgument(
          "shared file '" + store().Describe(key) + "' already exists with other content (" +
          std::to_string(existing->size()) + " bytes, crc " + Hex32(Crc32c(*existing)) +
          "); shared file names must be unique per content");
    }
    return f;
  }
  if (existing.status().code() != StatusCode::kNotFound) return existing.status();
  // Atomic: a crash never leaves a torn shared file that a later checkpoint would reuse.
  FLOW_RETURN_IF_ERROR(store().Put(key, bytes, PutMode::kAtomic));
  return f;
}

Status CheckpointStorage::Finalize(int64_t checkpoint_id, const std::vector<TaskAck>& acks) {
  std::lock_guard<std::mutex> lock(mu_);
  CheckpointMetadata m;
  m.checkpoint_id = checkpoint_id;
  m.created_ms = options_.wall_clock();
  m.job_fingerprint = job_.fingerprint;
  m.max_parallelism = job_.max_parallelism;
  m.state_schemas = job_.state_schemas;
  m.operators = job_.operators;
  for (const TaskAck& a : acks) {
    for (const OperatorSnapshot& s : a.snapshots) m.snapshots.push_back(s);
  }
  std::sort(m.snapshots.begin(), m.snapshots.end(),
            [](const OperatorSnapshot& x, const OperatorSnapshot& y) {
              return std::tie(x.operator_name, x.subtask) < std::tie(y.operator_name, y.subtask);
            });
  const std::string dir = CheckpointDirName(checkpoint_id);
  for (const OperatorSnapshot& s : m.snapshots) {
    for (const SnapshotFile& f : s.files) {
      const std::string key = Key(f.shared ? kSharedDir : std::string_view(dir), f.name);
      Result<uint64_t> size = store().Size(key);
      if (!size.ok()) {
        return Status::IoError("checkpoint " + std::to_string(checkpoint_id) + ": " +
                               s.operator_name + "#" + std::to_string(s.subtask) +
                               " acknowledged '" + store().Describe(key) +
                               "', which cannot be read: " + size.status().message());
      }
      if (*size != f.size) {
        return Status::IoError("checkpoint " + std::to_string(checkpoint_id) + ": '" +
                               store().Describe(key) + "' has " + std::to_string(*size) +
                               " bytes, acknowledged " + std::to_string(f.size));
      }
    }
  }
  FaultPoint("after-state-before-metadata");
  // The snapshot files' names must be durable before the metadata names them.
  FLOW_RETURN_IF_ERROR(store().Flush(dir));
  FLOW_RETURN_IF_ERROR(store().Flush(kSharedDir));
  FLOW_RETURN_IF_ERROR(
      store().Put(Key(dir, kMetadataFileName), EncodeCheckpointMetadata(m), PutMode::kAtomic));
  FLOW_RETURN_IF_ERROR(store().Flush(""));
  FaultPoint("after-metadata");
  Status retention = ApplyRetention();
  if (!retention.ok()) {
    // The checkpoint is complete; failing to delete old ones only costs disk space.
    std::fprintf(stderr, "WARN checkpoint retention failed: %s\n", retention.ToString().c_str());
  }
  return Status::Ok();
}

void CheckpointStorage::Discard(int64_t checkpoint_id) {
  std::lock_guard<std::mutex> lock(mu_);
  // Best effort: leftovers are cleaned by retention.
  (void)store().DeleteAll(CheckpointDirName(checkpoint_id));
}

namespace {

// A store's checkpoints (metadata of the complete ones) and the shared files its savepoints
// reference, which are never deleted.
struct DirListing {
  std::map<int64_t, std::optional<CheckpointMetadata>> chks;
  std::set<std::string> savepoint_refs;
};

Result<DirListing> ListStateDir(CheckpointStore& store) {
  Result<StoreListing> top = store.List("");
  if (!top.ok()) return top.status();
  DirListing out;
  for (const std::string& name : top->prefixes) {
    if (int64_t id = ParseCheckpointDir(name); id >= 0) {
      out.chks[id] = TryReadMetadata(store, name);
    } else if (name.rfind("sp-", 0) == 0) {
      if (auto m = TryReadMetadata(store, name)) AddSharedRefs(*m, &out.savepoint_refs);
    }
  }
  return out;
}

// Deletes the checkpoints of `listing` not in `kept` (incomplete ones newer than `keep_newer`
// are left: possibly still being written), then the shared files only deleted ones referenced.
// Returns the first error; `deleted` gets the ids of the deleted checkpoints.
Status DeleteUnkept(CheckpointStore& store, const DirListing& listing,
                    const std::set<int64_t>& kept, int64_t keep_newer,
                    std::vector<int64_t>* deleted) {
  std::set<std::string> keep_refs = listing.savepoint_refs;
  std::set<std::string> dropped_refs;
  Status first_error;
  for (const auto& [id, m] : listing.chks) {
    if (kept.count(id) > 0) {
      if (m) AddSharedRefs(*m, &keep_refs);
      continue;
    }
    if (!m && id > keep_newer) continue;
    if (m) AddSharedRefs(*m, &dropped_refs);
    Status s = DeleteCheckpointObjects(store, CheckpointDirName(id));
    if (!s.ok() && first_error.ok()) {
      first_error = s;
    } else if (s.ok() && deleted != nullptr) {
      deleted->push_back(id);
    }
  }
  for (const std::string& ref : dropped_refs) {
    if (keep_refs.count(ref) > 0) continue;
    Status s = store.Delete(Key(kSharedDir, ref));
    if (!s.ok() && first_error.ok()) first_error = s;
  }
  return first_error;
}

}  // namespace

Status CheckpointStorage::ApplyRetention() {
  Result<DirListing> listing = ListStateDir(store());
  if (!listing.ok()) return listing.status();
  const auto& chks = listing->chks;
  std::vector<int64_t> complete;
  for (const auto& [id, m] : chks) {
    if (m) complete.push_back(id);
  }
  if (complete.empty()) return Status::Ok();
  int64_t newest = complete.back();
  size_t keep_from = complete.size() > options_.retained ? complete.size() - options_.retained : 0;
  std::set<int64_t> kept(complete.begin() + static_cast<std::ptrdiff_t>(keep_from), complete.end());
  if (const int64_t committed = committed_.load(); committed > 0 && chks.count(committed) > 0)
    kept.insert(committed);
  if (named_) {
    const std::optional<std::set<int64_t>> named = named_();
    if (!named) return Status::Ok();  // unknown now: the next checkpoint's retention decides
    for (int64_t id : *named) {
      if (auto it = chks.find(id); it != chks.end() && it->second) kept.insert(id);
    }
  }
  return DeleteUnkept(store(), *listing, kept, newest, nullptr);
}

Result<std::vector<int64_t>> DeleteCheckpointsExcept(CheckpointStore& store,
                                                     const std::set<int64_t>& keep) {
  Result<DirListing> listing = ListStateDir(store);
  if (!listing.ok()) return listing.status();
  std::vector<int64_t> deleted;
  FLOW_RETURN_IF_ERROR(
      DeleteUnkept(store, *listing, keep, std::numeric_limits<int64_t>::max(), &deleted));
  return deleted;
}

Result<std::vector<int64_t>> DeleteCheckpointsExcept(const std::string& state_dir,
                                                     const std::set<int64_t>& keep) {
  auto store = OpenCheckpointStore(state_dir, /*create=*/false);
  if (!store.ok()) return store.status();
  return DeleteCheckpointsExcept(**store, keep);
}

Status CheckpointStorage::DiscardNewerThan(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  Result<StoreListing> top = store().List("");
  if (!top.ok()) return top.status();
  for (const std::string& name : top->prefixes) {
    if (ParseCheckpointDir(name) <= id) continue;
    FLOW_RETURN_IF_ERROR(DeleteCheckpointObjects(store(), name));
  }
  return Status::Ok();
}

bool CheckpointStorage::HasSavepoint(std::string_view name) {
  return ValidName(name) && store().Size(Key(SavepointDirName(name), kMetadataFileName)).ok();
}

Status CheckpointStorage::CreateSavepoint(int64_t checkpoint_id, std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!ValidName(name)) {
    return Status::InvalidArgument("savepoint name '" + std::string(name) +
                                   "' must be [A-Za-z0-9_.-]+, not starting with '.'");
  }
  const std::string target = SavepointDirName(name);
  if (HasSavepoint(name)) {
    return Status::InvalidArgument("savepoint '" + store().Describe(target) + "' already exists");
  }
  const std::string src = CheckpointDirName(checkpoint_id);
  auto bytes = store().Get(Key(src, kMetadataFileName));
  if (!bytes.ok())
    return Status::NotFound("no complete checkpoint " + std::to_string(checkpoint_id) +
                            " to save: " + bytes.status().message());
  auto meta = DecodeCheckpointMetadata(*bytes);
  if (!meta.ok()) return meta.status();
  CheckpointMetadata m = std::move(*meta);
  // Complete when its _metadata exists (written last), like a checkpoint: what a crash left of an
  // earlier attempt under this name is replaced.
  FLOW_RETURN_IF_ERROR(store().DeleteAll(target));
  for (OperatorSnapshot& s : m.snapshots) {
    for (SnapshotFile& f : s.files) {
      const std::string from = Key(f.shared ? kSharedDir : std::string_view(src), f.name);
      auto data = store().Get(from);
      if (!data.ok()) return data.status();
      if (Crc32c(*data) != f.crc32c) {
        return Status::Corruption("'" + store().Describe(from) + "': checksum mismatch (expected " +
                                  Hex32(f.crc32c) + ", actual " + Hex32(Crc32c(*data)) + ")");
      }
      if (f.shared) {
        f.name = "shared-" + f.name;
        f.shared = false;
      }
      FLOW_RETURN_IF_ERROR(store().Put(Key(target, f.name), *data, PutMode::kVerified));
    }
  }
  m.savepoint_name = std::string(name);
  FLOW_RETURN_IF_ERROR(store().Flush(target));
  FLOW_RETURN_IF_ERROR(
      store().Put(Key(target, kMetadataFileName), EncodeCheckpointMetadata(m), PutMode::kAtomic));
  return store().Flush("");
}

}  // namespace flow::rt
