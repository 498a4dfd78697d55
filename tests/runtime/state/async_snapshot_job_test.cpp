// Asynchronous, incremental keyed-state snapshots inside a running job (rocksdb backend): the
// subtask keeps processing while its snapshot is written, later checkpoints reuse the SST files
// of earlier ones, retention keeps exactly the shared files still referenced, a checkpoint whose
// write fails is declined and later ones complete, and restores give the exact state.

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "../engine/test_util.h"
#include "flow/runtime/checkpoint/recovery.h"
#include "flow/runtime/engine/job.h"
#include "flow/runtime/engine/task.h"
#include "flow/runtime/state/keyed_state_backend.h"

namespace flow::rt {
namespace {

namespace fs = std::filesystem;

// Records 0..n-1; record i has key KeyOf(i). The first kDistinct records have distinct keys (a
// state of kDistinct entries), later ones cycle through kHot keys, so once the distinct keys are
// in, each checkpoint adds little new state.
constexpr uint64_t kDistinct = 20000;
constexpr int64_t kHot = 10;
int64_t KeyOf(uint64_t i) {
  return i < kDistinct ? static_cast<int64_t>(i) : static_cast<int64_t>(i % kHot);
}

std::map<int64_t, int64_t> ExpectedCounts(uint64_t n) {
  std::map<int64_t, int64_t> m;
  for (uint64_t i = 0; i < n; ++i) m[KeyOf(i)] += 1;
  return m;
}

// Counts records per key in a ValueState; `processed` is visible to the test while it runs.
class KeyedCounter final : public OneInputOperator<int64_t, int64_t> {
 public:
  KeyedCounter(std::map<int64_t, int64_t>* out, std::atomic<uint64_t>* processed)
      : out_(out), processed_(processed) {}
  Status Open(OperatorContext& ctx) override {
    if (ctx.state_backend == nullptr) return Status::Internal("no state backend options");
    backend_ = std::make_unique<KeyedStateBackend>(KeyGroupSpan::All(), kDefaultMaxParallelism,
                                                   nullptr, *ctx.state_backend);
    if (backend_->kind() != StateBackendKind::kRocksDb)
      return Status::Internal("expected the rocksdb backend");
    counts_ = backend_->CreateValueState<int64_t, int64_t>("counts");
    return Status::Ok();
  }
  Status ProcessBatch(const Batch<int64_t>& batch, Output<int64_t>&) override {
    for (size_t i = 0; i < batch.size(); ++i) counts_->GetOrInsert(batch.records[i]) += 1;
    processed_->fetch_add(batch.size());
    return Status::Ok();
  }
  Status SnapshotState(BinaryWriter* out) override {
    backend_->SnapshotState(out);
    return Status::Ok();
  }
  Status RestoreState(BinaryReader* in) override { return backend_->RestoreState(in); }
  Status Finish(Output<int64_t>&) override {
    counts_->ForEach([this](const int64_t& k, int64_t& n) { (*out_)[k] = n; });
    return Status::Ok();
  }

