// Watermark generation (bounded out-of-orderness, splits, idleness) and min-combining.

#include <gtest/gtest.h>

#include "flow/runtime/engine/watermark.h"

namespace flow::rt {
namespace {

WatermarkSpec Spec(DurationMs delay, DurationMs idle = 0) {
  WatermarkSpec s;
  s.max_out_of_orderness = delay;
  s.idle_timeout = idle;
  return s;
}

TEST(WatermarkGeneratorTest, MaxSeenMinusDelayMinusOne) {
  WatermarkGenerator g(Spec(100), 0);
  EXPECT_EQ(g.Current(0, 0), kMinWatermark);
  g.OnRecord(1000, -1, 0);
  EXPECT_EQ(g.Current(0, 0), 1000 - 100 - 1);
  g.OnRecord(900, -1, 0);  // out of order: does not lower the watermark
  EXPECT_EQ(g.Current(0, 0), 899);
  g.OnRecord(2000, -1, 0);
  EXPECT_EQ(g.Current(0, 0), 1899);
}

TEST(WatermarkGeneratorTest, SplitsAreMinCombined) {
  WatermarkGenerator g(Spec(0), 0);
  g.OnRecord(5000, 0, 0);
  g.OnRecord(3000, 1, 0);
  EXPECT_EQ(g.Current(0, 0), 2999);
  g.OnRecord(7000, 1, 0);
  EXPECT_EQ(g.Current(0, 0), 4999);
}

// A split restored with the checkpoint that the subtask no longer reads is forgotten; the ones it
// reads keep their times.
TEST(WatermarkGeneratorTest, RetainSplitsForgetsSplitsThatMovedAway) {
  WatermarkGenerator g(Spec(0), 0);
  g.OnRecord(2000, 3, 0);
  g.OnRecord(9000, 5, 0);
  BinaryWriter w;
  g.Snapshot(/*reached=*/1999, 0, &w);
  WatermarkGenerator r(Spec(0), 0);
  TimestampMs reached = 0;
  ASSERT_TRUE(r.Restore(w.data(), 0, &reached).ok());
  EXPECT_EQ(r.Current(0, 0), 1999);  // split 3 holds it
  r.RetainSplits({5, 7});
  EXPECT_EQ(r.Current(0, 0), 8999);
  EXPECT_FALSE(r.SplitWatermark(3, 0).has_value());
  ASSERT_TRUE(r.SplitWatermark(5, 0).has_value());
  EXPECT_EQ(r.SplitWatermark(5, 0)->first, 8999);
  r.OnRecord(4000, 7, 0);  // a split gained since holds it from its first record
  EXPECT_EQ(r.Current(0, 0), 3999);
}

TEST(WatermarkGeneratorTest, IdleSplitStopsHoldingBackAndResumes) {
  WatermarkGenerator g(Spec(0, 50), 0);
  g.OnRecord(1000, 0, 0);
  g.OnRecord(9000, 1, 40);
  EXPECT_EQ(g.Current(40, 0), 999);
  // Split 0 has been silent for 50 ms: only split 1 counts.
  EXPECT_EQ(g.Current(50, 0), 8999);
  EXPECT_FALSE(g.IsIdle(50));
  EXPECT_TRUE(g.IsIdle(90));  // both silent for >= 50 ms
  g.OnRecord(1500, 0, 100);   // split 0 is back and holds the watermark again
  EXPECT_FALSE(g.IsIdle(100));
  EXPECT_EQ(g.Current(100, 0), 1499);
}

TEST(WatermarkGeneratorTest, SubtaskWithoutDataBecomesIdle) {
  WatermarkGenerator g(Spec(0, 30), 10);
  EXPECT_FALSE(g.IsIdle(39));
  EXPECT_TRUE(g.IsIdle(40));
  WatermarkGenerator never(Spec(0, 0), 0);
  EXPECT_FALSE(never.IsIdle(1000000));
}

TEST(WatermarkGeneratorTest, ProcessingTimeFollowsTheClock) {
  WatermarkSpec s;
  s.mode = TimeMode::kProcessingTime;
  WatermarkGenerator g(s, 0);
  EXPECT_EQ(g.Current(0, 123456), 123455);
  s.mode = TimeMode::kNone;
  WatermarkGenerator none(s, 0);
  none.OnRecord(1000, -1, 0);
  EXPECT_EQ(none.Current(0, 123456), kMinWatermark);
}

TEST(WatermarkGeneratorTest, NoOverflowNearTheMinimum) {
  WatermarkGenerator g(Spec(1000), 0);
  g.OnRecord(kMinWatermark + 5, -1, 0);
  EXPECT_EQ(g.Current(0, 0), kMinWatermark);
}

// What a checkpoint keeps of a source's event time: a restored generator is where the old one
// was (per split, idle splits still idle), and the reached watermark travels with it.
TEST(WatermarkGeneratorTest, SnapshotRestoresSplitsIdlenessAndTheReachedWatermark) {
  WatermarkGenerator g(Spec(10, 50), 0);
  g.OnRecord(1000, 0, 0);
  g.OnRecord(5000, 1, 40);
  g.OnRecord(3000, 2, 45);
  // At 60 split 0 is idle: the watermark is min(5000, 3000) - 11.
  ASSERT_EQ(g.Current(60, 0), 2989);
  BinaryWriter w;
  g.Snapshot(/*reached=*/2989, 60, &w);
  const std::string bytes = w.Release();
  WatermarkGenerator r(Spec(10, 50), 7000);
  TimestampMs reached = 0;
  ASSERT_TRUE(r.Restore(bytes, 7000, &reached).ok());
  EXPECT_EQ(reached, 2989);
  EXPECT_EQ(r.Current(7000, 0), 2989) << "no record since the restore, same watermark";
  EXPECT_FALSE(r.IsIdle(7000)) << "splits 1 and 2 start their idle timeout anew";
  EXPECT_TRUE(r.IsIdle(7050));
  r.OnRecord(4000, 2, 7060);
  EXPECT_EQ(r.Current(7060, 0), 3989);
  auto only = WatermarkGenerator::ReachedInSnapshot(bytes);
  ASSERT_TRUE(only.ok());
  EXPECT_EQ(*only, 2989);
  // Damaged bytes are an error, never a guess.
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    WatermarkGenerator t(Spec(10, 50), 0);
    EXPECT_FALSE(t.Restore(std::string_view(bytes).substr(0, cut), 0, &reached).ok()) << cut;
  }
  EXPECT_FALSE(r.Restore(bytes + "x", 0, &reached).ok());
}

TEST(WatermarkCombinerTest, MinOverChannelsOnlyIncreasing) {
  WatermarkCombiner c(3);
  EXPECT_FALSE(c.OnWatermark(0, 100));
  EXPECT_FALSE(c.OnWatermark(1, 50));
  EXPECT_TRUE(c.OnWatermark(2, 70));
  EXPECT_EQ(c.current(), 50);
  EXPECT_TRUE(c.OnWatermark(1, 80));
  EXPECT_EQ(c.current(), 70);
  EXPECT_FALSE(c.OnWatermark(1, 60));  // a channel going back is ignored
  EXPECT_EQ(c.current(), 70);
}

TEST(WatermarkCombinerTest, IdleChannelsAreExcluded) {
  WatermarkCombiner c(2);
  c.OnWatermark(0, 500);
  EXPECT_EQ(c.current(), kMinWatermark);
  EXPECT_TRUE(c.OnIdle(1, true));
  EXPECT_EQ(c.current(), 500);
  EXPECT_FALSE(c.AllIdle());
  // Channel 1 comes back behind: the output never goes backwards, and it holds further progress.
  EXPECT_FALSE(c.OnIdle(1, false));
  EXPECT_FALSE(c.OnWatermark(1, 300));
  EXPECT_FALSE(c.OnWatermark(0, 900));
  EXPECT_EQ(c.current(), 500);
  EXPECT_TRUE(c.OnWatermark(1, 600));
  EXPECT_EQ(c.current(), 600);
}

TEST(WatermarkCombinerTest, AllIdleAdvancesToHighestIdleWatermark) {
  WatermarkCombiner c(3);
  c.OnWatermark(0, 10);
  c.OnWatermark(1, 20);
  c.OnWatermark(2, 15);
  EXPECT_EQ(c.current(), 10);
  EXPECT_FALSE(c.OnIdle(1, true));  // channels 0 and 2 still hold it at 10
  EXPECT_FALSE(c.OnIdle(2, true));
  EXPECT_EQ(c.current(), 10);
  EXPECT_FALSE(c.AllIdle());
  // Every open channel idle: nothing holds time back, the highest watermark wins.
  EXPECT_TRUE(c.OnIdle(0, true));
  EXPECT_TRUE(c.AllIdle());
  EXPECT_EQ(c.current(), 20);
  // A channel that comes back behind does not move the output backwards.
  EXPECT_FALSE(c.OnIdle(0, false));
  EXPECT_EQ(c.current(), 20);
}

TEST(WatermarkCombinerTest, IdleWithEndedChannelsUsesOnlyOpenOnes) {
  WatermarkCombiner c(2);
  c.OnWatermark(0, 10);
  c.OnWatermark(1, 30);
  EXPECT_FALSE(c.OnEnd(1));  // channel 0 still holds it at 10
  EXPECT_EQ(c.current(), 10);
  // The ended channel (kMaxWatermark) must not make an idle input jump to the end of time.
  EXPECT_FALSE(c.OnIdle(0, true));
  EXPECT_EQ(c.current(), 10);
}

TEST(WatermarkCombinerTest, EndedChannelsCountAsMax) {
  WatermarkCombiner c(2);
  c.OnWatermark(0, 10);
  c.OnWatermark(1, 20);
  EXPECT_TRUE(c.OnEnd(0));
  EXPECT_EQ(c.current(), 20);
  EXPECT_FALSE(c.AllEnded());
  EXPECT_TRUE(c.OnEnd(1));
  EXPECT_EQ(c.current(), kMaxWatermark);
  EXPECT_TRUE(c.AllEnded());
}

}  // namespace
}  // namespace flow::rt
