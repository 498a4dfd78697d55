#include "flow/runtime/checkpoint/checkpoint_storage.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <set>

#include "checkpoint_fs_internal.h"
#include "flow/runtime/checkpoint/fault_injection.h"
#include "flow/runtime/common/serde.h"

namespace flow::rt {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kSharedDir = "shared";

bool ValidName(std::string_view name) {
  if (name.empty() || name[0] == '.') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
  });
}

std::optional<CheckpointMetadata> TryReadMetadata(const fs::path& dir) {
  auto bytes = checkpoint_fs::ReadFile((dir / kMetadataFileName).string());
  if (!bytes.ok()) return std::nullopt;
  auto m = DecodeCheckpointMetadata(*bytes);
  if (!m.ok()) return std::nullopt;
  return std::move(*m);
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
  if (options.state_dir.empty())
    return Status::InvalidArgument("--state-dir: empty directory name");
  if (options.retained == 0)
    return Status::InvalidArgument("retained checkpoints must be >= 1, got 0");
  if (job.max_parallelism == 0)
    return Status::InvalidArgument("max parallelism must be >= 1, got 0");
  std::error_code ec;
  fs::create_directories(fs::path(options.state_dir) / kSharedDir, ec);
  if (ec)
    return Status::IoError("--state-dir: cannot create '" + options.state_dir +
                           "': " + ec.message());
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
  return (fs::path(options_.state_dir) / CheckpointDirName(checkpoint_id)).string();
}

Result<SnapshotFile> CheckpointStorage::WriteSnapshotFile(int64_t checkpoint_id,
                                                          std::string_view file_name,
                                                          std::string_view bytes) {
  if (!ValidName(file_name) || file_name == kMetadataFileName || file_name.ends_with(".tmp")) {
    return Status::InvalidArgument("invalid snapshot file name '" + std::string(file_name) + "'");
  }
  fs::path dir = CheckpointPath(checkpoint_id);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return Status::IoError("cannot create checkpoint directory '" + dir.string() +
                           "': " + ec.message());
  std::string path = (dir / file_name).string();
  FLOW_RETURN_IF_ERROR(checkpoint_fs::WriteFileDurably(path, bytes, /*snapshot_fault_point=*/true));
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
  std::string path = (fs::path(options_.state_dir) / kSharedDir / name).string();
  SnapshotFile f;
  f.name = std::string(name);
  f.size = bytes.size();
  f.crc32c = Crc32c(bytes);
  f.shared = true;
  if (checkpoint_fs::Exists(path)) {
    // Reused only when identical: overwriting could corrupt a retained checkpoint that refers to
    // it.
    auto existing = checkpoint_fs::ReadFile(path);
    if (!existing.ok()) return existing.status();
    if (existing->size() != f.size || Crc32c(*existing) != f.crc32c) {
      return Status::InvalidArgument(
          "shared file '" + path + "' already exists with other content (" +
          std::to_string(existing->size()) + " bytes, crc " + Hex32(Crc32c(*existing)) +
          "); shared file names must be unique per content");
    }
    return f;
  }
  // Written under a temporary name and renamed, so a crash never leaves a torn shared file that a
  // later checkpoint would reuse.
  FLOW_RETURN_IF_ERROR(checkpoint_fs::WriteFileAtomically(path, bytes));
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
  fs::path dir = CheckpointPath(checkpoint_id);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return Status::IoError("cannot create checkpoint directory '" + dir.string() +
                           "': " + ec.message());
  for (const OperatorSnapshot& s : m.snapshots) {
    for (const SnapshotFile& f : s.files) {
      fs::path p = f.shared ? fs::path(options_.state_dir) / kSharedDir / f.name : dir / f.name;
      uintmax_t size = fs::file_size(p, ec);
      if (ec) {
        return Status::IoError("checkpoint " + std::to_string(checkpoint_id) + ": " +
                               s.operator_name + "#" + std::to_string(s.subtask) +
                               " acknowledged '" + p.string() +
                               "', which cannot be read: " + ec.message());
      }
      if (size != f.size) {
        return Status::IoError("checkpoint " + std::to_string(checkpoint_id) + ": '" + p.string() +
                               "' has " + std::to_string(size) + " bytes, acknowledged " +
                               std::to_string(f.size));
      }
    }
  }
  FaultPoint("after-state-before-metadata");
  // The snapshot files' directory entries must be durable before the metadata names them.
  FLOW_RETURN_IF_ERROR(checkpoint_fs::SyncDir(dir.string()));
  FLOW_RETURN_IF_ERROR(checkpoint_fs::SyncDir(options_.state_dir + "/" + std::string(kSharedDir)));
  FLOW_RETURN_IF_ERROR(checkpoint_fs::WriteFileAtomically((dir / kMetadataFileName).string(),
                                                          EncodeCheckpointMetadata(m)));
  FLOW_RETURN_IF_ERROR(checkpoint_fs::SyncDir(options_.state_dir));
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
  std::error_code ec;
  fs::remove_all(CheckpointPath(checkpoint_id),
                 ec);  // best effort: leftovers are cleaned by retention
}

namespace {

// A state dir's checkpoints (metadata of the complete ones) and the shared files its savepoints
// reference, which are never deleted.
struct DirListing {
  std::map<int64_t, std::optional<CheckpointMetadata>> chks;
  std::set<std::string> savepoint_refs;
};

Result<DirListing> ListStateDir(const fs::path& root) {
  DirListing out;
  std::error_code ec;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (!it->is_directory()) continue;
    if (int64_t id = ParseCheckpointDir(name); id >= 0) {
      out.chks[id] = TryReadMetadata(it->path());
    } else if (name.rfind("sp-", 0) == 0) {
      if (auto m = TryReadMetadata(it->path())) AddSharedRefs(*m, &out.savepoint_refs);
    }
  }
  if (ec) return Status::IoError("cannot list state dir '" + root.string() + "': " + ec.message());
  return out;
}

