// JavaRandom against java.util.Random. The expected numbers were printed by OpenJDK 17's
// java.util.Random for the same seeds and calls.
#include "flow/runtime/generators/java_random.h"

#include <gtest/gtest.h>

#include <vector>

namespace flow::rt {
namespace {

std::vector<int32_t> Draw(int64_t seed, int32_t bound, int n) {
  JavaRandom r(seed);
  std::vector<int32_t> out;
  for (int i = 0; i < n; ++i) out.push_back(r.NextInt(bound));
  return out;
}

TEST(JavaRandomTest, NextIntMatchesJava) {
  JavaRandom r(42);
  EXPECT_EQ(r.NextInt(), -1170105035);
  EXPECT_EQ(r.NextInt(), 234785527);
  EXPECT_EQ(r.NextInt(), -1360544799);
}

TEST(JavaRandomTest, BoundedNextIntMatchesJava) {
  EXPECT_EQ(Draw(0, 10, 6), (std::vector<int32_t>{0, 8, 9, 7, 5, 3}));
  EXPECT_EQ(Draw(7, 13, 6), (std::vector<int32_t>{3, 12, 3, 10, 8, 0}));
  // A power of two takes Java's multiply-shift path.
  EXPECT_EQ(Draw(-1, 16, 4), (std::vector<int32_t>{4, 7, 0, 8}));
  // A bound above 2^30 makes Java's rejection loop (with its int overflow test) matter.
  EXPECT_EQ(
      Draw(123456789, 1500000000, 6),
      (std::vector<int32_t>{1426010965, 981296483, 547328344, 838606290, 465137554, 913732807}));
  EXPECT_EQ(Draw(int64_t{1} << 40, 2147483647, 2), (std::vector<int32_t>{336615984, 518826140}));
}

TEST(JavaRandomTest, LongDoubleBooleanMatchJava) {
  JavaRandom r(99);
  EXPECT_EQ(r.NextLong(), -5119754439980850796LL);
  EXPECT_EQ(r.NextLong(), 6405706891948209991LL);
  EXPECT_DOUBLE_EQ(r.NextDouble(), 0.8156724779547452);
  EXPECT_DOUBLE_EQ(r.NextDouble(), 0.8670406728054072);
  EXPECT_TRUE(r.NextBoolean());
}

TEST(JavaRandomTest, SetSeedRestartsTheSequence) {
  JavaRandom r(5);
  const int32_t first = r.NextInt();
  r.NextInt();
  r.SetSeed(5);
  EXPECT_EQ(r.NextInt(), first);
}

}  // namespace
}  // namespace flow::rt
