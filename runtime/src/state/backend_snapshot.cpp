// KeyedStateBackend::SnapshotAsync / RestoreFrom: asynchronous snapshots for both kinds,
// incremental ones for rocksdb (format in docs/windows-and-state.md, "Snapshot format").

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "flow/runtime/state/keyed_state_backend.h"
#include "flow/runtime/state/snapshot_scope.h"

namespace flow::rt {
namespace fs = std::filesystem;

namespace {

constexpr uint32_t kFlksMagic = 0x534B4C46;  // "FLKS"
constexpr uint32_t kFlkrMagic = 0x524B4C46;  // "FLKR" little-endian
constexpr uint32_t kFlkrVersion = 1;

Result<std::string> ReadLocal(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError("cannot read '" + path.string() + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Status::IoError("cannot read '" + path.string() + "'");
  return ss.str();
}

Status WriteLocal(const fs::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return Status::IoError("cannot write '" + path.string() + "'");
  return Status::Ok();
}

bool IsSst(const std::string& name) {
  return name.size() > 4 && name.ends_with(".sst");
}

// One file of a FLKR manifest: an SST stored as a shared file, or a small file stored inline.
struct ManifestFile {
  std::string local_name;
  StoredFile stored;         // shared SST
  std::string inline_bytes;  // MANIFEST, CURRENT, OPTIONS
};

class HeapPendingSnapshot final : public PendingSnapshot {
 public:
  HeapPendingSnapshot(std::string name, std::string bytes,
                      std::function<void(const std::string&)> hook)
      : name_(std::move(name)), bytes_(std::move(bytes)), hook_(std::move(hook)) {}
  Result<std::vector<StoredFile>> Write(SnapshotFileSink* sink) override {
    if (hook_) hook_(name_);
    auto file = sink->WriteOwn(name_, bytes_);
    if (!file.ok()) return file.status();
    return std::vector<StoredFile>{*file};
  }

 private:
  std::string name_;
  std::string bytes_;
  std::function<void(const std::string&)> hook_;
};

}  // namespace

// The asynchronous half of a rocksdb snapshot: the local checkpoint directory holds hard links
// to immutable SST files, so the subtask may keep writing to its database meanwhile.
class RocksDbPendingSnapshot final : public PendingSnapshot {
 public:
  RocksDbPendingSnapshot(KeyedStateBackend* backend, std::string name, std::string dir,
                         std::vector<std::string> files, std::string heap_part)
      : backend_(backend),
        name_(std::move(name)),
        dir_(std::move(dir)),
        files_(std::move(files)),
        heap_part_(std::move(heap_part)) {}
  ~RocksDbPendingSnapshot() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);  // local hard links only; best effort
  }

  Result<std::vector<StoredFile>> Write(SnapshotFileSink* sink) override {
    std::vector<ManifestFile> manifest;
    std::vector<StoredFile> result(1);
    std::map<std::string, StoredFile> now_uploaded;
    for (const std::string& local : files_) {
      ManifestFile mf;
      mf.local_name = local;
      if (IsSst(local)) {
        StoredFile known;
        bool have = false;
        {
          std::lock_guard lock(backend_->uploaded_mu_);
          auto it = backend_->uploaded_.find(local);
          if (it != backend_->uploaded_.end()) {
            known = it->second;
            have = true;
          }
        }
        if (have && sink->HasShared(known.name)) {
          mf.stored = known;  // incremental: already stored by an earlier snapshot
        } else {
          if (backend_->write_hook_) backend_->write_hook_(local);
          auto bytes = ReadLocal(fs::path(dir_) / local);
          if (!bytes.ok()) return bytes.status();
          auto stored = sink->WriteShared(backend_->instance_id_ + "-" + local, *bytes);
          if (!stored.ok()) return stored.status();
          mf.stored = *stored;
        }
        now_uploaded[local] = mf.stored;
        result.push_back(mf.stored);
      } else {
        auto bytes = ReadLocal(fs::path(dir_) / local);
        if (!bytes.ok()) return bytes.status();
        mf.inline_bytes = std::move(bytes).value();
      }
      manifest.push_back(std::move(mf));
    }

    const StateContext& ctx = backend_->ctx_;
    BinaryWriter w;
    w.PutU32(kFlkrMagic);
    w.PutU32(kFlkrVersion);
    w.PutU32(ctx.max_parallelism);
    w.PutU32(ctx.range.first);
    w.PutU32(ctx.range.end);
    std::vector<std::string> tables;
    for (const auto& t : backend_->tables_) {
      if (t->InStore()) tables.push_back(t->name());
    }
    w.PutU32(static_cast<uint32_t>(tables.size()));
    for (const std::string& t : tables) w.PutString(t);
    w.PutString(heap_part_);
    w.PutU32(static_cast<uint32_t>(manifest.size()));
    for (const ManifestFile& mf : manifest) {
      w.PutString(mf.local_name);
      bool shared = IsSst(mf.local_name);
      w.PutBool(shared);
      if (shared) {
        w.PutString(mf.stored.name);
        w.PutU64(mf.stored.size);
        w.PutU32(mf.stored.crc32c);
      } else {
        w.PutString(mf.inline_bytes);
      }
    }
    w.PutU32(Crc32c(w.data()));
    if (backend_->write_hook_) backend_->write_hook_(name_);
    auto own = sink->WriteOwn(name_, w.data());
    if (!own.ok()) return own.status();
    result[0] = *own;
    {
      // Files compacted away are no longer worth remembering.
      std::lock_guard lock(backend_->uploaded_mu_);
      backend_->uploaded_ = std::move(now_uploaded);
    }
    return result;
  }