 private:
  std::unique_ptr<KeyedStateBackend> backend_;
  ValueState<int64_t, int64_t>* counts_ = nullptr;
  std::map<int64_t, int64_t>* out_;
  std::atomic<uint64_t>* processed_;
};

// source (slowed down so checkpoints happen while it runs) -> rebalance -> count -> sink.
Status RunJob(const CheckpointFlags& flags, uint64_t records, std::map<int64_t, int64_t>* counts,
              std::atomic<uint64_t>* processed) {
  JobOptions options;
  options.checkpoint = flags;
  options.state_backend = "rocksdb";
  options.state_cache_entries = 8;  // nearly all keys live only in RocksDB
  Job job(options);
  auto gen = [records](uint64_t i, int64_t* out) {
    if (i >= records) return false;
    if (i % 100 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    *out = KeyOf(i);
    return true;
  };
  job.Source<int64_t>("numbers", GeneratorSourceFactory<int64_t>(gen),
                      WatermarkSpec{.mode = TimeMode::kNone})
      .Rebalance()
      .Then<int64_t>(
          "count",
          [counts, processed] { return std::make_unique<KeyedCounter>(counts, processed); })
      .Sink("sink", CollectingSinkFactory(std::make_shared<Collected<int64_t>>()));
  return testing::ExecuteWithWatchdog(job);
}

// The same job over an endless source, stopped (not drained) once `min_complete` checkpoints
// completed and the two newest hold more than `min_position` records, so they hold live state.
Status RunUntilCheckpoints(const CheckpointFlags& flags, size_t min_complete, uint64_t min_position,
                           std::map<int64_t, int64_t>* counts) {
  JobOptions options;
  options.checkpoint = flags;
  options.state_backend = "rocksdb";
  options.state_cache_entries = 8;
  Job job(options);
  std::atomic<uint64_t> processed{0};
  auto gen = [](uint64_t i, int64_t* out) {
    if (i % 100 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    *out = KeyOf(i);
    return true;
  };
  job.Source<int64_t>("numbers", GeneratorSourceFactory<int64_t>(gen),
                      WatermarkSpec{.mode = TimeMode::kNone})
      .Rebalance()
      .Then<int64_t>(
          "count",
          [counts, &processed] { return std::make_unique<KeyedCounter>(counts, &processed); })
      .Sink("sink", CollectingSinkFactory(std::make_shared<Collected<int64_t>>()));
  auto run = std::async(std::launch::async, [&job] { return job.Execute(); });
  const fs::path dir(flags.state_dir);
  // The newest checkpoint id of any state when `min_position` records had been counted: ids two
  // and more above it were triggered later (one checkpoint in flight at a time), so they hold
  // more than `min_position` records however fast the machine is.
  int64_t id_at_position = -1;
  for (int i = 0; i < 6000; ++i) {  // bounds a hang only
    if (run.wait_for(std::chrono::milliseconds(10)) == std::future_status::ready) break;
    // Retention deletes older checkpoints: the newest complete id counts them.
    std::error_code ec;
    int64_t newest = 0, newest_any = 0;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const int64_t id = ParseCheckpointDir(e.path().filename().string());
      if (id < 0) continue;
      newest_any = std::max(newest_any, id);
      if (fs::exists(e.path() / "_metadata")) newest = std::max(newest, id);
    }
    if (id_at_position < 0 && processed.load() > min_position) id_at_position = newest_any;
    if (id_at_position >= 0 &&
        newest >= std::max<int64_t>(static_cast<int64_t>(min_complete), id_at_position + 3)) {
      break;
    }
  }
  job.RequestStop();
  return run.get();
}

struct Checkpoint {
  int64_t id = 0;
  std::string path;
  RestorePoint point;
  uint64_t position = 0;  // the source's
};

// Complete checkpoints, oldest first.
std::vector<Checkpoint> CompleteCheckpoints(const fs::path& dir) {
  std::vector<Checkpoint> out;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (ParseCheckpointDir(entry.path().filename().string()) < 0) continue;
    auto point = VerifyCheckpoint(entry.path().string());
    if (!point.ok()) continue;
    Checkpoint c;
    c.id = point->metadata.checkpoint_id;
    c.path = entry.path().string();
    auto sources = SnapshotsOf(point->metadata, "numbers");
    if (sources.size() == 1 && !sources[0]->finished) {
      BinaryReader r(sources[0]->source_position);
      EXPECT_TRUE(r.GetU64(&c.position).ok());
    }
    c.point = std::move(point).value();
    out.push_back(std::move(c));
  }
  std::sort(out.begin(), out.end(),
            [](const Checkpoint& a, const Checkpoint& b) { return a.id < b.id; });
  return out;
}

const OperatorSnapshot* CountSnapshot(const CheckpointMetadata& m) {
  auto snaps = SnapshotsOf(m, "count");
  return snaps.size() == 1 && !snaps[0]->finished ? snaps[0] : nullptr;
}

class AsyncSnapshotJobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("flow_async_snapshot_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    flags_.state_dir = dir_.string();
    flags_.options.interval_ms = 20;
    flags_.retained = 1000;  // keep them all to look at
  }
  void TearDown() override {
    SetSnapshotWriteHookForTest(nullptr);
    fs::remove_all(dir_);
  }
  fs::path dir_;
  CheckpointFlags flags_;
};

TEST_F(AsyncSnapshotJobTest, RecordsKeepFlowingWhileASnapshotIsWritten) {
  constexpr uint64_t kRecords = 60000;
  std::atomic<uint64_t> processed{0};
  std::mutex mu;
  std::condition_variable cv;
  int64_t held_id = 0;  // the checkpoint whose write is held back
  uint64_t processed_when_held = 0;
  bool released = false;
  SetSnapshotWriteHookForTest([&](int64_t id, const std::string& task) {
    if (task != "count") return;
    std::unique_lock lock(mu);
    if (held_id != 0) return;
    held_id = id;
    processed_when_held = processed.load();
    cv.notify_all();
    cv.wait(lock, [&] { return released; });
  });
  std::map<int64_t, int64_t> counts;
  Status result;
  std::thread job([&] { result = RunJob(flags_, kRecords, &counts, &processed); });
  bool advanced = false;
  bool completed_while_held = false;
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return held_id != 0; }))
        << "no checkpoint reached its asynchronous write";
    // The task thread must keep consuming records while its snapshot write is blocked. Not a
    // timing check: the wait only bounds a hang.
    const uint64_t target = processed_when_held + 1000;
    for (int i = 0; i < 3000 && !advanced; ++i) {
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      advanced = processed.load() >= target;
      lock.lock();
    }
    completed_while_held = fs::exists(dir_ / CheckpointDirName(held_id) / "_metadata");
    released = true;
    cv.notify_all();
  }
  job.join();
  ASSERT_TRUE(result.ok()) << result.ToString();
  EXPECT_TRUE(advanced) << "records stopped flowing while the snapshot was written ("
                        << processed.load() << " processed, " << processed_when_held
                        << " when the write began)";
  EXPECT_FALSE(completed_while_held)
      << "checkpoint " << held_id << " completed before its write finished";
  EXPECT_EQ(counts, ExpectedCounts(kRecords));
  // Once released, the held checkpoint completes and its state is that of its source position.
  std::optional<Checkpoint> held;
  for (Checkpoint& c : CompleteCheckpoints(dir_)) {
    if (c.id == held_id) held = std::move(c);
  }
  ASSERT_TRUE(held.has_value()) << "checkpoint " << held_id
                                << " did not complete after its write was released";
  ASSERT_GT(held->position, 0u);
  CheckpointFlags restore;
  restore.restore = held->path;
  std::map<int64_t, int64_t> restored;
  std::atomic<uint64_t> ignored{0};
  ASSERT_TRUE(RunJob(restore, kRecords, &restored, &ignored).ok());
  EXPECT_EQ(restored, ExpectedCounts(kRecords));
  EXPECT_EQ(ignored.load(), kRecords - held->position) << "the restored run resumed elsewhere";
}

