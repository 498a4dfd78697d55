#include "flow/runtime/checkpoint/recovery.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "flow/runtime/checkpoint/checkpoint_storage.h"
#include "flow/runtime/checkpoint/fault_injection.h"
#include "flow/runtime/checkpoint/state_mapping.h"
#include "flow/runtime/checkpoint/state_schema.h"
#include "flow/runtime/common/key_group.h"
#include "flow/runtime/common/serde.h"

namespace flow::rt {

namespace {

std::string Hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", v);
  return buf;
}

// "chk-6/window-1.snap" or "shared/sst-12": the object's key, and its short name for messages.
std::string ShortName(const RestorePoint& p, const SnapshotFile& f) {
  return (f.shared ? std::string("shared") : p.name) + "/" + f.name;
}

Result<std::string> ReadFileOf(const RestorePoint& p, const SnapshotFile& f) {
  auto data = p.store->Get(ShortName(p, f));
  if (!data.ok() && data.status().code() == StatusCode::kNotFound)
    return Status::NotFound(ShortName(p, f) + ": missing file");
  return data;
}

Status CheckBytes(const RestorePoint& p, const SnapshotFile& f, std::string_view data) {
  if (data.size() != f.size) {
    return Status::Corruption(ShortName(p, f) + ": size " + std::to_string(data.size()) +
                              " bytes, expected " + std::to_string(f.size) +
                              (data.size() < f.size ? " (truncated)" : ""));
  }
  uint32_t actual = Crc32c(data);
  if (actual != f.crc32c) {
    return Status::Corruption(ShortName(p, f) + ": checksum mismatch (expected " + Hex32(f.crc32c) +
                              ", actual " + Hex32(actual) + ")");
  }
  return Status::Ok();
}

}  // namespace

Result<RestorePoint> VerifyCheckpoint(std::shared_ptr<CheckpointStore> store, std::string name) {
  auto listing = store->List(name);
  if (!listing.ok()) return listing.status();
  if (listing->objects.empty() && listing->prefixes.empty())
    return Status::NotFound(store->Describe(name) + ": no such checkpoint directory");
  auto bytes = store->Get(name + "/" + std::string(kMetadataFileName));
  if (!bytes.ok()) {
    if (bytes.status().code() == StatusCode::kNotFound) {
      return Status::NotFound("no _metadata (incomplete checkpoint)");
    }
    return bytes.status();
  }
  auto meta = DecodeCheckpointMetadata(*bytes);
  if (!meta.ok()) return Status::Corruption(name + "/_metadata: " + meta.status().message());
  RestorePoint p;
  p.path = store->Describe(name);
  p.store = std::move(store);
  p.name = std::move(name);
  p.metadata = std::move(*meta);
  for (const OperatorSnapshot& s : p.metadata.snapshots) {
    for (const SnapshotFile& f : s.files) {
      auto data = ReadFileOf(p, f);
      if (!data.ok()) return data.status();
      FLOW_RETURN_IF_ERROR(CheckBytes(p, f, *data));
    }
  }
  return p;
}

Result<RestorePoint> VerifyCheckpoint(const std::string& dir) {
  auto entry = OpenStoreEntry(dir);
  if (!entry.ok()) return entry.status();
  return VerifyCheckpoint(std::move(entry->store), std::move(entry->name));
}

namespace {
Status MaxParallelismMismatch(const CheckpointMetadata& m, const JobCheckpointInfo& job,
                              std::string_view where) {
  return Status::InvalidArgument(
      std::string(where) + ": taken with max parallelism " + std::to_string(m.max_parallelism) +
      ", this job has " + std::to_string(job.max_parallelism) + " (key groups cannot be remapped)");
}
}  // namespace

Status CheckCompatible(const CheckpointMetadata& m, const JobCheckpointInfo& job,
                       std::string_view where) {
  if (job.state_schemas && m.state_schemas) {
    // Both declare their state: mapped by operator (state_mapping.h), the graph may differ.
    if (m.max_parallelism != job.max_parallelism) return MaxParallelismMismatch(m, job, where);
    return StateMappingStatus(MapRestoredState(m, job), where);
  }
  if (job.state_schemas && !m.state_schemas && m.job_fingerprint == job.fingerprint &&
      std::any_of(job.operators.begin(), job.operators.end(), [](const OperatorParallelism& op) {
        return std::any_of(
            op.state_schema.begin(), op.state_schema.end(),
            [](const std::string& part) { return part.rfind(kStateAggregatePart, 0) == 0; });
      })) {
    // Before state schemas an accumulator's aggregates were stored by position, now by name.
    return Status::InvalidArgument(
        std::string(where) +
        ": taken by a job built before checkpoints recorded state schemas; its aggregate state "
        "is laid out differently. Restore it with the binary that took it, or start without "
        "state (--restore none)");
  }
  if (m.job_fingerprint != job.fingerprint) {
    char buf[160];
    std::snprintf(buf, sizeof buf, ": taken by another job (fingerprint %016llx, this job %016llx)",
                  static_cast<unsigned long long>(m.job_fingerprint),
                  static_cast<unsigned long long>(job.fingerprint));
    return Status::InvalidArgument(
        std::string(where) + buf +
        "; use another --state-dir, or --restore none to start without state");
  }
  if (m.max_parallelism != job.max_parallelism) return MaxParallelismMismatch(m, job, where);
  return Status::Ok();
}