 private:
  KeyedStateBackend* backend_;
  std::string name_;
  std::string dir_;
  std::vector<std::string> files_;
  std::string heap_part_;
};

std::map<std::string, StoredFile> KeyedStateBackend::UploadedFiles() const {
  std::lock_guard lock(uploaded_mu_);
  return uploaded_;
}

Result<std::unique_ptr<PendingSnapshot>> KeyedStateBackend::SnapshotAsync(int64_t checkpoint_id,
                                                                          std::string name) {
  if (store_ == nullptr) {
    BinaryWriter w;
    SnapshotTables(&w, false);
    return std::unique_ptr<PendingSnapshot>(
        new HeapPendingSnapshot(std::move(name), w.Release(), write_hook_));
  }
  // Dropping the cache bounds the next snapshot's write-back to the keys touched until then.
  for (const auto& t : tables_) t->FlushAndDropCache();
  std::string dir = store_->dir() + "-chk-" + std::to_string(checkpoint_id);
  std::error_code ec;
  fs::remove_all(dir, ec);  // a leftover of an earlier attempt with this id
  auto files = store_->CheckpointTo(dir);
  if (!files.ok()) return files.status();
  BinaryWriter heap;
  SnapshotHeapTables(&heap);
  return std::unique_ptr<PendingSnapshot>(new RocksDbPendingSnapshot(
      this, std::move(name), std::move(dir), std::move(files).value(), heap.Release()));
}

Status KeyedStateBackend::RestoreFrom(const StoredFile& file, SnapshotFileSource* source) {
  auto bytes = source->Read(file);
  if (!bytes.ok()) return bytes.status();
  BinaryReader peek(*bytes);
  uint32_t magic = 0;
  FLOW_RETURN_IF_ERROR(peek.GetU32(&magic));
  if (magic == kFlksMagic) {
    BinaryReader r(*bytes);
    Status s = RestoreState(&r);
    if (!s.ok()) return Status(s.code(), file.name + ": " + s.message());
    return Status::Ok();
  }
  if (magic != kFlkrMagic)
    return Status::Corruption(file.name + ": not a keyed state snapshot (bad magic number)");
  Status s = RestoreRocksDb(*bytes, file.name, source);
  if (!s.ok() && s.message().find(file.name) == std::string::npos) {
    return Status(s.code(), file.name + ": " + s.message());
  }
  return s;
}

