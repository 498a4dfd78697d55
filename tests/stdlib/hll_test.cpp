#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "flow/stdlib/aggregates.h"

namespace flow::agg {
namespace {

double RelativeError(int64_t estimate, int64_t truth) {
  return std::fabs(static_cast<double>(estimate - truth)) / static_cast<double>(truth);
}

TEST(StdlibApproxDistinct, WithinThreePercentOnHundredThousandStrings) {
  ApproxDistinct<std::string> hll;
  for (int i = 0; i < 100000; ++i) {
    std::string key = std::string("user-").append(std::to_string(i));
    hll.Add(key);
    hll.Add(key);  // duplicates must not count
  }
  EXPECT_LT(RelativeError(hll.Result(), 100000), 0.03) << hll.Result();
}

TEST(StdlibApproxDistinct, AccurateAcrossCardinalities) {
  std::mt19937_64 rng(21);
  for (int64_t n : {1, 10, 100, 1000, 20000, 60000, 300000}) {
    ApproxDistinct<int64_t> hll;
    std::uniform_int_distribution<int64_t> any;
    std::vector<int64_t> values;
    for (int64_t i = 0; i < n; ++i) values.push_back(any(rng));
    for (int64_t v : values) hll.Add(v);
    double bound = n <= 100 ? 0.02 : 0.03;
    EXPECT_LE(RelativeError(hll.Result(), n), bound) << n << " -> " << hll.Result();
  }
  ApproxDistinct<int64_t> empty;
  EXPECT_EQ(empty.Result(), 0);
  EXPECT_TRUE(empty.empty());
}

TEST(StdlibApproxDistinct, MergeEqualsOneSketchOverEverything) {
  ApproxDistinct<int64_t> all, a, b;
  for (int64_t i = 0; i < 50000; ++i) {
    all.Add(i);
    (i % 3 == 0 ? a : b).Add(i);
  }
  for (int64_t i = 0; i < 10000; ++i) b.Add(i);  // overlap
  a.Merge(b);
  EXPECT_EQ(a.Result(), all.Result());
  ApproxDistinct<int64_t> empty;
  empty.Merge(all);
  EXPECT_EQ(empty.Result(), all.Result());
}

TEST(StdlibApproxDistinct, SmallSketchesStaySmallAndMixedMergesAgree) {
  ApproxDistinct<int64_t> small;
  for (int64_t i = 0; i < 20; ++i) small.Add(i);
  HyperLogLog probe;
  for (int64_t i = 0; i < 20; ++i) probe.AddHash(rt::StableHash(i));
  EXPECT_LT(probe.memory_bytes(), 1024u);  // far below the 16 KiB dense array
  EXPECT_EQ(small.Result(), 20);

  // Sparse into dense, dense into sparse, sparse into sparse (crossing the switch): each equals
  // one sketch that saw the union.
  ApproxDistinct<int64_t> big, union_all;
  for (int64_t i = 1000; i < 60000; ++i) big.Add(i);
  for (int64_t i = 0; i < 20; ++i) union_all.Add(i);
  for (int64_t i = 1000; i < 60000; ++i) union_all.Add(i);
  ApproxDistinct<int64_t> a = small, b = big;
  a.Merge(big);
  b.Merge(small);
  EXPECT_EQ(a.Result(), union_all.Result());
  EXPECT_EQ(b.Result(), union_all.Result());
  ApproxDistinct<int64_t> left, right, both;
  for (int64_t i = 0; i < 900; ++i) left.Add(i);
  for (int64_t i = 900; i < 1800; ++i) right.Add(i);
  for (int64_t i = 0; i < 1800; ++i) both.Add(i);
  left.Merge(right);
  EXPECT_EQ(left.Result(), both.Result());
  EXPECT_LT(RelativeError(both.Result(), 1800), 0.03);
}

TEST(StdlibApproxDistinct, SerializeSparseAndDense) {
  for (int64_t n : {0, 5, 3000, 200000}) {
    ApproxDistinct<int64_t> hll;
    for (int64_t i = 0; i < n; ++i) hll.Add(i * 7919);
    rt::BinaryWriter w;
    hll.Serialize(w);
    if (n == 5) {
      EXPECT_LT(w.data().size(), 64u);  // sparse: a few bytes per set register
    }
    ApproxDistinct<int64_t> back;
    rt::BinaryReader r(w.data());
    ASSERT_TRUE(back.Deserialize(r).ok());
    EXPECT_TRUE(r.AtEnd());
    EXPECT_EQ(back.Result(), hll.Result());
    // Adding more after a restore behaves as if never restored.
    back.Add(int64_t{-1});
    hll.Add(int64_t{-1});
    EXPECT_EQ(back.Result(), hll.Result());
  }
}

TEST(StdlibApproxDistinct, CorruptStateIsRejected) {
  ApproxDistinct<int64_t> hll;
  for (int64_t i = 0; i < 10; ++i) hll.Add(i);
  rt::BinaryWriter w;
  hll.Serialize(w);
  std::string bytes = w.data();
  for (size_t len = 0; len < bytes.size(); ++len) {
    ApproxDistinct<int64_t> target;
    rt::BinaryReader r(std::string_view(bytes).substr(0, len));
    EXPECT_EQ(target.Deserialize(r).code(), rt::StatusCode::kCorruption) << len;
  }
  // Layout: tag, precision, mode, u32 count, then (lo, hi, rank) triples.
  std::string bad_precision = bytes;
  bad_precision[1] = 12;
  std::string bad_rank = bytes;
  bad_rank[7 + 2] = static_cast<char>(HyperLogLog::kMaxRank + 1);
  std::string bad_index = bytes;
  bad_index[7 + 1] = static_cast<char>(0xff);  // index >= 2^14
  std::string bad_mode = bytes;
  bad_mode[2] = 9;
  for (const std::string& bad : {bad_precision, bad_rank, bad_index, bad_mode}) {
    ApproxDistinct<int64_t> target;
    rt::BinaryReader r(bad);
    rt::Status s = target.Deserialize(r);
    EXPECT_EQ(s.code(), rt::StatusCode::kCorruption);
    EXPECT_NE(s.message().find("approx_distinct state"), std::string::npos) << s.message();
  }
}

}  // namespace
}  // namespace flow::agg
