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

// Key groups are stored in checkpoints, so the hash must never change between versions. The
// expected values are MurmurHash3's 64-bit finalizer and FNV-1a computed outside this code base.
TEST(KeyGroupTest, HashValuesArePinned) {
  EXPECT_EQ(StableHash(int64_t{0}), 0u);
  EXPECT_EQ(StableHash(int64_t{1}), 0xb456bcfc34c2cb2cULL);
  EXPECT_EQ(StableHash(int64_t{-1}), 0x64b5720b4b825f21ULL);
  EXPECT_EQ(StableHash(int64_t{42}), 0x810879608e4259ccULL);
  EXPECT_EQ(StableHash(int64_t{1234567890123}), 0x500d2923091e70c2ULL);
  EXPECT_EQ(StableHash(true), 0xb456bcfc34c2cb2cULL);
  EXPECT_EQ(StableHash(false), 0x3abf2a20650683e7ULL);
  EXPECT_EQ(StableHash(std::string_view("user-1")), 0xcf951a6712e016faULL);
  EXPECT_EQ(HashCombine(StableHash(int64_t{7}), StableHash(std::string_view("x"))),
            0xe17392da4e50b32cULL);
  EXPECT_EQ(KeyGroupForHash(StableHash(int64_t{42}), kDefaultMaxParallelism), 76u);
  EXPECT_EQ(KeyGroupForHash(StableHash(std::string_view("user-1")), kDefaultMaxParallelism), 122u);
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
