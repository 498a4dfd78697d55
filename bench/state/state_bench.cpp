// state_bench: keyed state backends side by side (docs/windows-and-state.md, "Backends").
//
//   state_bench [--records N] [--keys N] [--cache N] [--restore-mb M] [--dir DIR]
//
// 1. keyed count: N records over --keys keys (uniform, fixed seed), ValueState GetOrInsert += 1,
//    heap vs rocksdb (cache --cache entries); records per second.
// 2. snapshot: synchronous and asynchronous part of SnapshotAsync for each backend, then a
//    second (incremental) rocksdb snapshot after 1% of the keys changed: bytes it wrote.
// 3. restore: --restore-mb MB of rocksdb state (1 KiB values) checkpointed into a state dir the
//    way a task does (checkpoint storage, metadata) and restored into a new backend the way a
//    task does (verify the checkpoint, resolve the keyed-state reference, import the SSTs).
//    CI never runs the 1 GB size; pass --restore-mb 1024 by hand.
// Files go to --dir (default $TMPDIR or /tmp) and are deleted afterwards. Output: one
// "name value unit" line per measurement.

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "flow/runtime/checkpoint/checkpoint_storage.h"
#include "flow/runtime/checkpoint/recovery.h"
#include "flow/runtime/state/checkpoint_storage_sink.h"
#include "flow/runtime/state/keyed_state_backend.h"
#include "flow/runtime/state/snapshot_scope.h"

namespace fs = std::filesystem;
using namespace flow::rt;

