// Fault injection: spec parsing, and crash tests. Each crash test runs the checkpoint path in a
// forked child (gtest death test) that must die by SIGKILL at the named point; the parent then
// checks that recovery handles what the child left on disk.

#include <signal.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "checkpoint_test_util.h"
#include "flow/runtime/checkpoint/fault_injection.h"
#include "flow/runtime/checkpoint/recovery.h"

namespace flow::rt {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

class FaultInjection : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "fast"); }
  void TearDown() override { DisarmFaults(); }
};

TEST_F(FaultInjection, ParsesAndNormalisesSpecs) {
  ASSERT_TRUE(ConfigureFaults("after-metadata").ok());
  EXPECT_TRUE(FaultsArmed());
  EXPECT_EQ(DescribeFaults(), "after-metadata:1");
  ASSERT_TRUE(ConfigureFaults("after-barrier:3:window:2,during-commit:4").ok());
  EXPECT_EQ(DescribeFaults(), "after-barrier:3:window:2,during-commit:4");
  ASSERT_TRUE(ConfigureFaults("after-barrier:*:map").ok());
  EXPECT_EQ(DescribeFaults(), "after-barrier:*:map:1");
  ASSERT_TRUE(ConfigureFaults("").ok());
  EXPECT_FALSE(FaultsArmed());
  EXPECT_EQ(DescribeFaults(), "");
}

TEST_F(FaultInjection, RejectsBadSpecsWithClearMessages) {
  struct Case {
    const char* spec;
    const char* words;
  };
  for (const Case& c : {Case{"after-metdata", "unknown fault point 'after-metdata'"},
                        Case{"after-barrier:3", "after-barrier takes 2 argument(s)"},
                        Case{"after-metadata:0", "nth must be a positive integer, got '0'"},
                        Case{"after-metadata:x", "nth must be a positive integer"},
                        Case{"after-metadata,,during-commit", "empty entry"},
                        Case{"after-barrier::op", "empty argument 1"},
                        Case{"random:abc", "expected random:<seed>"}}) {
    Status s = ConfigureFaults(c.spec);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.spec;
    EXPECT_NE(s.message().find(c.words), std::string::npos) << c.spec << " -> " << s.message();
  }
  // A rejected spec leaves the previous configuration unchanged.
  ASSERT_TRUE(ConfigureFaults("during-restore").ok());
  EXPECT_FALSE(ConfigureFaults("nope").ok());
  EXPECT_EQ(DescribeFaults(), "during-restore:1");
}

TEST_F(FaultInjection, SeededRandomIsReproducibleAndVaries) {
  ASSERT_TRUE(ConfigureFaults("random:7").ok());
  std::string a = DescribeFaults();
  ASSERT_TRUE(ConfigureFaults("random:7").ok());
  EXPECT_EQ(DescribeFaults(), a);
  std::set<std::string> seen;
  for (int seed = 0; seed < 40; ++seed) {
    ASSERT_TRUE(ConfigureFaults("random:" + std::to_string(seed)).ok());
    std::string d = DescribeFaults();
    seen.insert(d);
    std::string point = d.substr(0, d.find(':'));
    bool known = false;
    for (const FaultPointInfo& p : KnownFaultPoints()) known = known || p.name == point;
    EXPECT_TRUE(known) << d;
  }
  EXPECT_GT(seen.size(), 5u);
}

TEST_F(FaultInjection, DisarmedPointsDoNothing) {
  EXPECT_FALSE(FaultsArmed());
  FaultPoint("after-metadata");
  FaultPoint("after-barrier", 1, "x");
  SUCCEED();
}

TEST_F(FaultInjection, NonMatchingArgumentsDoNotFire) {
  // In-process: if any of these fired, the test binary itself would die.
  ASSERT_TRUE(ConfigureFaults("after-barrier:2:window,after-metadata:3").ok());
  FaultPoint("after-barrier", 1, "window");
  FaultPoint("after-barrier", 2, "map");
  FaultPoint("after-metadata");
  FaultPoint("after-metadata");
  DisarmFaults();
  SUCCEED();
}

TEST_F(FaultInjection, AfterBarrierKillsOnTheMatchingCheckpointAndOperator) {
  TempDir dir;
  std::string marker = dir / "marker";
  EXPECT_EXIT(
      {
        ::setenv("FLOW_FAULT", "after-barrier:2:window", 1);
        if (!ConfigureFaultsFromEnv().ok()) ::_exit(10);
        FaultPoint("after-barrier", 1, "window");
        FaultPoint("after-barrier", 2, "map");
        test::WriteAll(marker, "before");
        FaultPoint("after-barrier", 2, "window");
        test::WriteAll(marker, "after");
        ::_exit(0);
      },
      ::testing::KilledBySignal(SIGKILL),
      "fault injection: killing the process at after-barrier:2:window \\(hit 1\\)");
  EXPECT_EQ(test::ReadAll(marker), "before");
}