Result<RestoreSelection> SelectRestoreCheckpoint(std::shared_ptr<CheckpointStore> store,
                                                 const JobCheckpointInfo& job) {
  RestoreSelection sel;
  auto listing = store->List("");
  if (!listing.ok()) return listing.status();
  std::vector<int64_t> ids;
  for (const std::string& name : listing->prefixes) {
    int64_t id = ParseCheckpointDir(name);
    if (id >= 0) ids.push_back(id);
  }
  std::sort(ids.rbegin(), ids.rend());
  for (int64_t id : ids) {
    auto p = VerifyCheckpoint(store, CheckpointDirName(id));
    if (!p.ok()) {
      sel.warnings.push_back("skipping " + CheckpointDirName(id) + ": " + p.status().message());
      continue;
    }
    FLOW_RETURN_IF_ERROR(CheckCompatible(p->metadata, job, p->path));
    sel.point = std::move(*p);
    break;
  }
  return sel;
}

Result<RestoreSelection> SelectRestoreCheckpoint(const std::string& state_dir,
                                                 const JobCheckpointInfo& job) {
  if (state_dir.empty()) return RestoreSelection{};
  // Not created: a missing directory lists empty, nothing to restore.
  auto store = OpenCheckpointStore(state_dir, /*create=*/false);
  if (!store.ok()) return store.status();
  return SelectRestoreCheckpoint(std::move(store).value(), job);
}

Result<RestoreSelection> ResolveRestore(const std::string& state_dir, std::string_view restore_flag,
                                        const JobCheckpointInfo& job) {
  if (restore_flag.empty()) return SelectRestoreCheckpoint(state_dir, job);
  RestoreSelection sel;
  if (restore_flag == "none") return sel;
  auto p = VerifyCheckpoint(std::string(restore_flag));
  if (!p.ok()) {
    return Status(p.status().code(),
                  "--restore " + std::string(restore_flag) + ": " + p.status().message());
  }
  FLOW_RETURN_IF_ERROR(CheckCompatible(p->metadata, job, "--restore " + std::string(restore_flag)));
  sel.point = std::move(*p);
  return sel;
}

std::vector<const OperatorSnapshot*> SnapshotsOf(const CheckpointMetadata& m,
                                                 std::string_view operator_name) {
  std::vector<const OperatorSnapshot*> out;
  for (const OperatorSnapshot& s : m.snapshots) {
    if (s.operator_name == operator_name) out.push_back(&s);
  }
  std::sort(out.begin(), out.end(), [](const OperatorSnapshot* a, const OperatorSnapshot* b) {
    return a->subtask < b->subtask;
  });
  return out;
}

Result<std::vector<std::vector<RestorePiece>>> PlanKeyedRestore(const CheckpointMetadata& m,
                                                                std::string_view operator_name,
                                                                uint32_t new_parallelism) {
  const uint32_t max_p = m.max_parallelism;
  if (new_parallelism == 0 || new_parallelism > max_p) {
    return Status::InvalidArgument("cannot restore " + std::string(operator_name) +
                                   " at parallelism " + std::to_string(new_parallelism) +
                                   ": must be in 1.." + std::to_string(max_p) +
                                   " (max parallelism)");
  }
  std::vector<std::vector<RestorePiece>> out(new_parallelism);
  std::vector<const OperatorSnapshot*> owner(max_p, nullptr);
  bool keyed = false;
  bool some_finished = false;
  for (const OperatorSnapshot* s : SnapshotsOf(m, operator_name)) {
    some_finished = some_finished || s->finished;
    if (s->key_group_end <= s->key_group_first) continue;
    keyed = true;
    for (uint32_t g = s->key_group_first; g < s->key_group_end; ++g) {
      if (owner[g] != nullptr) {
        return Status::Corruption(
            "checkpoint " + std::to_string(m.checkpoint_id) + ": key group " + std::to_string(g) +
            " of " + std::string(operator_name) + " is in the snapshots of subtasks " +
            std::to_string(owner[g]->subtask) + " and " + std::to_string(s->subtask));
      }
      owner[g] = s;
    }
  }
  if (!keyed) return out;
  for (uint32_t g = 0; g < max_p; ++g) {
    const OperatorSnapshot* s = owner[g];
    // A finished subtask reports no key groups: all input had ended, so its groups get no more
    // records and start empty.
    if (s == nullptr && some_finished) continue;
    if (s == nullptr) {
      return Status::Corruption("checkpoint " + std::to_string(m.checkpoint_id) + ": key group " +
                                std::to_string(g) + " of " + std::string(operator_name) +
                                " is in no snapshot");
    }
    std::vector<RestorePiece>& dst = out[SubtaskForKeyGroup(g, max_p, new_parallelism)];
    for (const SnapshotFile& f : s->files) dst.push_back(RestorePiece{f, s->subtask, g});
  }
  return out;
}

Result<std::string> ReadRestoreFile(const RestorePoint& point, const SnapshotFile& file) {
  FaultPoint("during-restore");
  auto data = ReadFileOf(point, file);
  if (!data.ok()) return data.status();
  FLOW_RETURN_IF_ERROR(CheckBytes(point, file, *data));
  return std::move(*data);
}

}  // namespace flow::rt