namespace {

// Process CPU seconds (all threads, RocksDB's background work included): on a shared machine
// wall time says more about the neighbours than about the backend.
double CpuSeconds() {
  return static_cast<double>(std::clock()) / CLOCKS_PER_SEC;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

// Files on disk, like the checkpoint storage lays them out (own files, shared/).
class DirFiles final : public SnapshotFileSink, public SnapshotFileSource {
 public:
  explicit DirFiles(fs::path dir) : dir_(std::move(dir)) {
    fs::create_directories(dir_ / "shared");
  }
  Result<StoredFile> WriteOwn(std::string_view name, std::string_view bytes) override {
    return Write(dir_ / name, name, bytes, false);
  }
  Result<StoredFile> WriteShared(std::string_view name, std::string_view bytes) override {
    return Write(dir_ / "shared" / name, name, bytes, true);
  }
  bool HasShared(std::string_view name) override { return fs::exists(dir_ / "shared" / name); }
  Result<std::string> Read(const StoredFile& f) override {
    fs::path p = f.shared ? dir_ / "shared" / f.name : dir_ / f.name;
    FILE* in = std::fopen(p.c_str(), "rb");
    if (in == nullptr) return Status::NotFound(p.string());
    std::string bytes(f.size, '\0');
    size_t n = std::fread(bytes.data(), 1, bytes.size(), in);
    std::fclose(in);
    if (n != f.size || Crc32c(bytes) != f.crc32c)
      return Status::Corruption(f.name + ": checksum mismatch");
    return bytes;
  }
  uint64_t written = 0;

 private:
  Result<StoredFile> Write(const fs::path& p, std::string_view name, std::string_view bytes,
                           bool shared) {
    FILE* out = std::fopen(p.c_str(), "wb");
    if (out == nullptr) return Status::IoError("cannot write " + p.string());
    std::fwrite(bytes.data(), 1, bytes.size(), out);
    std::fclose(out);
    written += bytes.size();
    return StoredFile{std::string(name), bytes.size(), Crc32c(bytes), shared};
  }
  fs::path dir_;
};

std::unique_ptr<KeyedStateBackend> Make(StateBackendKind kind, size_t cache,
                                        const std::string& dir) {
  StateBackendOptions o;
  o.kind = kind;
  o.cache_entries = cache;
  o.local_dir = dir;
  o.write_buffer_bytes = 64u << 20;
  auto b = KeyedStateBackend::Make(KeyGroupSpan::All(), kDefaultMaxParallelism, nullptr, o);
  if (!b.ok()) {
    std::fprintf(stderr, "state_bench: %s\n", b.status().ToString().c_str());
    std::exit(1);
  }
  return std::move(b).value();
}

void Check(const Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "state_bench: %s: %s\n", what, s.ToString().c_str());
    std::exit(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t records = 5'000'000, keys = 1'000'000, cache = 65536, restore_mb = 64;
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    uint64_t v = std::strtoull(argv[i + 1], nullptr, 10);
    if (a == "--records")
      records = v;
    else if (a == "--keys")
      keys = v;
    else if (a == "--cache")
      cache = v;
    else if (a == "--restore-mb")
      restore_mb = v;
    else if (a == "--dir")
      dir = argv[i + 1];
    else {
      std::fprintf(
          stderr,
          "usage: state_bench [--records N] [--keys N] [--cache N] [--restore-mb M] [--dir DIR]\n");
      return 2;
    }
  }
  if (keys == 0) keys = 1;
  fs::path work = fs::path(dir) / ("flow-state-bench-" + std::to_string(getpid()));
  fs::create_directories(work);

  for (StateBackendKind kind : {StateBackendKind::kHeap, StateBackendKind::kRocksDb}) {
    const char* name = StateBackendKindName(kind);
    auto b = Make(kind, cache, work.string());
    auto* counts = b->CreateValueState<int64_t, int64_t>("counts");
    std::mt19937_64 rng(42);
    auto start = std::chrono::steady_clock::now();
    double cpu = CpuSeconds();
    for (uint64_t i = 0; i < records; ++i)
      counts->GetOrInsert(static_cast<int64_t>(rng() % keys)) += 1;
    double s = Seconds(start);
    cpu = CpuSeconds() - cpu;
    std::printf(
        "count_%s_records_per_s %.0f records/s\ncount_%s_records_per_cpu_s %.0f records/cpu-s\n",
        name, records / s, name, records / cpu);

    DirFiles files(work / (std::string("snap-") + name));
    start = std::chrono::steady_clock::now();
    auto pending = b->SnapshotAsync(1, "op-0.snap");
    Check(pending.ok() ? Status::Ok() : pending.status(), "snapshot");
    double sync_s = Seconds(start);
    start = std::chrono::steady_clock::now();
    auto written = (*pending)->Write(&files);
    Check(written.ok() ? Status::Ok() : written.status(), "snapshot write");
    std::printf(
        "snapshot_%s_sync_ms %.1f ms\nsnapshot_%s_async_ms %.1f ms\nsnapshot_%s_bytes %llu bytes\n",
        name, sync_s * 1e3, name, Seconds(start) * 1e3, name,
        static_cast<unsigned long long>(files.written));
    if (kind == StateBackendKind::kRocksDb) {
      for (uint64_t k = 0; k < keys / 100; ++k) counts->GetOrInsert(static_cast<int64_t>(k)) += 1;
      uint64_t before = files.written;
      start = std::chrono::steady_clock::now();
      auto second = b->SnapshotAsync(2, "op-0.snap.2");
      Check(second.ok() ? Status::Ok() : second.status(), "snapshot");
      auto w2 = (*second)->Write(&files);
      Check(w2.ok() ? Status::Ok() : w2.status(), "snapshot write");
      std::printf(
          "snapshot_rocksdb_incremental_ms %.1f ms\nsnapshot_rocksdb_incremental_bytes %llu "
          "bytes\n",
          Seconds(start) * 1e3, static_cast<unsigned long long>(files.written - before));
    }
  }

  {
    // As the engine does it: the snapshot taken at a barrier (AsyncSnapshotScope: a reference
    // in the operator bytes, the files written afterwards) goes into a checkpoint of a state dir
    // through CheckpointStorage; the restore verifies the checkpoint (metadata, every file's size
    // and CRC-32C), reads the operator bytes and resolves the reference in a
    // SnapshotRestoreScope, like SubtaskCheckpoints::RestoreMembers.
    auto b = Make(StateBackendKind::kRocksDb, cache, work.string());
    auto* blobs = b->CreateValueState<int64_t, std::string>("blobs");
    const uint64_t n = restore_mb * 1024;
    std::string value(1024, 'x');
    for (uint64_t k = 0; k < n; ++k) {
      value[k % value.size()] = static_cast<char>('a' + k % 26);
      blobs->Put(static_cast<int64_t>(k), value);
    }
    JobCheckpointInfo info;
    info.max_parallelism = kDefaultMaxParallelism;
    info.operators.push_back(OperatorParallelism{"op", 1});
    auto storage = CheckpointStorage::Open(
        CheckpointStorageOptions{(work / "state").string(), 1, {}, {}}, info);
    Check(storage.ok() ? Status::Ok() : storage.status(), "checkpoint storage");
    std::string op_bytes;
    std::vector<std::unique_ptr<PendingSnapshot>> pending;
    {
      AsyncSnapshotScope scope(1, "op-0.snap");
      BinaryWriter w;
      b->SnapshotState(&w);
      Check(scope.status(), "snapshot");
      op_bytes = w.Release();
      pending = scope.TakePending();
    }
    OperatorSnapshot snap;
    snap.operator_name = "op";
    snap.key_group_first = 0;
    snap.key_group_end = kDefaultMaxParallelism;
    auto own = (*storage)->WriteSnapshotFile(1, "op-0.snap", op_bytes);
    Check(own.ok() ? Status::Ok() : own.status(), "snapshot write");
    snap.files.push_back(*own);
    CheckpointStorageSink sink(storage->get(), 1);
    for (auto& p : pending) {
      auto files = p->Write(&sink);
      Check(files.ok() ? Status::Ok() : files.status(), "snapshot write");
      for (const StoredFile& f : *files) snap.files.push_back(ToSnapshotFile(f));
    }
    pending.clear();
    TaskAck ack;
    ack.checkpoint_id = 1;
    ack.snapshots.push_back(snap);
    Check((*storage)->Finalize(1, {ack}), "checkpoint metadata");
    b.reset();

    auto r = Make(StateBackendKind::kRocksDb, cache, work.string());
    auto* rb = r->CreateValueState<int64_t, std::string>("blobs");
    auto start = std::chrono::steady_clock::now();
    double cpu = CpuSeconds();
    auto point = VerifyCheckpoint((*storage)->CheckpointPath(1));
    Check(point.ok() ? Status::Ok() : point.status(), "verify checkpoint");
    const OperatorSnapshot& restored = point->metadata.snapshots.at(0);
    auto bytes = ReadRestoreFile(*point, restored.files.at(0));
    Check(bytes.ok() ? Status::Ok() : bytes.status(), "restore");
    RestorePointSource source(&*point);
    std::vector<StoredFile> files;
    for (const SnapshotFile& f : restored.files) files.push_back(ToStoredFile(f));
    {
      SnapshotRestoreScope scope(&source, std::move(files));
      BinaryReader reader(*bytes);
      Check(r->RestoreState(&reader), "restore");
    }
    double s = Seconds(start);
    std::printf("restore_rocksdb_cpu_s %.2f cpu-s\n", CpuSeconds() - cpu);
    if (rb->Get(static_cast<int64_t>(n - 1)) == nullptr)
      Check(Status::Internal("last key missing"), "restore");
    std::printf(
        "restore_rocksdb_mb %llu MB\nrestore_rocksdb_s %.2f s\nrestore_rocksdb_mb_per_s %.1f "
        "MB/s\n",
        static_cast<unsigned long long>(restore_mb), s, restore_mb / s);
  }
  fs::remove_all(work);
  return 0;
}
