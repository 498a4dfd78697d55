// rocksdb backend specifics: state larger than the cache, incremental snapshots through the
// checkpoint storage (shared SST files, retention), corrupt files, and asynchronous snapshots of
// both kinds while the subtask keeps processing.

#include <filesystem>
#include <fstream>
#include <future>
#include <set>

#include "backend_test_util.h"
#include "flow/runtime/state/checkpoint_storage_sink.h"

namespace flow::rt {
namespace {

namespace fs = std::filesystem;
using test::MakeBackend;

struct TempDir {
  TempDir() {
    path = test::TestTmpDir() + "/flow-state-test-" + std::to_string(getpid()) + "-" +
           std::to_string(counter++);
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string path;
  static inline int counter = 0;
};

TEST(RocksDbBackendTest, StateLargerThanTheCacheRoundTrips) {
  constexpr int64_t kKeys = 200'000;
  constexpr size_t kCache = 1000;
  auto b = MakeBackend(StateBackendKind::kRocksDb, KeyGroupSpan::All(), kCache);
  auto* counts = b->CreateValueState<int64_t, int64_t>("counts");
  auto* lists = b->CreateListState<std::string, int64_t>("lists");
  for (int round = 0; round < 2; ++round) {
    for (int64_t k = 0; k < kKeys; ++k) counts->GetOrInsert(k) += k + round;
    // Appended, not "k" + ...: GCC 12 warns falsely (-Wrestrict) on that form here.
    for (int64_t k = 0; k < 20'000; ++k)
      lists->Add(std::string("k").append(std::to_string(k)), k * round);
  }
  // Bounded: the cache is checked every capacity/8 insertions.
  EXPECT_LE(counts->cached(), kCache + kCache / 8 + 1);
  EXPECT_LE(lists->cached(), kCache + kCache / 8 + 1);
  EXPECT_EQ(b->TotalEntries(), static_cast<size_t>(kKeys + 20'000));

  test::MemoryFiles files;
  auto w = test::SnapshotNow(b.get(), 1, "big", &files);
  ASSERT_FALSE(w.empty());
  auto r = MakeBackend(StateBackendKind::kRocksDb, KeyGroupSpan::All(), kCache);
  auto* rc = r->CreateValueState<int64_t, int64_t>("counts");
  auto* rl = r->CreateListState<std::string, int64_t>("lists");
  ASSERT_TRUE(r->RestoreFrom(w[0], &files).ok());
  for (int64_t k = 0; k < kKeys; ++k) {
    int64_t* v = rc->Get(k);
    ASSERT_NE(v, nullptr) << k;
    ASSERT_EQ(*v, 2 * k + 1) << k;
  }
  for (int64_t k = 0; k < 20'000; ++k) {
    auto* l = rl->Get("k" + std::to_string(k));
    ASSERT_NE(l, nullptr);
    ASSERT_EQ(*l, (std::vector<int64_t>{0, k}));
  }
  EXPECT_LE(rc->cached(), kCache + kCache / 8 + 1 + kKeys);  // Get loads; insertions evict
}

// Reads load into the cache without evicting (earlier pointers stay valid); the next watermark
// trims the cache back to its capacity.
TEST(RocksDbBackendTest, ReadsGrowTheCacheUntilTheWatermarkTrimsIt) {
  auto b = MakeBackend(StateBackendKind::kRocksDb, KeyGroupSpan::All(), 100);
  auto* v = b->CreateValueState<int64_t, int64_t>("v");
  for (int64_t k = 0; k < 5000; ++k) v->Put(k, k * 3);
  std::vector<int64_t*> pointers;
  for (int64_t k = 0; k < 5000; ++k) pointers.push_back(v->Get(k));
  EXPECT_GT(v->cached(), 4000u);
  for (int64_t k = 0; k < 5000; ++k) {
    ASSERT_NE(pointers[k], nullptr);
    ASSERT_EQ(*pointers[k], k * 3);  // none was evicted under the reader
  }
  b->AdvanceWatermark(1);
  EXPECT_LE(v->cached(), 100u);
  for (int64_t k = 0; k < 5000; ++k) ASSERT_EQ(*v->Get(k), k * 3);
}

std::set<std::string> SharedNames(const std::vector<StoredFile>& files) {
  std::set<std::string> out;
  for (const StoredFile& f : files) {
    if (f.shared) out.insert(f.name);
  }
  return out;
}

JobCheckpointInfo TestJob() {
  JobCheckpointInfo job;
  job.max_parallelism = kDefaultMaxParallelism;
  job.operators.push_back(OperatorParallelism{"op", 1});
  return job;
}

Status Finalize(CheckpointStorage* storage, int64_t id, const std::vector<StoredFile>& files) {
  OperatorSnapshot snap;
  snap.operator_name = "op";
  snap.key_group_end = kDefaultMaxParallelism;
  for (const StoredFile& f : files) snap.files.push_back(ToSnapshotFile(f));
  TaskAck ack;
  ack.checkpoint_id = id;
  ack.snapshots.push_back(snap);
  return storage->Finalize(id, {ack});
}

// A second checkpoint after a small change writes only the new SST files; retention keeps the
// shared files a retained checkpoint still lists.
TEST(RocksDbBackendTest, SecondCheckpointCopiesOnlyNewSstFiles) {
  TempDir dir;
  auto storage = CheckpointStorage::Open(CheckpointStorageOptions{dir.path, 1, {}, {}}, TestJob());
  ASSERT_TRUE(storage.ok()) << storage.status().ToString();
  auto b = MakeBackend(StateBackendKind::kRocksDb, KeyGroupSpan::All(), 100);
  auto* v = b->CreateValueState<int64_t, std::string>("v");
  for (int64_t k = 0; k < 20'000; ++k) v->Put(k, std::string(50, 'a' + k % 26));

  struct Counting : CheckpointStorageSink {
    using CheckpointStorageSink::CheckpointStorageSink;
    Result<StoredFile> WriteShared(std::string_view name, std::string_view bytes) override {
      written.insert(std::string(name));
      return CheckpointStorageSink::WriteShared(name, bytes);
    }
    std::set<std::string> written;
  };
  Counting sink1(storage->get(), 1);
  auto f1 = test::SnapshotNow(b.get(), 1, "op-0.snap", &sink1);
  ASSERT_TRUE(Finalize(storage->get(), 1, f1).ok());
  auto shared1 = SharedNames(f1);
  ASSERT_FALSE(shared1.empty());
  EXPECT_EQ(sink1.written, shared1);

  for (int64_t k = 0; k < 10; ++k) v->Put(k, "changed");
  Counting sink2(storage->get(), 2);
  auto f2 = test::SnapshotNow(b.get(), 2, "op-0.snap", &sink2);
  ASSERT_TRUE(Finalize(storage->get(), 2, f2).ok());
  auto shared2 = SharedNames(f2);
  std::set<std::string> fresh;
  for (const std::string& n : shared2) {
    if (!shared1.contains(n)) fresh.insert(n);
  }
  EXPECT_FALSE(fresh.empty());                      // the change is in a new SST
  EXPECT_EQ(sink2.written, fresh);                  // ... and only new SSTs were copied
  EXPECT_LT(sink2.written.size(), shared2.size());  // the old ones are referenced again

  // retained = 1: chk-1 is gone, every file chk-2 lists is still there.
  EXPECT_FALSE(fs::exists(dir.path + "/chk-1"));
  for (const std::string& n : shared2) EXPECT_TRUE(fs::exists(dir.path + "/shared/" + n)) << n;

  RestorePoint point{*OpenCheckpointStore(dir.path), "chk-2", dir.path + "/chk-2", {}};
  RestorePointSource source(&point);
  auto r = MakeBackend(StateBackendKind::kRocksDb, KeyGroupSpan::All(), 100);
  auto* rv = r->CreateValueState<int64_t, std::string>("v");
  ASSERT_TRUE(r->RestoreFrom(f2[0], &source).ok());
  for (int64_t k = 0; k < 20'000; ++k) {
    ASSERT_NE(rv->Get(k), nullptr);
    EXPECT_EQ(*rv->Get(k), k < 10 ? std::string("changed") : std::string(50, 'a' + k % 26));
  }
}

// A savepoint holds copies of the shared SST files: it restores after the originals are gone.
TEST(RocksDbBackendTest, SavepointRestoresWithoutTheSharedDirectory) {
  TempDir dir;
  auto storage = CheckpointStorage::Open(CheckpointStorageOptions{dir.path, 3, {}, {}}, TestJob());
  ASSERT_TRUE(storage.ok());
  auto b = MakeBackend(StateBackendKind::kRocksDb, KeyGroupSpan::All(), 10);
  auto* v = b->CreateValueState<int64_t, int64_t>("v");
  for (int64_t k = 0; k < 3000; ++k) v->Put(k, k * 7);
  CheckpointStorageSink sink(storage->get(), 1);
  auto files = test::SnapshotNow(b.get(), 1, "op-0.snap", &sink);
  ASSERT_FALSE(SharedNames(files).empty());
  ASSERT_TRUE(Finalize(storage->get(), 1, files).ok());
  ASSERT_TRUE((*storage)->CreateSavepoint(1, "keep").ok());
  fs::remove_all(dir.path + "/shared");
  fs::remove_all(dir.path + "/chk-1");

  auto point = VerifyCheckpoint(dir.path + "/sp-keep");
  ASSERT_TRUE(point.ok()) << point.status().ToString();
  RestorePointSource source(&*point);
  auto r = MakeBackend(StateBackendKind::kRocksDb, KeyGroupSpan::All(), 10);
  auto* rv = r->CreateValueState<int64_t, int64_t>("v");
  Status s = r->RestoreFrom(files[0], &source);
  ASSERT_TRUE(s.ok()) << s.ToString();
  for (int64_t k = 0; k < 3000; ++k) {
    ASSERT_NE(rv->Get(k), nullptr) << k;
    EXPECT_EQ(*rv->Get(k), k * 7);
  }
}

TEST(RocksDbBackendTest, CorruptSstOrSnapshotFileIsAClearError) {
  TempDir dir;
  auto storage = CheckpointStorage::Open(CheckpointStorageOptions{dir.path, 3, {}, {}}, TestJob());
  ASSERT_TRUE(storage.ok());
  auto b = MakeBackend(StateBackendKind::kRocksDb, KeyGroupSpan::All(), 10);
  auto* v = b->CreateValueState<int64_t, int64_t>("v");
  for (int64_t k = 0; k < 1000; ++k) v->Put(k, k);
  CheckpointStorageSink sink(storage->get(), 1);
  auto files = test::SnapshotNow(b.get(), 1, "op-0.snap", &sink);
  ASSERT_GE(files.size(), 2u);
  RestorePoint point{*OpenCheckpointStore(dir.path), "chk-1", dir.path + "/chk-1", {}};
  RestorePointSource source(&point);

  auto flip = [](const std::string& path, size_t at) {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(at));
    char c = 0;
    f.get(c);
    f.seekp(static_cast<std::streamoff>(at));
    f.put(static_cast<char>(c ^ 0x5a));
  };
  const StoredFile& sst = files[1];
  ASSERT_TRUE(sst.shared);
  flip(dir.path + "/shared/" + sst.name, sst.size / 2);
  auto r1 = MakeBackend(StateBackendKind::kRocksDb, KeyGroupSpan::All());
  r1->CreateValueState<int64_t, int64_t>("v");
  Status s = r1->RestoreFrom(files[0], &source);
  EXPECT_EQ(s.code(), StatusCode::kCorruption) << s.ToString();
  EXPECT_NE(s.message().find(sst.name), std::string::npos) << s.ToString();
  flip(dir.path + "/shared/" + sst.name, sst.size / 2);  // repaired

  flip(dir.path + "/chk-1/op-0.snap", 30);
  auto r2 = MakeBackend(StateBackendKind::kRocksDb, KeyGroupSpan::All());
  r2->CreateValueState<int64_t, int64_t>("v");
  s = r2->RestoreFrom(files[0], &source);
  EXPECT_EQ(s.code(), StatusCode::kCorruption) << s.ToString();
  EXPECT_NE(s.message().find("op-0.snap"), std::string::npos) << s.ToString();

  // The snapshot's own checksum catches damage even when the source does not verify.
  test::MemoryFiles mem;
  auto mf = test::SnapshotNow(b.get(), 2, "own", &mem);
  mem.verify = false;
  (*mem.Bytes("own"))[40] ^= 1;
  auto r3 = MakeBackend(StateBackendKind::kRocksDb, KeyGroupSpan::All());
  r3->CreateValueState<int64_t, int64_t>("v");
  s = r3->RestoreFrom(mf[0], &mem);
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  EXPECT_NE(s.message().find("own"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("checksum"), std::string::npos) << s.ToString();

  // Truncated anywhere: an error, never a crash.
  const std::string whole = *mem.Bytes("own");
  for (size_t cut = 0; cut < whole.size(); cut += whole.size() / 16 + 1) {
    *mem.Bytes("own") = whole.substr(0, cut);
    auto rt = MakeBackend(StateBackendKind::kRocksDb, KeyGroupSpan::All());
    rt->CreateValueState<int64_t, int64_t>("v");
    EXPECT_EQ(rt->RestoreFrom(mf[0], &mem).code(), StatusCode::kCorruption) << "cut " << cut;
  }
  *mem.Bytes("own") = whole;

  // A rocksdb snapshot is refused by a heap backend with a reason.
  auto heap = MakeBackend(StateBackendKind::kHeap, KeyGroupSpan::All());
  heap->CreateValueState<int64_t, int64_t>("v");
  (*mem.Bytes("own"))[40] ^= 1;
  s = heap->RestoreFrom(mf[0], &mem);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("--state-backend rocksdb"), std::string::npos) << s.ToString();
}

// A sink that blocks every write until released, and can fail the snapshot's own file.
class SlowSink final : public SnapshotFileSink {
 public:
  explicit SlowSink(test::MemoryFiles* inner)
      : inner_(inner), gate_(release_.get_future().share()) {}
  Result<StoredFile> WriteOwn(std::string_view n, std::string_view b) override {
    Wait();
    return fail_ ? Result<StoredFile>(Status::IoError("disk full writing " + std::string(n)))
                 : inner_->WriteOwn(n, b);
  }
  Result<StoredFile> WriteShared(std::string_view n, std::string_view b) override {
    Wait();
    return inner_->WriteShared(n, b);
  }
  bool HasShared(std::string_view n) override { return inner_->HasShared(n); }
  void Release() { release_.set_value(); }
  std::atomic<bool> entered{false};
  bool fail_ = false;

 private:
  void Wait() {
    entered = true;
    gate_.wait();
  }
  test::MemoryFiles* inner_;
  std::promise<void> release_;
  std::shared_future<void> gate_;
};

class AsyncSnapshotTest : public ::testing::TestWithParam<StateBackendKind> {};

TEST_P(AsyncSnapshotTest, ProcessingContinuesWhileTheWriterIsSlow) {
  auto b = MakeBackend(GetParam(), KeyGroupSpan::All(), 200);
  auto* counts = b->CreateValueState<int64_t, int64_t>("counts");
  std::map<int64_t, int64_t> at_barrier;
  for (int64_t k = 0; k < 5000; ++k) counts->GetOrInsert(k % 1000) += 1;
  for (int64_t k = 0; k < 1000; ++k) at_barrier[k] = 5;

  test::MemoryFiles files;
  // The backend's write hook holds the writer thread before its first file until released.
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::atomic<bool> entered{false};
  b->SetWriteHookForTest([&](const std::string&) {
    entered = true;
    gate.wait();
  });
  AsyncSnapshotWriter writer;
  std::promise<Result<std::vector<StoredFile>>> done;
  auto pending = b->SnapshotAsync(1, "op-0.snap");
  ASSERT_TRUE(pending.ok());
  writer.Submit(std::move(pending).value(), &files,
                [&done](Result<std::vector<StoredFile>> r) { done.set_value(std::move(r)); });
  while (!entered) std::this_thread::yield();
  // The writer is blocked inside the sink; the task keeps processing records meanwhile.
  for (int64_t k = 0; k < 20'000; ++k) counts->GetOrInsert(k % 3000) += 100;
  EXPECT_EQ(writer.pending(), 1u);
  EXPECT_EQ(*counts->Get(7), 5 + 700);
  release.set_value();
  auto result = done.get_future().get();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  writer.Drain();
  EXPECT_EQ(writer.pending(), 0u);

  // The checkpoint holds the state as of the barrier, not the later updates.
  auto r = MakeBackend(GetParam(), KeyGroupSpan::All(), 200);
  auto* rc = r->CreateValueState<int64_t, int64_t>("counts");
  ASSERT_TRUE(r->RestoreFrom((*result)[0], &files).ok());
  EXPECT_EQ(r->TotalEntries(), at_barrier.size());
  for (const auto& [k, x] : at_barrier) {
    ASSERT_NE(rc->Get(k), nullptr);
    EXPECT_EQ(*rc->Get(k), x);
  }
}

TEST_P(AsyncSnapshotTest, AFailingWriterFailsThatSnapshotWithAReason) {
  auto b = MakeBackend(GetParam(), KeyGroupSpan::All());
  b->CreateValueState<int64_t, int64_t>("v")->Put(1, 1);
  test::MemoryFiles files;
  SlowSink sink(&files);
  sink.fail_ = true;
  sink.Release();
  AsyncSnapshotWriter writer;
  std::promise<Status> done;
  writer.Submit(std::move(b->SnapshotAsync(1, "op-0.snap")).value(), &sink,
                [&done](Result<std::vector<StoredFile>> r) {
                  done.set_value(r.ok() ? Status::Ok() : r.status());
                });
  Status s = done.get_future().get();
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_NE(s.message().find("disk full writing op-0.snap"), std::string::npos) << s.ToString();
}

INSTANTIATE_TEST_SUITE_P(Kinds, AsyncSnapshotTest,
                         ::testing::Values(StateBackendKind::kHeap, StateBackendKind::kRocksDb),
                         test::KindName);

}  // namespace
}  // namespace flow::rt
