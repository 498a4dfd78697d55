// Datagen: determinism, splitting, value ranges and uniformity, timestamps with and without
// disorder, positions for checkpoints, and config validation.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "flow/runtime/generators/datagen.h"

namespace flow::rt {
namespace {

// A record as generated code would fill it, drawing fields in schema order.
struct Row {
  int64_t index;
  std::string user;
  int64_t amount;
  double score;
  std::string code;
  bool flag;
  TimestampMs ts;
  bool operator==(const Row&) const = default;
};

Row Fill(DatagenRng rng) {
  static const std::array<std::string, 3> kColors = {"red", "green", "blue"};
  Row r;
  r.index = rng.index();
  r.user = rng.VocabString("user");
  r.amount = rng.NextInt(-50, 50);
  r.score = rng.NextFloat(0.0, 1.0);
  r.code = rng.NextString(6) + "/" + rng.Pick(std::span<const std::string>(kColors));
  r.flag = rng.NextBool();
  r.ts = rng.Timestamp();
  return r;
}

DatagenSlice MakeSlice(const DatagenConfig& c, uint32_t s = 0, uint32_t p = 1) {
  auto slice = DatagenSlice::Create(c, s, p);
  EXPECT_TRUE(slice.ok()) << slice.status().ToString();
  return std::move(slice).value();
}

std::vector<Row> Drain(DatagenSlice slice) {
  std::vector<Row> rows;
  while (slice.HasNext()) rows.push_back(Fill(slice.Next()));
  return rows;
}

DatagenConfig Config(int64_t count, uint64_t seed = 42) {
  DatagenConfig c;
  c.count = count;
  c.seed = seed;
  return c;
}

TEST(DatagenTest, SameSeedSameRecordsOtherSeedOtherRecords) {
  const auto a = Drain(MakeSlice(Config(1000)));
  const auto b = Drain(MakeSlice(Config(1000)));
  const auto c = Drain(MakeSlice(Config(1000, 43)));
  ASSERT_EQ(a.size(), 1000u);
  EXPECT_EQ(a, b);
  int same_user = 0;
  for (size_t i = 0; i < a.size(); ++i) same_user += a[i].user == c[i].user ? 1 : 0;
  EXPECT_LT(same_user, 100);  // 1 in 100 by chance; a seed that changed nothing would give 1000
  // The rng of one index can be made directly, without a slice.
  EXPECT_EQ(Fill(DatagenRng(Config(1000), 517)), a[517]);
}

TEST(DatagenTest, SlicesOfAnyParallelismUnionToTheWholeSequence) {
  const auto whole = Drain(MakeSlice(Config(1003)));
  for (uint32_t p = 1; p <= 4; ++p) {
    std::vector<Row> merged;
    for (uint32_t s = 0; s < p; ++s) {
      for (auto& r : Drain(MakeSlice(Config(1003), s, p))) {
        EXPECT_EQ(r.index % p, s);
        merged.push_back(std::move(r));
      }
    }
    std::sort(merged.begin(), merged.end(),
              [](const Row& x, const Row& y) { return x.index < y.index; });
    EXPECT_EQ(merged, whole) << "parallelism " << p;
  }
}

TEST(DatagenTest, ValuesStayInRangeAndCoverIt) {
  std::set<int64_t> ints;
  std::set<std::string> users;
  std::map<std::string, int> colors;
  int flags = 0;
  const auto rows = Drain(MakeSlice(Config(20000)));
  for (const auto& r : rows) {
    ASSERT_GE(r.amount, -50);
    ASSERT_LE(r.amount, 50);
    ints.insert(r.amount);
    ASSERT_GE(r.score, 0.0);
    ASSERT_LT(r.score, 1.0);
    users.insert(r.user);
    ASSERT_EQ(r.code.size(), 6u + 1u + r.code.substr(7).size());
    for (size_t i = 0; i < 6; ++i) ASSERT_TRUE(r.code[i] >= 'a' && r.code[i] <= 'z') << r.code;
    colors[r.code.substr(7)]++;
    flags += r.flag ? 1 : 0;
  }
  EXPECT_EQ(ints.size(), 101u);   // both ends included
  EXPECT_EQ(users.size(), 100u);  // default cardinality
  for (const auto& u : users) EXPECT_TRUE(u.starts_with("user-")) << u;
  ASSERT_EQ(colors.size(), 3u);
  for (const auto& [color, n] : colors) EXPECT_NEAR(n, 20000 / 3, 400) << color;
  EXPECT_NEAR(flags, 10000, 400);
}

TEST(DatagenTest, TypeDefaultsFollowTheConfig) {
  DatagenConfig c = Config(0);
  c.max_int = 7;
  c.cardinality = 3;
  c.null_probability = 0.25;
  c.max_list_length = 2;
  std::set<int64_t> ints;
  std::set<std::string> names;
  std::set<int64_t> lengths;
  int nulls = 0;
  for (int64_t i = 0; i < 8000; ++i) {
    DatagenRng rng(c, i);
    ints.insert(rng.Int());
    names.insert(rng.VocabString("city"));
    nulls += rng.IsNull() ? 1 : 0;
    lengths.insert(rng.ListLength());
  }
  EXPECT_EQ(ints, (std::set<int64_t>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(names, (std::set<std::string>{"city-0", "city-1", "city-2"}));
  EXPECT_EQ(lengths, (std::set<int64_t>{0, 1, 2}));
  EXPECT_NEAR(nulls, 2000, 200);
}

TEST(DatagenTest, TimestampsAdvanceAtTheRateWithoutDisorder) {
  DatagenConfig c = Config(4000);
  c.rate = 400;  // 2.5 ms apart
  c.base_time = 5000;
  const auto rows = Drain(MakeSlice(c));
  for (const auto& r : rows) ASSERT_EQ(r.ts, 5000 + r.index * 1000 / 400) << r.index;
  // Drawing a different number of values before Timestamp() does not change it.
  EXPECT_EQ(DatagenRng(c, 77).Timestamp(), 5000 + 77 * 1000 / 400);
}

TEST(DatagenTest, DisorderIsBoundedAndTheWatermarkHolds) {
  DatagenConfig c = Config(3000);
  c.rate = 1000;
  c.base_time = 0;
  c.disorder = 50;
  auto slice = MakeSlice(c, 1, 2);
  std::vector<TimestampMs> stamps;
  std::vector<TimestampMs> watermarks;
  int64_t max_seen = kMinWatermark;
  int late_vs_max = 0;
  while (slice.HasNext()) {
    watermarks.push_back(slice.CurrentWatermark());
    DatagenRng rng = slice.Next();
    const TimestampMs ideal = rng.index();  // 1 record per ms from 0
    ASSERT_LE(rng.Timestamp(), ideal);
    ASSERT_GE(rng.Timestamp(), ideal - 50);
    if (!stamps.empty()) {
      if (rng.Timestamp() < max_seen) ++late_vs_max;
      ASSERT_GE(rng.Timestamp(), max_seen - 50);  // bounded out-of-orderness
    }
    max_seen = std::max(max_seen, rng.Timestamp());
    stamps.push_back(rng.Timestamp());
  }
  EXPECT_GT(late_vs_max, 100);  // there is disorder at all
  for (size_t i = 0; i < stamps.size(); ++i) {
    ASSERT_LE(watermarks[i], *std::min_element(stamps.begin() + i, stamps.end())) << i;
  }
}

TEST(DatagenTest, RestoredPositionContinuesWhereTheSnapshotWas) {
  auto slice = MakeSlice(Config(300), 2, 3);
  for (int i = 0; i < 20; ++i) (void)slice.Next();
  BinaryWriter w;
  slice.SnapshotPosition(&w);
  const auto rest = Drain(slice);
  auto restored = MakeSlice(Config(300), 2, 3);
  BinaryReader r(w.data());
  ASSERT_TRUE(restored.RestorePosition(&r).ok());
  EXPECT_EQ(Drain(restored), rest);
  auto other = MakeSlice(Config(300), 0, 1);
  BinaryReader r2(w.data());
  EXPECT_EQ(other.RestorePosition(&r2).code(), StatusCode::kInvalidArgument);
}

TEST(DatagenTest, BadConfigurationIsRejectedWithTheArgumentName) {
  DatagenConfig c;
  c.rate = -1;
  auto s = DatagenSlice::Create(c);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("rate"), std::string::npos);
  c = DatagenConfig{};
  c.cardinality = 0;
  s = DatagenSlice::Create(c);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("cardinality"), std::string::npos);
  c = DatagenConfig{};
  c.null_probability = 1.5;
  EXPECT_FALSE(DatagenSlice::Create(c).ok());
  c = DatagenConfig{};
  c.disorder = -1;
  EXPECT_FALSE(DatagenSlice::Create(c).ok());
  EXPECT_EQ(DatagenSlice::Create(DatagenConfig{}, 2, 2).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(DatagenTest, FullRangeAndSingleValueIntsWork) {
  DatagenRng rng(1, 0);
  EXPECT_EQ(rng.NextInt(5, 5), 5);
  std::set<bool> signs;
  for (int i = 0; i < 64; ++i) signs.insert(rng.NextInt(INT64_MIN, INT64_MAX) < 0);
  EXPECT_EQ(signs.size(), 2u);
}

}  // namespace
}  // namespace flow::rt