TEST_F(AsyncSnapshotJobTest, LaterCheckpointsReuseSharedFilesAndRestoreFromTheChain) {
  constexpr uint64_t kRecords = 40000;
  std::atomic<uint64_t> processed{0};
  std::map<int64_t, int64_t> counts;
  ASSERT_TRUE(RunJob(flags_, kRecords, &counts, &processed).ok());
  EXPECT_EQ(counts, ExpectedCounts(kRecords));

  // Two consecutive checkpoints after the distinct keys are in: the second references shared
  // files the first wrote, and what it writes anew is a small part of the state it references.
  std::vector<Checkpoint> chks = CompleteCheckpoints(dir_);
  std::optional<size_t> found;
  uint64_t new_bytes = 0, total_bytes = 0;
  for (size_t i = 1; i < chks.size() && !found; ++i) {
    const Checkpoint& a = chks[i - 1];
    const Checkpoint& b = chks[i];
    if (a.position <= kDistinct || b.position >= kRecords || b.position <= a.position) continue;
    const OperatorSnapshot* sa = CountSnapshot(a.point.metadata);
    const OperatorSnapshot* sb = CountSnapshot(b.point.metadata);
    if (sa == nullptr || sb == nullptr) continue;
    std::set<std::string> before;
    for (const SnapshotFile& f : sa->files) {
      if (f.shared) before.insert(f.name);
    }
    uint64_t fresh = 0, total = 0;
    bool reuses = false;
    for (const SnapshotFile& f : sb->files) {
      total += f.size;
      if (f.shared && before.count(f.name) > 0) {
        reuses = true;
      } else {
        fresh += f.size;
      }
    }
    if (reuses && fresh * 4 < total) {
      found = i;
      new_bytes = fresh;
      total_bytes = total;
    }
  }
  ASSERT_TRUE(found.has_value()) << "no checkpoint reused the SST files of the one before it ("
                                 << chks.size() << " complete checkpoints)";
  EXPECT_GT(total_bytes, 0u);
  EXPECT_LT(new_bytes * 4, total_bytes);

  // The chain restores: the state of a checkpoint built on earlier ones' files is exact.
  const Checkpoint& b = chks[*found];
  CheckpointFlags restore;
  restore.restore = b.path;
  std::map<int64_t, int64_t> restored;
  std::atomic<uint64_t> after{0};
  ASSERT_TRUE(RunJob(restore, kRecords, &restored, &after).ok());
  EXPECT_EQ(restored, ExpectedCounts(kRecords));
  EXPECT_EQ(after.load(), kRecords - b.position);
}

