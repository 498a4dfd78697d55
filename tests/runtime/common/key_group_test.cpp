#include "flow/runtime/common/key_group.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace flow::rt {
namespace {

TEST(KeyGroupTest, HashIsStableAcrossCalls) {
  EXPECT_EQ(StableHash(std::string_view("user-1")), StableHash(std::string_view("user-1")));
  EXPECT_NE(StableHash(std::string_view("user-1")), StableHash(std::string_view("user-2")));
  EXPECT_EQ(StableHash(0.0), StableHash(-0.0));
}

TEST(KeyGroupTest, SubtasksOwnContiguousCoveringRanges) {
  for (uint32_t parallelism : {1u, 2u, 3u, 4u, 7u, 8u, 128u}) {
    uint32_t prev = 0;
    std::map<uint32_t, int> owned;
    for (uint32_t kg = 0; kg < kDefaultMaxParallelism; ++kg) {
      uint32_t s = SubtaskForKeyGroup(kg, kDefaultMaxParallelism, parallelism);
      ASSERT_LT(s, parallelism);
      ASSERT_GE(s, prev) << "ranges must be contiguous";
      prev = s;
      owned[s]++;
    }
    EXPECT_EQ(owned.size(), parallelism) << "every subtask owns at least one key group";
  }
}

TEST(KeyGroupTest, KeysSpreadOverGroups) {
  std::map<uint32_t, int> counts;
  for (int i = 0; i < 12800; ++i) {
    counts[KeyGroupForHash(StableHash(std::to_string(i)), kDefaultMaxParallelism)]++;
  }
  EXPECT_EQ(counts.size(), kDefaultMaxParallelism);
  for (auto& [kg, n] : counts) EXPECT_GT(n, 40) << "key group " << kg;
}

}  // namespace
}  // namespace flow::rt
