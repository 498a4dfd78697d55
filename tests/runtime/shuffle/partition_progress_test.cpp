// PartitionProgress: a repartition partition's event time from its writers' progress reports.
// The randomized test at the end checks the two properties the design needs against a reference
// computed here from the input partitions themselves: the watermark is never ahead of any input
// partition (no record made late by the shuffle), and once every partition is reported it equals
// the minimum over them (what one process would have), however partitions move between writers.

#include "flow/runtime/shuffle/partition_progress.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace flow::rt::shuffle {
namespace {

SplitProgress At(int32_t partition, TimestampMs wm, bool idle = false, bool ended = false) {
  return SplitProgress{partition, wm, idle, ended};
}

ProgressReport Report(const std::string& source, uint32_t partitions,
                      std::vector<SplitProgress> splits, const std::string& writer = "a/0") {
  return ProgressReport{writer, {SourceProgress{source, partitions, std::move(splits)}}};
}

bool Apply(PartitionProgress& p, const ProgressReport& r) {
  auto advanced = p.Apply(r);
  EXPECT_TRUE(advanced.ok()) << advanced.status().ToString();
  return advanced.ok() && *advanced;
}

TEST(PartitionProgressTest, UnknownUntilEveryInputPartitionIsReported) {
  PartitionProgress p({"s"});
  EXPECT_EQ(p.watermark(), kMinWatermark);
  EXPECT_FALSE(Apply(p, Report("s", 3, {At(0, 100), At(1, 200)})));
  EXPECT_EQ(p.watermark(), kMinWatermark) << "partition 2 was never reported";
  EXPECT_TRUE(Apply(p, Report("s", 3, {At(2, 150)}, "b/0")));
  EXPECT_EQ(p.watermark(), 100);
  EXPECT_FALSE(p.Idle());
  EXPECT_FALSE(p.Ended());
}

TEST(PartitionProgressTest, EachPartitionKeepsItsHighestReportAcrossWriters) {
  PartitionProgress p({"s"});
  Apply(p, Report("s", 2, {At(0, 500), At(1, 400)}, "a/0"));
  EXPECT_EQ(p.watermark(), 400);
  // Partition 1 moved to b, whose first report is lower; a's old report is still a valid bound.
  EXPECT_FALSE(Apply(p, Report("s", 2, {At(1, 300)}, "b/0")));
  EXPECT_EQ(p.watermark(), 400);
  EXPECT_TRUE(Apply(p, Report("s", 2, {At(1, 450)}, "b/0")));
  EXPECT_EQ(p.watermark(), 450);
}

TEST(PartitionProgressTest, IdlePartitionsDoNotHoldBackAndAllIdleGivesTheirHighest) {
  PartitionProgress p({"s"});
  Apply(p, Report("s", 3, {At(0, 100), At(1, 900, true), At(2, 300)}));
  EXPECT_EQ(p.watermark(), 100);
  Apply(p, Report("s", 3, {At(0, 100, true), At(2, 300, true)}));
  EXPECT_TRUE(p.Idle());
  EXPECT_EQ(p.watermark(), 900);
  // An idle partition that becomes active again below the watermark does not move it back.
  EXPECT_FALSE(Apply(p, Report("s", 3, {At(0, 200)})));
  EXPECT_FALSE(p.Idle());
  EXPECT_EQ(p.watermark(), 900);
}

TEST(PartitionProgressTest, EndedPartitionsCountAsTheEndOfTime) {
  PartitionProgress p({"s"});
  Apply(p, Report("s", 2, {At(0, 100, false, true), At(1, 50)}));
  EXPECT_EQ(p.watermark(), 50);
  EXPECT_FALSE(p.Ended());
  Apply(p, Report("s", 2, {At(1, 60, false, true)}));
  EXPECT_TRUE(p.Ended());
  EXPECT_FALSE(p.Idle());
  EXPECT_EQ(p.watermark(), kMaxWatermark);
}

TEST(PartitionProgressTest, AJoinWaitsForBothSources) {
  PartitionProgress p({"left", "right"});
  Apply(p, Report("left", 1, {At(0, 700)}));
  EXPECT_EQ(p.watermark(), kMinWatermark) << "the right side was never reported";
  ProgressReport both{"b/0",
                      {SourceProgress{"left", 1, {At(0, 800)}},
                       SourceProgress{"right", 2, {At(0, 650), At(1, 900)}}}};
  EXPECT_TRUE(Apply(p, both));
  EXPECT_EQ(p.watermark(), 650);
}

TEST(PartitionProgressTest, AGrownTopicHoldsTheWatermarkUntilItsNewPartitionIsReported) {
  PartitionProgress p({"s"});
  Apply(p, Report("s", 1, {At(0, 100)}));
  EXPECT_EQ(p.watermark(), 100);
  Apply(p, Report("s", 2, {At(0, 200)}));
  EXPECT_EQ(p.watermark(), 100) << "partition 1 is new and unreported: no advance, no step back";
  // A writer with older metadata still reports one partition: the count does not shrink.
  Apply(p, Report("s", 1, {At(0, 300)}));
  EXPECT_EQ(p.watermark(), 100);
  Apply(p, Report("s", 2, {At(1, 250)}));
  EXPECT_EQ(p.watermark(), 250);
}

TEST(PartitionProgressTest, ReportsFromAnotherJobAreRefusedAndChangeNothing) {
  PartitionProgress p({"s"});
  Apply(p, Report("s", 1, {At(0, 100)}));
  ProgressReport mixed{
      "x/3", {SourceProgress{"s", 1, {At(0, 999)}}, SourceProgress{"other", 1, {At(0, 1)}}}};
  auto refused = p.Apply(mixed);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("`other`"), std::string::npos)
      << refused.status().ToString();
  EXPECT_NE(refused.status().message().find("`x/3`"), std::string::npos)
      << refused.status().ToString();
  EXPECT_EQ(p.watermark(), 100) << "the valid half of a refused report was applied";

