// StateAdoption: how a run of an instance learns, from its repartition sources, which partitions'
// state to adopt and from which checkpoint, and what retention must keep (docs/exactly-once.md,
// "State that follows its partition"). The real-broker behaviour is scale_out_keyed_test's.

#include "flow/runtime/engine/state_adoption.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "../checkpoint/checkpoint_test_util.h"

namespace flow::rt {
namespace {

// Waits until every subtask of the source published, and gives the union of their partitions
// that have committed state; one without is not listed (it starts empty).
TEST(StateAdoptionTest, WaitGivesEveryPublishedPartitionWithItsOrigin) {
  StateAdoption adoption("b", "/unused", 128);
  adoption.Expect("window.shuffle", 2);
  std::atomic<bool> cancel{false};
  std::thread second([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    adoption.Publish("window.shuffle", 1, 6, {{1, StateOrigin{"a", 7}}, {3, std::nullopt}});
  });
  adoption.Publish("window.shuffle", 0, 6, {{0, StateOrigin{"c", 4}}});
  auto given = adoption.Wait("window.shuffle", &cancel);
  second.join();
  ASSERT_TRUE(given.ok()) << given.status().ToString();
  EXPECT_EQ(given->partitions, 6);
  ASSERT_EQ(given->origins.size(), 2u);
  EXPECT_EQ(given->origins.at(0), (StateOrigin{"c", 4}));
  EXPECT_EQ(given->origins.at(1), (StateOrigin{"a", 7}));
  EXPECT_EQ(given->origins.count(3), 0u);
}

TEST(StateAdoptionTest, AWaitEndsWhenTheRunIsCancelled) {
  StateAdoption adoption("b", "/unused", 128);
  adoption.Expect("window.shuffle", 2);
  adoption.Publish("window.shuffle", 0, 6, {});
  std::atomic<bool> cancel{false};
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    cancel = true;
  });
  auto given = adoption.Wait("window.shuffle", &cancel);
  canceller.join();
  ASSERT_FALSE(given.ok());
  EXPECT_EQ(given.status().code(), StatusCode::kCancelled);
  EXPECT_FALSE(adoption.Wait("other", &cancel).ok());  // nobody publishes for it
}

// A named checkpoint is read from <root>/<instance>/chk-<N>, once; a missing one names its path,
// and one another build of the job took is refused.
TEST(StateAdoptionTest, CheckpointsAreReadUnderTheRootAndChecked) {
  test::TempDir root;
  {
    auto storage = test::OpenStorage(root / "a", 3, test::TestJob(0xF00D, 128));
    ASSERT_TRUE(storage);
    test::WriteCheckpoint(storage.get(), 7, "s7", {});
  }
  StateAdoption adoption("b", root.path(), 128);
  adoption.SetFingerprint(0xF00D);
  EXPECT_EQ(adoption.PathOf(StateOrigin{"a", 7}), root / "a/chk-7");
  auto point = adoption.Checkpoint(StateOrigin{"a", 7});
  ASSERT_TRUE(point.ok()) << point.status().ToString();
  EXPECT_EQ((*point)->metadata.checkpoint_id, 7);
  auto again = adoption.Checkpoint(StateOrigin{"a", 7});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->get(), point->get());  // verified once per run

  auto missing = adoption.Checkpoint(StateOrigin{"a", 5});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound) << missing.status().ToString();
  EXPECT_NE(missing.status().message().find(root / "a/chk-5"), std::string::npos)
      << missing.status().message();

  StateAdoption other_build("b", root.path(), 128);
  other_build.SetFingerprint(0xBEEF);
  auto refused = other_build.Checkpoint(StateOrigin{"a", 7});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("another build"), std::string::npos);
}

// Retention's view: unknown until every repartition source read the names, then their union.
TEST(StateAdoptionTest, NamedCheckpointsAreKnownOnceEverySourceReadThem) {
  StateAdoption adoption("a", "/unused", 128);
  adoption.Expect("left.shuffle", 1);
  adoption.Expect("right.shuffle", 1);
  EXPECT_FALSE(adoption.Named().has_value());
  adoption.SetNamed("left.shuffle", std::set<int64_t>{3, 5});
  EXPECT_FALSE(adoption.Named().has_value());
  adoption.SetNamed("right.shuffle", std::set<int64_t>{5, 9});
  ASSERT_TRUE(adoption.Named().has_value());
  EXPECT_EQ(*adoption.Named(), (std::set<int64_t>{3, 5, 9}));
  adoption.SetNamed("right.shuffle", std::nullopt);  // could not read them
  EXPECT_FALSE(adoption.Named().has_value());
}

// While the brokers are down the retention reads are paced: after each failure the next read
// waits 1 s, 2 s, 4 s ... up to 60 s; a success reports the failures it ends and reads at once
// again.
TEST(NamedReadPacingTest, FailedReadsWaitLongerEachTimeUpToAMinuteAndASuccessEndsIt) {
  NamedReadPacing pacing;
  int64_t now = 1'000'000;
  EXPECT_TRUE(pacing.Due(now));
  EXPECT_EQ(pacing.Failed(now), 1u);  // the first of a run: the caller logs it
  EXPECT_FALSE(pacing.Due(now + 999));
  EXPECT_TRUE(pacing.Due(now + 1000));
  now += 1000;
  EXPECT_EQ(pacing.Failed(now), 2u);
  EXPECT_FALSE(pacing.Due(now + 1999));
  EXPECT_TRUE(pacing.Due(now + 2000));
  // Many barriers later, the wait stops growing at a minute.
  for (int i = 0; i < 20; ++i) {
    now += 60'000;
    ASSERT_TRUE(pacing.Due(now)) << i;
    pacing.Failed(now);
  }
  EXPECT_FALSE(pacing.Due(now + 59'999));
  EXPECT_TRUE(pacing.Due(now + 60'000));
  now += 60'000;
  EXPECT_EQ(pacing.Succeeded(), 22u);  // the run of failures it ends
  EXPECT_TRUE(pacing.Due(now));
  EXPECT_EQ(pacing.Succeeded(), 0u);  // nothing more to report
  // A new run of failures starts again at one second.
  EXPECT_EQ(pacing.Failed(now), 1u);
  EXPECT_TRUE(pacing.Due(now + 1000));
}

}  // namespace
}  // namespace flow::rt
