#include "flow/runtime/state/keyed_state_backend.h"
#include "flow/runtime/state/snapshot_scope.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>

#include <fmt/format.h>

namespace flow::rt {
namespace {
constexpr uint32_t kMagic = 0x534B4C46;  // "FLKS" little-endian
constexpr uint32_t kVersion = 1;
constexpr uint32_t kAsyncRefMagic = 0x414B4C46;  // "FLKA" little-endian (state/snapshot_scope.h)
constexpr uint32_t kAsyncRefVersion = 1;
}  // namespace

StateBackendOptions StateBackendOptionsFromEnvironment() {
  StateBackendOptions o;
  if (const char* kind = std::getenv("FLOW_STATE_BACKEND"); kind != nullptr && *kind != '\0') {
    auto k = ParseStateBackendKind(kind);
    if (!k.ok()) {
      std::fprintf(stderr, "flow: FLOW_STATE_BACKEND: %s\n", k.status().message().c_str());
      std::exit(2);
    }
    o.kind = *k;
  }
  if (const char* dir = std::getenv("FLOW_STATE_LOCAL_DIR"); dir != nullptr) o.local_dir = dir;
  if (const char* n = std::getenv("FLOW_STATE_CACHE_ENTRIES"); n != nullptr && *n != '\0') {
    char* end = nullptr;
    unsigned long long v = std::strtoull(n, &end, 10);
    if (end == n || *end != '\0' || v < 1) {
      std::fprintf(stderr,
                   "flow: FLOW_STATE_CACHE_ENTRIES: expected a positive integer, got '%s'\n", n);
      std::exit(2);
    }
    o.cache_entries = static_cast<size_t>(v);
  }
  return o;
}

namespace {

// Removes flow-rocksdb-<pid>-... directories under `parent` whose process is gone: a job that
// was killed, or exited without closing its operators, leaves its scratch databases behind.
void SweepDeadDatabases(const std::string& parent) {
  std::error_code ec;
  const std::string prefix = "flow-rocksdb-";
  for (const auto& e : std::filesystem::directory_iterator(parent, ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    size_t dash = name.find('-', prefix.size());
    if (dash == std::string::npos) continue;
    std::string hex = name.substr(prefix.size(), dash - prefix.size());
    char* end = nullptr;
    unsigned long pid = std::strtoul(hex.c_str(), &end, 16);
    if (hex.empty() || *end != '\0' || pid == 0 || static_cast<pid_t>(pid) == getpid()) continue;
    if (kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH)
      continue;  // alive, or not ours to judge
    std::error_code rm;
    std::filesystem::remove_all(e.path(), rm);  // best effort
  }
}

std::string NewInstanceId() {
  static std::atomic<uint64_t> counter{0};
  std::random_device rd;
  uint64_t r = (uint64_t{rd()} << 32) ^ rd();
  return fmt::format("{:x}-{:x}-{}", static_cast<uint64_t>(getpid()), r, counter.fetch_add(1));
}
}  // namespace

Result<StateBackendKind> ParseStateBackendKind(std::string_view text) {
  if (text == "heap") return StateBackendKind::kHeap;
  if (text == "rocksdb") return StateBackendKind::kRocksDb;
  return Status::InvalidArgument("--state-backend: unknown state backend '" + std::string(text) +
                                 "' (expected heap or rocksdb)");
}

const char* StateBackendKindName(StateBackendKind kind) {
  return kind == StateBackendKind::kRocksDb ? "rocksdb" : "heap";
}

void StateStoreCorrupt(const std::string& table, const Status& status) {
  std::fprintf(stderr, "flow: rocksdb state backend, state '%s': %s\n", table.c_str(),
               status.ToString().c_str());
  std::abort();
}

TimestampMs SystemClockMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

KeyedStateBackend::KeyedStateBackend(KeyGroupSpan range, uint32_t max_parallelism,
                                     ProcessingClock clock)
    : KeyedStateBackend(range, max_parallelism, std::move(clock),
                        StateBackendOptionsFromEnvironment()) {}

KeyedStateBackend::KeyedStateBackend(KeyGroupSpan range, uint32_t max_parallelism,
                                     ProcessingClock clock, const StateBackendOptions& options)
    : KeyedStateBackend(NoStore{}, range, max_parallelism, std::move(clock), options) {
  assert(range.end <= max_parallelism && "key-group range beyond max parallelism");
  if (options_.kind == StateBackendKind::kRocksDb) {
    Status s = OpenStore();
    if (!s.ok()) {
      std::fprintf(stderr, "flow: %s\n", s.ToString().c_str());
      std::exit(1);
    }
  }
}

KeyedStateBackend::~KeyedStateBackend() = default;

Result<std::unique_ptr<KeyedStateBackend>> KeyedStateBackend::Make(KeyGroupSpan range,
                                                                   uint32_t max_parallelism,
                                                                   ProcessingClock clock,
                                                                   StateBackendOptions options) {
  if (range.end > max_parallelism || range.empty()) {
    return Status::InvalidArgument("key-group range " + range.ToString() +
                                   " is empty or beyond max parallelism " +
                                   std::to_string(max_parallelism));
  }
  // Key groups are a 2-byte key prefix and scans end at the prefix of group + 1.
  if (max_parallelism > (1u << 15)) {
    return Status::InvalidArgument("max parallelism " + std::to_string(max_parallelism) +
                                   " is above 32768 (the key-group prefix is 2 bytes)");
  }
  std::unique_ptr<KeyedStateBackend> b(
      new KeyedStateBackend(NoStore{}, range, max_parallelism, std::move(clock), options));
  if (b->options_.kind == StateBackendKind::kRocksDb) FLOW_RETURN_IF_ERROR(b->OpenStore());
  return b;
}

KeyedStateBackend::KeyedStateBackend(NoStore, KeyGroupSpan range, uint32_t max_parallelism,
                                     ProcessingClock clock, const StateBackendOptions& options)
    : options_(options) {
  ctx_.range = range;
  ctx_.max_parallelism = max_parallelism;
  ctx_.clock = clock ? std::move(clock) : ProcessingClock(SystemClockMs);
}

Status KeyedStateBackend::OpenStore() {
  std::string parent = options_.local_dir;
  if (parent.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    parent = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  }
  SweepDeadDatabases(parent);
  instance_id_ = NewInstanceId();
  KvStoreOptions o;
  o.dir = parent + "/flow-rocksdb-" + instance_id_;
  o.write_buffer_bytes = options_.write_buffer_bytes;
  auto store = KvStore::Open(o);
  if (!store.ok()) return store.status();
  store_ = std::move(store).value();
  for (const auto& t : tables_) FLOW_RETURN_IF_ERROR(AttachTable(t.get()));
  return Status::Ok();
}

Status KeyedStateBackend::AttachTable(StateTable* table) {
  auto id = store_->Table(table->name());
  if (!id.ok()) return id.status();
  table->AttachStore(store_.get(), *id, options_.cache_entries);
  return Status::Ok();
}

size_t KeyedStateBackend::TotalEntries() const {
  size_t n = 0;
  for (const auto& t : tables_) t->FlushCache();
  for (const auto& t : tables_) {
    for (uint32_t g = ctx_.range.first; g < ctx_.range.end; ++g) n += t->KeyGroupSize(g);
  }
  return n;
}

void KeyedStateBackend::CleanupExpired() {
  for (const auto& t : tables_) t->CleanupExpired();
}

void KeyedStateBackend::Clear() {
  for (const auto& t : tables_) t->Clear();
}

void KeyedStateBackend::SnapshotState(BinaryWriter* out) const {
  AsyncSnapshotScope* scope = AsyncSnapshotScope::Current();
  if (scope == nullptr || store_ == nullptr) {
    SnapshotTables(out, false);
    return;
  }
  // Asynchronous rocksdb snapshot (state/snapshot_scope.h): only the hard-link checkpoint runs
  // here; the bytes hold a reference to the file the scope's owner writes later. The backend is
  // not const (only this method is, for the operators' const Snapshot).
  std::string name = scope->NextFileName();
  auto pending = const_cast<KeyedStateBackend*>(this)->SnapshotAsync(scope->checkpoint_id(), name);
  if (pending.ok()) {
    scope->Add(std::move(pending).value());
  } else {
    scope->Fail(pending.status());
  }
  out->PutU32(kAsyncRefMagic);
  out->PutU32(kAsyncRefVersion);
  out->PutString(name);
}

void KeyedStateBackend::SnapshotHeapTables(BinaryWriter* out) const {
  SnapshotTables(out, true);
}

void KeyedStateBackend::SnapshotTables(BinaryWriter* out, bool heap_only) const {
  out->PutU32(kMagic);
  out->PutU32(kVersion);
  out->PutU32(ctx_.max_parallelism);
  for (const auto& t : tables_) t->FlushCache();
  std::vector<uint32_t> groups;
  for (uint32_t g = ctx_.range.first; g < ctx_.range.end; ++g) {
    for (const auto& t : tables_) {
      if (heap_only && t->InStore()) continue;
      if (t->KeyGroupSize(g) > 0) {
        groups.push_back(g);
        break;
      }
    }
  }
  out->PutU32(static_cast<uint32_t>(groups.size()));
  for (uint32_t g : groups) {
    BinaryWriter blob;
    uint32_t n = 0;
    for (const auto& t : tables_) n += heap_only && t->InStore() ? 0 : 1;
    blob.PutU32(n);
    for (const auto& t : tables_) {
      if (heap_only && t->InStore()) continue;
      BinaryWriter bytes;
      t->SnapshotKeyGroup(g, &bytes);
      blob.PutString(t->name());
      blob.PutString(bytes.data());
    }
    out->PutU32(g);
    out->PutString(blob.data());
    out->PutU32(Crc32c(blob.data()));
  }
}

Status KeyedStateBackend::RestoreState(BinaryReader* in) {
  uint32_t magic = 0, version = 0, max_parallelism = 0, group_count = 0;
  {
    BinaryReader peek = *in;
    if (peek.GetU32(&magic).ok() && magic == kAsyncRefMagic) return RestoreAsyncRef(in);
  }
  FLOW_RETURN_IF_ERROR(in->GetU32(&magic));
  if (magic != kMagic) return Status::Corruption("keyed state snapshot: bad magic number");
  FLOW_RETURN_IF_ERROR(in->GetU32(&version));
  if (version != kVersion) {
    return Status::Corruption("keyed state snapshot: unsupported version " +
                              std::to_string(version));
  }
  FLOW_RETURN_IF_ERROR(in->GetU32(&max_parallelism));
  if (max_parallelism != ctx_.max_parallelism) {
    return Status::InvalidArgument("keyed state snapshot has max parallelism " +
                                   std::to_string(max_parallelism) + ", job has " +
                                   std::to_string(ctx_.max_parallelism));
  }
  FLOW_RETURN_IF_ERROR(in->GetU32(&group_count));
  const KeyGroupSpan limit = SnapshotRestoreScope::Limit();
  for (uint32_t i = 0; i < group_count; ++i) {
    uint32_t g = 0, crc = 0;
    std::string blob;
    FLOW_RETURN_IF_ERROR(in->GetU32(&g));
    FLOW_RETURN_IF_ERROR(in->GetString(&blob));
    FLOW_RETURN_IF_ERROR(in->GetU32(&crc));
    if (Crc32c(blob) != crc) {
      return Status::Corruption("keyed state snapshot: checksum mismatch in key group " +
                                std::to_string(g));
    }
    if (g >= ctx_.max_parallelism) {
      return Status::Corruption("keyed state snapshot: key group " + std::to_string(g) +
                                " out of range");
    }
    if (!ctx_.range.Contains(g)) continue;  // owned by another subtask after rescaling
    if (!limit.Contains(g)) continue;       // adopting another key-group range only
    FLOW_RETURN_IF_ERROR(RestoreGroup(g, blob));
  }
  return Status::Ok();
}

Status KeyedStateBackend::RestoreAsyncRef(BinaryReader* in) {
  uint32_t magic = 0, version = 0;
  std::string name;
  FLOW_RETURN_IF_ERROR(in->GetU32(&magic));
  FLOW_RETURN_IF_ERROR(in->GetU32(&version));
  if (version != kAsyncRefVersion) {
    return Status::Corruption("keyed state reference: unsupported version " +
                              std::to_string(version));
  }
  FLOW_RETURN_IF_ERROR(in->GetString(&name));
  SnapshotRestoreScope* scope = SnapshotRestoreScope::Current();
  if (scope == nullptr) {
    return Status::Corruption("keyed state snapshot refers to file '" + name +
                              "' but no checkpoint files are available to restore it from");
  }
  const StoredFile* file = scope->Find(name);
  if (file == nullptr) {
    return Status::Corruption("keyed state snapshot refers to file '" + name +
                              "', which the checkpoint metadata does not list");
  }
  return RestoreFrom(*file, scope->source());
}

Status KeyedStateBackend::RestoreGroup(uint32_t key_group, std::string_view blob) {
  BinaryReader r(blob);
  uint32_t table_count = 0;
  FLOW_RETURN_IF_ERROR(r.GetU32(&table_count));
  for (uint32_t i = 0; i < table_count; ++i) {
    std::string name, bytes;
    FLOW_RETURN_IF_ERROR(r.GetString(&name));
    FLOW_RETURN_IF_ERROR(r.GetString(&bytes));
    StateTable* table = nullptr;
    for (const auto& t : tables_) {
      if (t->name() == name) table = t.get();
    }
    if (table == nullptr) {
      return Status::InvalidArgument("keyed state snapshot names state '" + name +
                                     "', which this operator does not have");
    }
    BinaryReader tr(bytes);
    Status s = table->RestoreKeyGroup(key_group, &tr);
    if (!s.ok()) {
      return Status(s.code(), "key group " + std::to_string(key_group) + ": " + s.message());
    }
    if (!tr.AtEnd()) {
      return Status::Corruption("state '" + name + "' in key group " + std::to_string(key_group) +
                                " has trailing bytes");
    }
  }
  if (!r.AtEnd()) {
    return Status::Corruption("key group " + std::to_string(key_group) + " has trailing bytes");
  }
  return Status::Ok();
}

}  // namespace flow::rt
