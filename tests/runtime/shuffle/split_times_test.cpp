// SplitTimes and KeyGroupsOfSubtask: what the writer of a second key-by reports (a window behind a
// window or a join, docs/exactly-once.md "Two key-bys in a row"). Its splits are the key groups of
// the first cut's reader; each must be reported by exactly one writer subtask of one instance, or
// PartitionProgress's "highest value any writer reported" would let a fast keyed subtask's report
// stand for a slow one's key groups.

#include "flow/runtime/shuffle/split_times.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "flow/runtime/shuffle/partition_progress.h"
#include "flow/runtime/shuffle/repartition_topic.h"

namespace flow::rt::shuffle {
namespace {

constexpr uint32_t kMax = 128;

// What a reader subtask publishes for `partitions` of a topic with `total` partitions: the key
// groups of each (PartitionOfKeyGroup), at that partition's watermark.
SourceSplits Published(const std::map<int32_t, TimestampMs>& partitions, int32_t total) {
  SourceSplits s;
  s.total = kMax;
  for (uint32_t kg = 0; kg < kMax; ++kg) {
    auto it = partitions.find(PartitionOfKeyGroup(kg, kMax, total));
    if (it != partitions.end())
      s.splits.push_back(SplitTime{static_cast<int32_t>(kg), it->second, false});
  }
  return s;
}

TEST(SplitTimesTest, AllReturnsEverySubtaskOfOneSourceOnly) {
  SplitTimes times;
  times.Publish("r", 1, SourceSplits{kMax, {SplitTime{5, 10, false}}});
  times.Publish("r", 0, SourceSplits{kMax, {SplitTime{1, 20, false}}});
  times.Publish("q", 0, SourceSplits{4, {SplitTime{0, 30, false}}});
  times.Publish("s", 0, SourceSplits{4, {SplitTime{0, 40, false}}});
  const std::vector<SourceSplits> all = times.All("r");
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].splits, std::vector<SplitTime>{(SplitTime{1, 20, false})});
  EXPECT_EQ(all[1].splits, std::vector<SplitTime>{(SplitTime{5, 10, false})});
  EXPECT_TRUE(times.All("none").empty());
}

TEST(SplitTimesTest, AKeyedSubtaskKeepsTheKeyGroupsOfItsOwnRange) {
  // Key groups 0..63 belong to subtask 0 of 2, 64..127 to subtask 1.
  const std::vector<SourceSplits> published = {
      SourceSplits{kMax, {SplitTime{3, 100, false}, SplitTime{70, 200, false}}},
      SourceSplits{kMax, {SplitTime{64, 300, false}, SplitTime{63, 400, true}}}};
  EXPECT_EQ(KeyGroupsOfSubtask(published, kMax, 0, 2),
            (std::vector<SplitTime>{SplitTime{3, 100, false}, SplitTime{63, 400, true}}));
  EXPECT_EQ(KeyGroupsOfSubtask(published, kMax, 1, 2),
            (std::vector<SplitTime>{SplitTime{64, 300, false}, SplitTime{70, 200, false}}));
  // Out of range (a foreign publisher) is dropped; one key group twice keeps the lower time.
  const std::vector<SourceSplits> odd = {
      SourceSplits{kMax,
                   {SplitTime{-1, 1, false}, SplitTime{128, 1, false}, SplitTime{9, 50, true}}},
      SourceSplits{kMax, {SplitTime{9, 40, false}}}};
  EXPECT_EQ(KeyGroupsOfSubtask(odd, kMax, 0, 1), std::vector<SplitTime>{(SplitTime{9, 40, false})});
}

// Two instances of parallelism 2 read the 6 partitions of the first topic (a: 0, 1, 4; b: 2, 3,
// 5, spread over their reader subtasks): every key group is reported by exactly one writer
// subtask of one instance, and a second topic's partition fed all their reports has the minimum
// over the first topic's partitions, what one process would have.
TEST(SplitTimesTest, EveryKeyGroupIsReportedOnceAndTheMinimumComesThrough) {
  constexpr int32_t kPartitions = 6;
  const std::map<int32_t, TimestampMs> wm = {{0, 500}, {1, 300}, {2, 700},
                                             {3, 250}, {4, 900}, {5, 400}};
  auto of = [&](std::initializer_list<int32_t> ps) {
    std::map<int32_t, TimestampMs> m;
    for (int32_t p : ps) m[p] = wm.at(p);
    return Published(m, kPartitions);
  };
  const std::map<std::string, std::vector<SourceSplits>> instances = {{"a", {of({0, 4}), of({1})}},
                                                                      {"b", {of({3}), of({2, 5})}}};
  std::multiset<int32_t> reported;
  PartitionProgress progress({"w.shuffle"});
  for (const auto& [name, subtasks] : instances) {
    for (uint32_t subtask = 0; subtask < 2; ++subtask) {
      SourceProgress source{"w.shuffle", kMax, {}};
      for (const SplitTime& t : KeyGroupsOfSubtask(subtasks, kMax, subtask, 2)) {
        reported.insert(t.split);
        source.splits.push_back(SplitProgress{t.split, t.watermark, t.idle, false});
      }
      auto applied = progress.Apply(ProgressReport{name + "/" + std::to_string(subtask), {source}});
      ASSERT_TRUE(applied.ok()) << applied.status().ToString();
    }
  }
  ASSERT_EQ(reported.size(), kMax);
  for (uint32_t kg = 0; kg < kMax; ++kg) EXPECT_EQ(reported.count(static_cast<int32_t>(kg)), 1u);
  EXPECT_EQ(progress.watermark(), 250);
}

}  // namespace
}  // namespace flow::rt::shuffle