// Child: checkpoint 1 completes, then checkpoint 2 runs into the configured fault.
void RunTwoCheckpoints(const std::string& dir, const char* spec, uint32_t retained = 3) {
  if (!ConfigureFaults(spec).ok()) ::_exit(10);
  auto storage = test::OpenStorage(dir, retained);
  test::WriteCheckpoint(storage.get(), 1, "one", {"sst-1"});
  test::WriteCheckpoint(storage.get(), 2, "two", {"sst-2"});
  ::_exit(0);
}

TEST_F(FaultInjection, DuringSnapshotWriteLeavesPartialCheckpointThatIsSkipped) {
  TempDir dir;
  // Checkpoint 1 writes two snapshot files (hits 1, 2); the third hit is checkpoint 2's first file.
  EXPECT_EXIT(RunTwoCheckpoints(dir.path(), "during-snapshot-write:3"),
              ::testing::KilledBySignal(SIGKILL), "at during-snapshot-write \\(hit 3\\)");
  EXPECT_EQ(test::ReadAll(dir / "chk-2/agg-0.snap"), "tw");  // half of "two0", never synced whole
  EXPECT_FALSE(fs::exists(dir / "chk-2/_metadata"));
  auto sel = SelectRestoreCheckpoint(dir.path(), test::TestJob());
  ASSERT_TRUE(sel.ok());
  ASSERT_TRUE(sel->point);
  EXPECT_EQ(sel->point->metadata.checkpoint_id, 1);
  ASSERT_EQ(sel->warnings.size(), 1u);
  EXPECT_EQ(sel->warnings[0], "skipping chk-2: no _metadata (incomplete checkpoint)");
}

TEST_F(FaultInjection, AfterStateBeforeMetadataIsSkipped) {
  TempDir dir;
  EXPECT_EXIT(RunTwoCheckpoints(dir.path(), "after-state-before-metadata:2"),
              ::testing::KilledBySignal(SIGKILL), "after-state-before-metadata");
  EXPECT_EQ(test::ReadAll(dir / "chk-2/agg-1.snap"), "two1");  // state complete, metadata missing
  EXPECT_FALSE(fs::exists(dir / "chk-2/_metadata"));
  auto sel = SelectRestoreCheckpoint(dir.path(), test::TestJob());
  ASSERT_TRUE(sel.ok());
  EXPECT_EQ(sel->point->metadata.checkpoint_id, 1);
  auto bytes = ReadRestoreFile(*sel->point, SnapshotsOf(sel->point->metadata, "agg")[0]->files[0]);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, "one0");
}

TEST_F(FaultInjection, AfterMetadataTheCheckpointCountsEvenWithoutRetention) {
  TempDir dir;
  EXPECT_EXIT(RunTwoCheckpoints(dir.path(), "after-metadata:2", /*retained=*/1),
              ::testing::KilledBySignal(SIGKILL), "after-metadata");
  // Died before retention ran: chk-1 is still there, chk-2 is complete and is selected.
  EXPECT_TRUE(fs::exists(dir / "chk-1/_metadata"));
  auto sel = SelectRestoreCheckpoint(dir.path(), test::TestJob());
  ASSERT_TRUE(sel.ok());
  EXPECT_EQ(sel->point->metadata.checkpoint_id, 2);
  EXPECT_TRUE(sel->warnings.empty());
  // The next run's retention removes chk-1 and its shared file.
  auto storage = test::OpenStorage(dir.path(), 1);
  ASSERT_TRUE(storage->ApplyRetention().ok());
  EXPECT_FALSE(fs::exists(dir / "chk-1"));
  EXPECT_FALSE(fs::exists(dir / "shared/sst-1"));
  EXPECT_TRUE(fs::exists(dir / "shared/sst-2"));
}

TEST_F(FaultInjection, DuringRestoreKillsAndTheCheckpointStaysUsable) {
  TempDir dir;
  {
    auto storage = test::OpenStorage(dir.path());
    test::WriteCheckpoint(storage.get(), 1, "one", {});
  }
  auto sel = SelectRestoreCheckpoint(dir.path(), test::TestJob());
  ASSERT_TRUE(sel.ok());
  RestorePoint point = *sel->point;
  EXPECT_EXIT(
      {
        if (!ConfigureFaults("during-restore").ok()) ::_exit(10);
        auto r = ReadRestoreFile(point, point.metadata.snapshots[0].files[0]);
        ::_exit(r.ok() ? 0 : 11);
      },
      ::testing::KilledBySignal(SIGKILL), "during-restore");
  auto again = SelectRestoreCheckpoint(dir.path(), test::TestJob());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->point->metadata.checkpoint_id, 1);
}

TEST_F(FaultInjection, CommitHooksAreNamedPoints) {
  for (const char* p : {"after-precommit", "during-commit", "after-commit-before-cleanup"}) {
    EXPECT_EXIT(
        {
          if (!ConfigureFaults(p).ok()) ::_exit(10);
          FaultPoint(p);
          ::_exit(0);
        },
        ::testing::KilledBySignal(SIGKILL), p);
  }
}

}  // namespace
}  // namespace flow::rt