// Deletes the checkpoints of `listing` not in `kept` (incomplete ones newer than `keep_newer`
// are left: possibly still being written), then the shared files only deleted ones referenced.
// Returns the first error; `deleted` gets the ids of the deleted checkpoints.
Status DeleteUnkept(const fs::path& root, const DirListing& listing, const std::set<int64_t>& kept,
                    int64_t keep_newer, std::vector<int64_t>* deleted) {
  std::set<std::string> keep_refs = listing.savepoint_refs;
  std::set<std::string> dropped_refs;
  Status first_error;
  std::error_code ec;
  for (const auto& [id, m] : listing.chks) {
    if (kept.count(id) > 0) {
      if (m) AddSharedRefs(*m, &keep_refs);
      continue;
    }
    if (!m && id > keep_newer) continue;
    if (m) AddSharedRefs(*m, &dropped_refs);
    fs::remove_all(root / CheckpointDirName(id), ec);
    if (ec && first_error.ok()) {
      first_error =
          Status::IoError("cannot delete '" + CheckpointDirName(id) + "': " + ec.message());
    } else if (!ec && deleted != nullptr) {
      deleted->push_back(id);
    }
  }
  for (const std::string& ref : dropped_refs) {
    if (keep_refs.count(ref) > 0) continue;
    fs::remove(root / kSharedDir / ref, ec);
    if (ec && first_error.ok())
      first_error = Status::IoError("cannot delete shared file '" + ref + "': " + ec.message());
  }
  return first_error;
}

}  // namespace

Status CheckpointStorage::ApplyRetention() {
  fs::path root(options_.state_dir);
  Result<DirListing> listing = ListStateDir(root);
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
  return DeleteUnkept(root, *listing, kept, newest, nullptr);
}

Result<std::vector<int64_t>> DeleteCheckpointsExcept(const std::string& state_dir,
                                                     const std::set<int64_t>& keep) {
  fs::path root(state_dir);
  Result<DirListing> listing = ListStateDir(root);
  if (!listing.ok()) return listing.status();
  std::vector<int64_t> deleted;
  FLOW_RETURN_IF_ERROR(
      DeleteUnkept(root, *listing, keep, std::numeric_limits<int64_t>::max(), &deleted));
  return deleted;
}

Status CheckpointStorage::DiscardNewerThan(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  fs::path root(options_.state_dir);
  std::error_code ec;
  std::vector<fs::path> doomed;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (ParseCheckpointDir(it->path().filename().string()) > id) doomed.push_back(it->path());
  }
  if (ec) return Status::IoError("cannot list state dir '" + root.string() + "': " + ec.message());
  for (const fs::path& p : doomed) {
    fs::remove_all(p, ec);
    if (ec) return Status::IoError("cannot delete '" + p.string() + "': " + ec.message());
  }
  return Status::Ok();
}

Status CheckpointStorage::CreateSavepoint(int64_t checkpoint_id, std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!ValidName(name)) {
    return Status::InvalidArgument("savepoint name '" + std::string(name) +
                                   "' must be [A-Za-z0-9_.-]+, not starting with '.'");
  }
  fs::path root(options_.state_dir);
  fs::path target = root / SavepointDirName(name);
  if (checkpoint_fs::Exists(target.string())) {
    return Status::InvalidArgument("savepoint '" + target.string() + "' already exists");
  }
  fs::path src = CheckpointPath(checkpoint_id);
  auto bytes = checkpoint_fs::ReadFile((src / kMetadataFileName).string());
  if (!bytes.ok())
    return Status::NotFound("no complete checkpoint " + std::to_string(checkpoint_id) +
                            " to save: " + bytes.status().message());
  auto meta = DecodeCheckpointMetadata(*bytes);
  if (!meta.ok()) return meta.status();
  CheckpointMetadata m = std::move(*meta);
  fs::path tmp = root / (SavepointDirName(name) + ".inprogress");
  std::error_code ec;
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp, ec);
  if (ec) return Status::IoError("cannot create '" + tmp.string() + "': " + ec.message());
  for (OperatorSnapshot& s : m.snapshots) {
    for (SnapshotFile& f : s.files) {
      fs::path from = f.shared ? root / kSharedDir / f.name : src / f.name;
      auto data = checkpoint_fs::ReadFile(from.string());
      if (!data.ok()) return data.status();
      if (Crc32c(*data) != f.crc32c) {
        return Status::Corruption("'" + from.string() + "': checksum mismatch (expected " +
                                  Hex32(f.crc32c) + ", actual " + Hex32(Crc32c(*data)) + ")");
      }
      if (f.shared) {
        f.name = "shared-" + f.name;
        f.shared = false;
      }
      FLOW_RETURN_IF_ERROR(checkpoint_fs::WriteFileDurably((tmp / f.name).string(), *data));
    }
  }
  m.savepoint_name = std::string(name);
  FLOW_RETURN_IF_ERROR(checkpoint_fs::WriteFileAtomically((tmp / kMetadataFileName).string(),
                                                          EncodeCheckpointMetadata(m)));
  fs::rename(tmp, target, ec);
  if (ec)
    return Status::IoError("cannot rename '" + tmp.string() + "' to '" + target.string() +
                           "': " + ec.message());
  return checkpoint_fs::SyncDir(root.string());
}

}  // namespace flow::rt