  auto outside = p.Apply(Report("s", 2, {At(2, 5)}));
  ASSERT_FALSE(outside.ok());
  EXPECT_NE(outside.status().message().find("partition 2 is outside its 2 partitions"),
            std::string::npos)
      << outside.status().ToString();
}

TEST(PartitionProgressTest, ARestoredCopyContinuesExactlyAsTheOriginal) {
  PartitionProgress original({"l", "r"});
  Apply(original, ProgressReport{"a/0",
                                 {SourceProgress{"l", 2, {At(0, 100), At(1, 400, true)}},
                                  SourceProgress{"r", 1, {At(0, 300)}}}});
  BinaryWriter out;
  original.Snapshot(&out);

  PartitionProgress restored({"l", "r"});
  ASSERT_TRUE(restored.Restore(out.data()).ok());
  EXPECT_EQ(restored.watermark(), original.watermark());
  const std::vector<ProgressReport> later = {
      Report("l", 2, {At(0, 350)}, "b/0"), Report("l", 2, {At(1, 120)}, "b/0"),
      Report("r", 1, {At(0, 500, true)}, "c/1"), Report("l", 2, {At(0, 900), At(1, 800)}, "b/0")};
  for (const ProgressReport& r : later) {
    Apply(original, r);
    Apply(restored, r);
    EXPECT_EQ(restored.watermark(), original.watermark());
    EXPECT_EQ(restored.Idle(), original.Idle());
  }
  EXPECT_EQ(restored.watermark(), 800);
}

TEST(PartitionProgressTest, CorruptOrForeignSnapshotsAreRefused) {
  PartitionProgress p({"s"});
  Apply(p, Report("s", 1, {At(0, 100)}));
  BinaryWriter out;
  p.Snapshot(&out);
  const std::string bytes = out.data();
  for (size_t n = 0; n < bytes.size(); ++n) {
    PartitionProgress q({"s"});
    Status st = q.Restore(bytes.substr(0, n));
    EXPECT_EQ(st.code(), StatusCode::kCorruption) << "cut to " << n << " bytes: " << st.ToString();
  }
  PartitionProgress other({"t"});
  Status st = other.Restore(bytes);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_NE(st.message().find("`s`"), std::string::npos) << st.ToString();
}

// Input partitions advance at random; writers own random sets of them, and partitions move
// between writers at random. A writer reports, for each partition it owns, its own watermark:
// the minimum over the partitions it owns (what a source subtask's watermark is). Reports reach
// the repartition partition in order.
TEST(PartitionProgressTest, NeverAheadOfAnyInputPartitionAndCatchesUpWithTheirMinimum) {
  std::mt19937 rng(20261203);
  for (int round = 0; round < 50; ++round) {
    const uint32_t partitions = 1 + rng() % 8;
    const int writers = 1 + static_cast<int>(rng() % 4);
    std::vector<TimestampMs> truth(partitions,
                                   0);  // the watermark each input partition has reached
    std::vector<int> owner(partitions);
    for (uint32_t i = 0; i < partitions; ++i) owner[i] = static_cast<int>(rng() % writers);
    PartitionProgress p({"s"});
    auto report = [&](int w) {
      std::vector<SplitProgress> splits;
      TimestampMs own_min = kMaxWatermark;
      for (uint32_t i = 0; i < partitions; ++i) {
        if (owner[i] == w) own_min = std::min(own_min, truth[i]);
      }
      for (uint32_t i = 0; i < partitions; ++i) {
        if (owner[i] == w) splits.push_back(At(static_cast<int32_t>(i), own_min));
      }
      if (!splits.empty()) Apply(p, Report("s", partitions, splits, "w/" + std::to_string(w)));
    };
    for (int step = 0; step < 200; ++step) {
      const uint32_t i = rng() % partitions;
      truth[i] += rng() % 100;
      if (rng() % 10 == 0) owner[i] = static_cast<int>(rng() % writers);
      report(static_cast<int>(rng() % writers));
      const TimestampMs true_min = *std::min_element(truth.begin(), truth.end());
      ASSERT_LE(p.watermark(), true_min) << "round " << round << " step " << step;
    }
    for (int w = 0; w < writers; ++w) report(w);
    EXPECT_EQ(p.watermark(), *std::min_element(truth.begin(), truth.end())) << "round " << round;
  }
}

}  // namespace
}  // namespace flow::rt::shuffle