TEST_F(AsyncSnapshotJobTest, RetentionKeepsExactlyTheSharedFilesStillReferenced) {
  flags_.retained = 2;
  std::map<int64_t, int64_t> counts;
  // The older of the two kept checkpoints must hold the whole key space (kDistinct records).
  ASSERT_TRUE(RunUntilCheckpoints(flags_, 12, kDistinct, &counts).ok());
  std::vector<Checkpoint> chks = CompleteCheckpoints(dir_);
  ASSERT_EQ(chks.size(), 2u);
  ASSERT_GT(chks[0].id, 2) << "too few checkpoints for retention to have deleted any";
  ASSERT_GT(chks[0].position, kDistinct) << "stopped before the state was complete";
  std::set<std::string> referenced;
  for (const Checkpoint& c : chks) {
    for (const OperatorSnapshot& s : c.point.metadata.snapshots) {
      for (const SnapshotFile& f : s.files) {
        if (f.shared) referenced.insert(f.name);
      }
    }
  }
  std::set<std::string> stored;
  for (const auto& e : fs::directory_iterator(dir_ / "shared"))
    stored.insert(e.path().filename().string());
  // Every reference resolves (VerifyCheckpoint checked sizes and checksums too) and nothing
  // unreferenced stays behind.
  ASSERT_FALSE(referenced.empty());
  EXPECT_EQ(stored, referenced);
  // The oldest kept checkpoint restores, from files partly written for checkpoints since deleted.
  const uint64_t records = chks[0].position + 5000;
  CheckpointFlags restore;
  restore.restore = chks[0].path;
  std::map<int64_t, int64_t> restored;
  std::atomic<uint64_t> after{0};
  ASSERT_TRUE(RunJob(restore, records, &restored, &after).ok());
  EXPECT_EQ(restored, ExpectedCounts(records));
  EXPECT_EQ(after.load(), 5000u);
}

TEST_F(AsyncSnapshotJobTest, AFailedAsynchronousWriteDeclinesTheCheckpointAndLaterOnesComplete) {
  constexpr uint64_t kRecords = 30000;
  flags_.options.tolerable_failures = 3;  // one declined checkpoint must not restart the job
  std::atomic<int64_t> broken{0};
  // Breaks the storage for the first checkpoint the counter writes: a directory where its
  // snapshot file must go, so writing it fails with an I/O error.
  SetSnapshotWriteHookForTest([&](int64_t id, const std::string& task) {
    if (task != "count") return;
    int64_t none = 0;
    if (!broken.compare_exchange_strong(none, id)) return;
    std::error_code ec;
    fs::create_directories(dir_ / CheckpointDirName(id) / SnapshotFileName("count", 0), ec);
    ASSERT_FALSE(ec) << ec.message();
  });
  std::atomic<uint64_t> processed{0};
  std::map<int64_t, int64_t> counts;
  ::testing::internal::CaptureStderr();
  Status result = RunJob(flags_, kRecords, &counts, &processed);
  std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(result.ok()) << result.ToString();
  EXPECT_EQ(counts, ExpectedCounts(kRecords));
  ASSERT_NE(broken.load(), 0);
  const std::string id = std::to_string(broken.load());
  EXPECT_NE(log.find("checkpoint id=" + id + " result=aborted"), std::string::npos) << log;
  EXPECT_NE(log.find("asynchronous snapshot write failed"), std::string::npos) << log;
  std::vector<Checkpoint> chks = CompleteCheckpoints(dir_);
  for (const Checkpoint& c : chks) EXPECT_NE(c.id, broken.load());
  EXPECT_EQ(log.find("restarting job"), std::string::npos) << log;
  ASSERT_FALSE(chks.empty());
  EXPECT_GT(chks.back().id, broken.load()) << "no checkpoint completed after the failed one";
}

}  // namespace
}  // namespace flow::rt