Status KeyedStateBackend::RestoreRocksDb(std::string_view bytes, const std::string& what,
                                         SnapshotFileSource* source) {
  if (bytes.size() < 4) return Status::Corruption("rocksdb state snapshot truncated");
  uint32_t crc = 0;
  {
    BinaryReader tail(bytes.substr(bytes.size() - 4));
    FLOW_RETURN_IF_ERROR(tail.GetU32(&crc));
  }
  std::string_view body = bytes.substr(0, bytes.size() - 4);
  if (Crc32c(body) != crc) return Status::Corruption("rocksdb state snapshot: checksum mismatch");
  if (store_ == nullptr) {
    return Status::InvalidArgument(
        "a rocksdb state snapshot restores only into the rocksdb backend (run with --state-backend "
        "rocksdb)");
  }
  BinaryReader r(body);
  uint32_t magic = 0, version = 0, max_parallelism = 0, first = 0, end = 0, n_tables = 0,
           n_files = 0;
  FLOW_RETURN_IF_ERROR(r.GetU32(&magic));
  FLOW_RETURN_IF_ERROR(r.GetU32(&version));
  if (version != kFlkrVersion) {
    return Status::Corruption("rocksdb state snapshot: unsupported version " +
                              std::to_string(version));
  }
  FLOW_RETURN_IF_ERROR(r.GetU32(&max_parallelism));
  if (max_parallelism != ctx_.max_parallelism) {
    return Status::InvalidArgument("keyed state snapshot has max parallelism " +
                                   std::to_string(max_parallelism) + ", job has " +
                                   std::to_string(ctx_.max_parallelism));
  }
  FLOW_RETURN_IF_ERROR(r.GetU32(&first));
  FLOW_RETURN_IF_ERROR(r.GetU32(&end));
  if (first > end || end > max_parallelism) {
    return Status::Corruption("rocksdb state snapshot: bad key-group range");
  }
  FLOW_RETURN_IF_ERROR(r.GetU32(&n_tables));
  if (n_tables > r.remaining())
    return Status::Corruption("rocksdb state snapshot: table count too large");
  std::vector<std::string> tables(n_tables);
  for (std::string& t : tables) {
    FLOW_RETURN_IF_ERROR(r.GetString(&t));
    bool known = false;
    for (const auto& own : tables_) known = known || (own->name() == t && own->InStore());
    if (!known) {
      return Status::InvalidArgument("keyed state snapshot names state '" + t +
                                     "', which this operator does not have");
    }
  }
  std::string heap_part;
  FLOW_RETURN_IF_ERROR(r.GetString(&heap_part));
  FLOW_RETURN_IF_ERROR(r.GetU32(&n_files));
  if (n_files > r.remaining())
    return Status::Corruption("rocksdb state snapshot: file count too large");
  std::vector<ManifestFile> files(n_files);
  for (ManifestFile& mf : files) {
    bool shared = false;
    FLOW_RETURN_IF_ERROR(r.GetString(&mf.local_name));
    if (mf.local_name.empty() || mf.local_name.find('/') != std::string::npos ||
        mf.local_name == "." || mf.local_name == "..") {
      return Status::Corruption("rocksdb state snapshot: bad file name '" + mf.local_name + "'");
    }
    FLOW_RETURN_IF_ERROR(r.GetBool(&shared));
    if (shared) {
      mf.stored.shared = true;
      FLOW_RETURN_IF_ERROR(r.GetString(&mf.stored.name));
      FLOW_RETURN_IF_ERROR(r.GetU64(&mf.stored.size));
      FLOW_RETURN_IF_ERROR(r.GetU32(&mf.stored.crc32c));
    } else {
      FLOW_RETURN_IF_ERROR(r.GetString(&mf.inline_bytes));
    }
  }
  if (!r.AtEnd()) return Status::Corruption("rocksdb state snapshot has trailing bytes");

  const KeyGroupSpan limit = SnapshotRestoreScope::Limit();
  uint32_t lo = std::max({first, ctx_.range.first, limit.first});
  uint32_t hi = std::min({end, ctx_.range.end, limit.end});
  if (lo < hi) {
    // Materialise the snapshot's database next to ours, copy the owned key-group ranges, drop it.
    fs::path dir = store_->dir() + "-restore-" + std::to_string(restore_count_++);
    std::error_code ec;
    fs::remove_all(dir, ec);
    fs::create_directories(dir, ec);
    if (ec) return Status::IoError("cannot create '" + dir.string() + "': " + ec.message());
    Status s;
    for (const ManifestFile& mf : files) {
      if (mf.stored.shared) {
        auto content = source->Read(mf.stored);  // checks size and CRC-32C, names the file
        if (!content.ok()) {
          s = content.status();
          break;
        }
        s = WriteLocal(dir / mf.local_name, *content);
      } else {
        s = WriteLocal(dir / mf.local_name, mf.inline_bytes);
      }
      if (!s.ok()) break;
    }
    if (s.ok()) s = store_->ImportRange(dir.string(), lo, hi, tables);
    fs::remove_all(dir, ec);
    if (!s.ok()) return s;
  }
  (void)what;
  BinaryReader hr(heap_part);
  return RestoreState(&hr);
}

}  // namespace flow::rt
