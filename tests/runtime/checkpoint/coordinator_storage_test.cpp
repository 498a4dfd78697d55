// The coordinator with the real storage as its finalizer: what tasks write and acknowledge ends up
// as a checkpoint recovery selects; aborted checkpoints leave nothing behind.

#include <signal.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "checkpoint_test_util.h"
#include "flow/runtime/checkpoint/coordinator.h"
#include "flow/runtime/checkpoint/fault_injection.h"
#include "flow/runtime/checkpoint/recovery.h"

namespace flow::rt {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

struct Job {
  explicit Job(const std::string& dir) : storage(test::OpenStorage(dir)) {
    CheckpointOptions o;
    o.interval_ms = 100;
    o.timeout_ms = 1000;
    o.tolerable_failures = 10;
    coordinator = std::make_unique<CheckpointCoordinator>(
        o, std::vector<std::string>{"src#0", "agg#0", "agg#1"}, storage.get(),
        [this] { return now; }, 1, [](const CheckpointReport&) {});
    coordinator->Start();
  }
  // What a task does on kTrigger: write its snapshot file, then acknowledge.
  void TaskAcks(int64_t id, size_t task, const std::string& state) {
    TaskAck ack;
    ack.checkpoint_id = id;
    ack.task = task;
    OperatorSnapshot s;
    if (task == 0) {
      s.operator_name = "src";
      s.source_position = state;
    } else {
      uint32_t sub = static_cast<uint32_t>(task - 1);
      s.operator_name = "agg";
      s.subtask = sub;
      s.key_group_first = sub * 64;
      s.key_group_end = sub * 64 + 64;
      auto f = storage->WriteSnapshotFile(id, SnapshotFileName("agg", sub), state);
      ASSERT_TRUE(f.ok());
      s.files.push_back(*f);
      ack.stats.bytes = f->size;
    }
    ack.snapshots.push_back(s);
    ASSERT_TRUE(coordinator->Acknowledge(ack).ok());
  }

  int64_t now = 0;
  std::unique_ptr<CheckpointStorage> storage;
  std::unique_ptr<CheckpointCoordinator> coordinator;
};

TEST(CoordinatorWithStorage, CompletedCheckpointIsRestorable) {
  TempDir dir;
  Job job(dir.path());
  job.now = 100;
  ASSERT_EQ(job.coordinator->Tick().value_or(-1), 1);
  job.TaskAcks(1, 0, "pos-1");
  job.TaskAcks(1, 1, "left-1");
  EXPECT_FALSE(fs::exists(dir / "chk-1/_metadata"));  // not before the last ack
  job.TaskAcks(1, 2, "right-1");
  EXPECT_EQ(job.coordinator->LastCompletedId(), 1);
  auto sel = SelectRestoreCheckpoint(dir.path(), test::TestJob());
  ASSERT_TRUE(sel.ok());
  ASSERT_TRUE(sel->point);
  EXPECT_EQ(sel->point->metadata.checkpoint_id, 1);
  EXPECT_EQ(SnapshotsOf(sel->point->metadata, "src")[0]->source_position, "pos-1");
  auto plan = PlanKeyedRestore(sel->point->metadata, "agg", 1);
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ((*plan)[0].size(), 128u);
  auto bytes = ReadRestoreFile(*sel->point, (*plan)[0].back().file);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, "right-1");
}

TEST(CoordinatorWithStorage, TimedOutCheckpointIsDiscardedAndPreviousStays) {
  TempDir dir;
  Job job(dir.path());
  job.now = 100;
  ASSERT_EQ(job.coordinator->Tick().value_or(-1), 1);
  for (size_t t = 0; t < 3; ++t) job.TaskAcks(1, t, "s1");
  job.now = 200;
  ASSERT_EQ(job.coordinator->Tick().value_or(-1), 2);
  job.TaskAcks(2, 1, "partial");
  EXPECT_TRUE(fs::exists(dir / "chk-2/agg-0.snap"));
  job.now = 1200;
  job.coordinator->Tick();  // 2 times out; 3 is triggered in the same tick
  EXPECT_FALSE(fs::exists(dir / "chk-2"));
  auto sel = SelectRestoreCheckpoint(dir.path(), test::TestJob());
  ASSERT_TRUE(sel.ok());
  EXPECT_EQ(sel->point->metadata.checkpoint_id, 1);
  EXPECT_TRUE(sel->warnings.empty());
}

TEST(CoordinatorWithStorage, StorageFailureAbortsTheCheckpoint) {
  TempDir dir;
  Job job(dir.path());
  ASSERT_EQ(job.coordinator->Trigger().value(), 1);
  job.TaskAcks(1, 0, "p");
  job.TaskAcks(1, 1, "a");
  job.TaskAcks(1, 2, "b");
  ASSERT_EQ(job.coordinator->Trigger().value(), 2);
  job.TaskAcks(2, 0, "p");
  job.TaskAcks(2, 1, "a");
  // A task acknowledges a file that is gone (e.g. disk trouble): finalisation fails.
  TaskAck ack;
  ack.checkpoint_id = 2;
  ack.task = 2;
  OperatorSnapshot s;
  s.operator_name = "agg";
  s.subtask = 1;
  s.key_group_first = 64;
  s.key_group_end = 128;
  s.files = {{"agg-1.snap", 1, 0, false}};
  ack.snapshots = {s};
  ASSERT_TRUE(job.coordinator->Acknowledge(ack).ok());
  EXPECT_EQ(job.coordinator->LastCompletedId(), 1);
  EXPECT_EQ(job.coordinator->ConsecutiveFailures(), 1u);
  EXPECT_FALSE(fs::exists(dir / "chk-2"));
}

TEST(CoordinatorWithStorage, CrashBeforeMetadataLeavesPreviousCheckpointSelected) {
  GTEST_FLAG_SET(death_test_style, "fast");
  TempDir dir;
  EXPECT_EXIT(
      {
        if (!ConfigureFaults("after-state-before-metadata:2").ok()) ::_exit(10);
        Job job(dir.path());
        for (int64_t id = 1; id <= 2; ++id) {
          if (!job.coordinator->Trigger().ok()) ::_exit(11);
          for (size_t t = 0; t < 3; ++t) job.TaskAcks(id, t, "state" + std::to_string(id));
        }
        ::_exit(0);
      },
      ::testing::KilledBySignal(SIGKILL), "after-state-before-metadata");
  EXPECT_TRUE(fs::exists(dir / "chk-2/agg-1.snap"));
  auto sel = SelectRestoreCheckpoint(dir.path(), test::TestJob());
  ASSERT_TRUE(sel.ok());
  EXPECT_EQ(sel->point->metadata.checkpoint_id, 1);
  ASSERT_EQ(sel->warnings.size(), 1u);
  EXPECT_EQ(sel->warnings[0], "skipping chk-2: no _metadata (incomplete checkpoint)");
}

}  // namespace
}  // namespace flow::rt
