// Checkpoints inside one process: a job with a state dir takes checkpoints whose operator state
// matches the source position of the same checkpoint, and a job restored from one of them
// continues where it left off.

#include <gtest/gtest.h>

#include <unistd.h>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "flow/runtime/checkpoint/recovery.h"
#include "flow/runtime/engine/job.h"
#include "test_util.h"

namespace flow::rt {
namespace {

namespace fs = std::filesystem;
constexpr uint64_t kRecords = 3000;

// Counts the records it saw; the count is its whole state. Restoring it takes restore_ms.
class CountingOperator final : public OneInputOperator<int64_t, int64_t> {
 public:
  CountingOperator(std::atomic<int64_t>* final_count, int restore_ms)
      : final_count_(final_count), restore_ms_(restore_ms) {}
  Status ProcessBatch(const Batch<int64_t>& batch, Output<int64_t>&) override {
    count_ += batch.size();
    return Status::Ok();
  }
  Status SnapshotState(BinaryWriter* out) override {
    out->PutU64(count_);
    return Status::Ok();
  }
  Status RestoreState(BinaryReader* in) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(restore_ms_));
    return in->GetU64(&count_);
  }
  Status Finish(Output<int64_t>&) override {
    final_count_->store(static_cast<int64_t>(count_));
    return Status::Ok();
  }

 private:
  std::atomic<int64_t>* final_count_;
  int restore_ms_;
  uint64_t count_ = 0;
};

constexpr int kRestoreMs = 300;

// Runs source (parallelism 1, slowed down so checkpoints happen) -> rebalance -> counter -> sink.
// *restore_ms: the job's flow_restore_duration_ms, summed over its subtasks.
Status RunCountingJob(const CheckpointFlags& flags, std::atomic<int64_t>* final_count,
                      int64_t* restore_ms) {
  JobOptions options;
  options.checkpoint = flags;
  Job job(options);
  auto gen = [](uint64_t i, int64_t* out) {
    if (i >= kRecords) return false;
    if (i % 30 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    *out = static_cast<int64_t>(i);
    return true;
  };
  job.Source<int64_t>("numbers", GeneratorSourceFactory<int64_t>(gen),
                      WatermarkSpec{.mode = TimeMode::kNone})
      .Rebalance()
      .Then<int64_t>(
          "count",
          [final_count] { return std::make_unique<CountingOperator>(final_count, kRestoreMs); })
      .Sink("sink", CollectingSinkFactory(std::make_shared<Collected<int64_t>>()));
  Status status = testing::ExecuteWithWatchdog(job);
  *restore_ms = job.metrics().Sum(kMetricRestoreMs);
  return status;
}

uint64_t U64Of(std::string_view bytes) {
  BinaryReader r(bytes);
  uint64_t v = 0;
  EXPECT_TRUE(r.GetU64(&v).ok());
  return v;
}

TEST(CheckpointWiringTest, StateMatchesSourcePositionAndRestoreResumes) {
  fs::path dir = fs::temp_directory_path() / ("flow_ckpt_wiring_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  CheckpointFlags flags;
  flags.state_dir = dir.string();
  flags.options.interval_ms = 20;
  flags.retained = 100;  // keep them all to look at
  std::atomic<int64_t> final_count{0};
  int64_t restore_ms = -1;
  ASSERT_TRUE(RunCountingJob(flags, &final_count, &restore_ms).ok());
  EXPECT_EQ(final_count.load(), static_cast<int64_t>(kRecords));
  EXPECT_EQ(restore_ms, 0) << "nothing was restored";

  // Every complete checkpoint taken while the source ran: count state == records emitted.
  std::optional<RestorePoint> mid_run;
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (ParseCheckpointDir(entry.path().filename().string()) < 0) continue;
    if (!fs::exists(entry.path() / "_metadata")) continue;
    auto point = VerifyCheckpoint(entry.path().string());
    ASSERT_TRUE(point.ok()) << point.status().ToString();
    auto sources = SnapshotsOf(point->metadata, "numbers");
    auto counts = SnapshotsOf(point->metadata, "count");
    ASSERT_EQ(sources.size(), 1u);
    ASSERT_EQ(counts.size(), 1u);
    if (sources[0]->finished || counts[0]->files.empty()) continue;
    uint64_t position = U64Of(sources[0]->source_position);  // the next index to generate
    auto bytes = ReadRestoreFile(*point, counts[0]->files[0]);
    ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
    EXPECT_EQ(U64Of(*bytes), position) << entry.path();
    ++checked;
    if (position > 0 && position < kRecords) mid_run = *point;
  }
  ASSERT_GT(checked, 0) << "no checkpoint was taken while the source ran";
  ASSERT_TRUE(mid_run.has_value());

  // Restore that checkpoint in a job without checkpoints: the count continues from the state,
  // the source from its position, so the total is exact (a fresh start or a lost position would
  // give other totals).
  CheckpointFlags restore;
  restore.restore = mid_run->path;
  std::atomic<int64_t> restored_count{0};
  ASSERT_TRUE(RunCountingJob(restore, &restored_count, &restore_ms).ok());
  EXPECT_EQ(restored_count.load(), static_cast<int64_t>(kRecords));
  // The restore metric saw the counter's slow restore.
  EXPECT_GE(restore_ms, kRestoreMs);
  EXPECT_LT(restore_ms, 60'000);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace flow::rt
