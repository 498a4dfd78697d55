#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "flow/stdlib/aggregates.h"

namespace flow::agg {
namespace {

using OptI = std::optional<int64_t>;

std::vector<OptI> RandomInts(size_t n, uint32_t seed, int64_t lo, int64_t hi, double null_share) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> value(lo, hi);
  std::bernoulli_distribution is_null(null_share);
  std::vector<OptI> out;
  for (size_t i = 0; i < n; ++i) out.push_back(is_null(rng) ? OptI() : OptI(value(rng)));
  return out;
}

// Adds data[i] for i in [0, n) to accumulators over random contiguous pieces, then merges the
// pieces left to right: must equal adding everything to one accumulator.
template <typename Acc, typename AddFn>
Acc AddInPieces(size_t n, uint32_t seed, AddFn add) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<size_t> cut(0, n);
  std::vector<size_t> cuts = {0, n, cut(rng), cut(rng), cut(rng), cut(rng)};
  std::sort(cuts.begin(), cuts.end());
  Acc merged;
  for (size_t c = 0; c + 1 < cuts.size(); ++c) {
    Acc piece;
    for (size_t i = cuts[c]; i < cuts[c + 1]; ++i) add(piece, i);
    merged.Merge(piece);
  }
  return merged;
}

template <typename Acc>
Acc RoundTrip(const Acc& acc) {
  rt::BinaryWriter w;
  acc.Serialize(w);
  Acc back;
  rt::BinaryReader r(w.data());
  rt::Status s = back.Deserialize(r);
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(r.AtEnd());
  return back;
}

// Every strict prefix of the state is rejected with Corruption (never a crash), and the
// accumulator is left as it was.
template <typename Acc>
void ExpectTruncationRejected(const Acc& acc, int64_t result_before) {
  rt::BinaryWriter w;
  acc.Serialize(w);
  const std::string& bytes = w.data();
  for (size_t len = 0; len < bytes.size(); ++len) {
    Acc target = acc;
    rt::BinaryReader r(std::string_view(bytes).substr(0, len));
    rt::Status s = target.Deserialize(r);
    ASSERT_EQ(s.code(), rt::StatusCode::kCorruption) << "prefix " << len;
    ASSERT_EQ(static_cast<int64_t>(target.Result()), result_before);
  }
}

TEST(StdlibAggregates, CountRowsAndNonNullValues) {
  auto data = RandomInts(5000, 1, -100, 100, 0.3);
  size_t non_null = 0;
  for (const auto& v : data) non_null += v.has_value() ? 1 : 0;
  Count rows, values;
  for (const auto& v : data) {
    rows.Add();
    values.Add(v);
  }
  EXPECT_EQ(rows.Result(), 5000);
  EXPECT_EQ(values.Result(), static_cast<int64_t>(non_null));
  Count pieces = AddInPieces<Count>(data.size(), 2, [&](Count& c, size_t i) { c.Add(data[i]); });
  EXPECT_EQ(pieces.Result(), values.Result());
  EXPECT_EQ(RoundTrip(values).Result(), values.Result());
  // Retract the first half again.
  for (size_t i = 0; i < data.size() / 2; ++i) values.Retract(data[i]);
  size_t rest = 0;
  for (size_t i = data.size() / 2; i < data.size(); ++i) rest += data[i].has_value() ? 1 : 0;
  EXPECT_EQ(values.Result(), static_cast<int64_t>(rest));
  ExpectTruncationRejected(values, values.Result());
}

TEST(StdlibAggregates, IntSumWrapsLikeTwosComplement) {
  auto data = RandomInts(20000, 3, std::numeric_limits<int64_t>::min() / 2,
                         std::numeric_limits<int64_t>::max() / 2, 0.1);
  uint64_t reference = 0;  // unsigned arithmetic wraps by definition
  size_t non_null = 0;
  Sum<int64_t> sum;
  for (const auto& v : data) {
    sum.Add(v);
    if (v) {
      reference += static_cast<uint64_t>(*v);
      ++non_null;
    }
  }
  EXPECT_EQ(sum.Result(), static_cast<int64_t>(reference));
  EXPECT_FALSE(sum.empty());
  auto pieces =
      AddInPieces<Sum<int64_t>>(data.size(), 4, [&](auto& s, size_t i) { s.Add(data[i]); });
  EXPECT_EQ(pieces.Result(), sum.Result());
  EXPECT_EQ(RoundTrip(sum).Result(), sum.Result());
  ExpectTruncationRejected(sum, sum.Result());
  // Retracting everything returns to the empty sum.
  for (const auto& v : data) sum.Retract(v);
  EXPECT_EQ(sum.Result(), 0);
  EXPECT_TRUE(sum.empty());
  EXPECT_EQ(NullableResult(sum), OptI());
}

TEST(StdlibAggregates, FloatSumAndAvgMatchLongDoubleReference) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> value(-1e6, 1e6);
  std::vector<double> data(30000);
  for (double& d : data) d = value(rng);
  long double reference = 0;
  for (double d : data) reference += d;
  Sum<double> sum;
  Avg<double> avg;
  for (double d : data) {
    sum.Add(d);
    avg.Add(d);
  }
  EXPECT_NEAR(sum.Result(), static_cast<double>(reference), 1e-6);
  EXPECT_NEAR(avg.Result(), static_cast<double>(reference / data.size()), 1e-9);
  auto pieces =
      AddInPieces<Sum<double>>(data.size(), 6, [&](auto& s, size_t i) { s.Add(data[i]); });
  EXPECT_NEAR(pieces.Result(), sum.Result(), 1e-6);
  EXPECT_EQ(RoundTrip(avg).Result(), avg.Result());
  EXPECT_EQ(RoundTrip(sum).Result(), sum.Result());
  // Retract all but the last 10 values: the mean of those 10.
  for (size_t i = 0; i + 10 < data.size(); ++i) avg.Retract(data[i]);
  long double tail = 0;
  for (size_t i = data.size() - 10; i < data.size(); ++i) tail += data[i];
  EXPECT_NEAR(avg.Result(), static_cast<double>(tail / 10), 1e-6);
}

TEST(StdlibAggregates, IntAvgDoesNotOverflow) {
  auto data = RandomInts(10000, 7, std::numeric_limits<int64_t>::max() / 4,
                         std::numeric_limits<int64_t>::max(), 0.2);
  long double mean = 0;  // running mean in long double, independent of the 128-bit sum
  size_t n = 0;
  Avg<int64_t> avg;
  for (const auto& v : data) {
    avg.Add(v);
    if (v) {
      ++n;
      mean += (static_cast<long double>(*v) - mean) / n;
    }
  }
  EXPECT_NEAR(avg.Result() / static_cast<double>(mean), 1.0, 1e-12);
  auto pieces =
      AddInPieces<Avg<int64_t>>(data.size(), 8, [&](auto& a, size_t i) { a.Add(data[i]); });
  EXPECT_EQ(pieces.Result(), avg.Result());
  EXPECT_EQ(RoundTrip(avg).Result(), avg.Result());
  Avg<int64_t> empty;
  EXPECT_TRUE(std::isnan(empty.Result()));
  EXPECT_EQ(NullableResult(empty), std::optional<double>());
  Avg<int64_t> negative;
  negative.Add(int64_t{-3});
  negative.Add(int64_t{-4});
  EXPECT_DOUBLE_EQ(negative.Result(), -3.5);
  EXPECT_DOUBLE_EQ(RoundTrip(negative).Result(), -3.5);
}

TEST(StdlibAggregates, MinMaxOfIntsAndStrings) {
  auto data = RandomInts(5000, 9, -1'000'000, 1'000'000, 0.25);
  std::vector<int64_t> present;
  for (const auto& v : data) {
    if (v) present.push_back(*v);
  }
  Min<int64_t> mn;
  Max<int64_t> mx;
  for (const auto& v : data) {
    mn.Add(v);
    mx.Add(v);
  }
  EXPECT_EQ(mn.Result(), *std::min_element(present.begin(), present.end()));
  EXPECT_EQ(mx.Result(), *std::max_element(present.begin(), present.end()));
  auto pmin =
      AddInPieces<Min<int64_t>>(data.size(), 10, [&](auto& a, size_t i) { a.Add(data[i]); });
  auto pmax =
      AddInPieces<Max<int64_t>>(data.size(), 11, [&](auto& a, size_t i) { a.Add(data[i]); });
  EXPECT_EQ(pmin.Result(), mn.Result());
  EXPECT_EQ(pmax.Result(), mx.Result());
  EXPECT_EQ(RoundTrip(mx).Result(), mx.Result());
  ExpectTruncationRejected(mn, mn.Result());

  std::vector<std::string> words;
  std::mt19937 rng(12);
  for (int i = 0; i < 500; ++i) words.push_back(std::to_string(rng() % 100000));
  Min<std::string> smin;
  Max<std::string> smax;
  for (const auto& w : words) {
    smin.Add(w);
    smax.Add(w);
  }
  EXPECT_EQ(smin.Result(), *std::min_element(words.begin(), words.end()));
  EXPECT_EQ(RoundTrip(smax).Result(), *std::max_element(words.begin(), words.end()));
  Min<std::string> none;
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(NullableResult(none), std::optional<std::string>());
  EXPECT_TRUE(RoundTrip(none).empty());
}

TEST(StdlibAggregates, MinMaxTreatNaNAsLargestWhateverTheOrder) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const std::vector<double>& order :
       {std::vector<double>{nan, 1.0, -2.0}, std::vector<double>{1.0, nan, -2.0},
        std::vector<double>{-2.0, 1.0, nan}}) {
    Min<double> mn;
    Max<double> mx;
    for (double d : order) {
      mn.Add(d);
      mx.Add(d);
    }
    EXPECT_EQ(mn.Result(), -2.0);
    EXPECT_TRUE(std::isnan(mx.Result()));
  }
  Min<double> only_nan;
  only_nan.Add(nan);
  EXPECT_TRUE(std::isnan(only_nan.Result()));
}

TEST(StdlibAggregates, CountDistinctIsExact) {
  auto data = RandomInts(20000, 13, 0, 3000, 0.1);
  std::set<int64_t> reference;
  CountDistinct<int64_t> cd;
  for (const auto& v : data) {
    cd.Add(v);
    if (v) reference.insert(*v);
  }
  EXPECT_EQ(cd.Result(), static_cast<int64_t>(reference.size()));
  auto pieces = AddInPieces<CountDistinct<int64_t>>(data.size(), 14,
                                                    [&](auto& a, size_t i) { a.Add(data[i]); });
  EXPECT_EQ(pieces.Result(), cd.Result());
  EXPECT_EQ(RoundTrip(cd).Result(), cd.Result());

  CountDistinct<std::string> words;
  for (const char* w : {"a", "b", "a", "", "b", ""}) words.Add(std::string(w));
  EXPECT_EQ(words.Result(), 3);
  CountDistinct<std::string> back = RoundTrip(words);
  back.Add(std::string("a"));
  back.Add(std::string("c"));
  EXPECT_EQ(back.Result(), 4);
  ExpectTruncationRejected(words, 3);
}

TEST(StdlibAggregates, FirstLastByEventTime) {
  std::mt19937 rng(15);
  std::uniform_int_distribution<int64_t> time(0, 500);  // many equal timestamps: ties matter
  std::vector<std::pair<std::string, int64_t>> data;
  for (int i = 0; i < 3000; ++i)
    data.emplace_back(std::string("v").append(std::to_string(i)), time(rng));
  // Reference: earliest time, first arrival among ties; latest time, last arrival among ties.
  size_t first = 0, last = 0;
  for (size_t i = 1; i < data.size(); ++i) {
    if (data[i].second < data[first].second) first = i;
    if (data[i].second >= data[last].second) last = i;
  }
  First<std::string> f;
  Last<std::string> l;
  for (const auto& [v, t] : data) {
    f.Add(v, t);
    l.Add(v, t);
  }
  EXPECT_EQ(f.Result(), data[first].first);
  EXPECT_EQ(l.Result(), data[last].first);
  EXPECT_EQ(f.time(), data[first].second);
  for (uint32_t seed = 16; seed < 26; ++seed) {
    auto pf = AddInPieces<First<std::string>>(
        data.size(), seed, [&](auto& a, size_t i) { a.Add(data[i].first, data[i].second); });
    auto pl = AddInPieces<Last<std::string>>(
        data.size(), seed, [&](auto& a, size_t i) { a.Add(data[i].first, data[i].second); });
    EXPECT_EQ(pf.Result(), f.Result());
    EXPECT_EQ(pl.Result(), l.Result());
  }
  EXPECT_EQ(RoundTrip(l).Result(), l.Result());
  EXPECT_EQ(RoundTrip(f).time(), f.time());
  // Nulls are skipped even when they are the earliest.
  First<int64_t> fi;
  fi.Add(OptI(), 0);
  fi.Add(OptI(7), 10);
  EXPECT_EQ(fi.Result(), 7);
  ExpectTruncationRejected(fi, 7);
}

TEST(StdlibAggregates, ForeignOrMalformedStateIsCorruption) {
  Count count;
  count.Add();
  rt::BinaryWriter w;
  count.Serialize(w);
  Sum<int64_t> sum;
  rt::BinaryReader r(w.data());
  rt::Status s = sum.Deserialize(r);
  EXPECT_EQ(s.code(), rt::StatusCode::kCorruption);
  EXPECT_EQ(s.message(), "sum state: bad tag 'C', expected 'S'");

  // A list claiming more elements than there are bytes is rejected before allocating.
  rt::BinaryWriter lw;
  lw.PutU8('m');
  lw.PutBool(true);
  lw.PutU64(uint64_t{1} << 60);
  Min<std::vector<int64_t>> lists;
  rt::BinaryReader lr(lw.data());
  EXPECT_EQ(lists.Deserialize(lr).code(), rt::StatusCode::kCorruption);

  // A bool byte other than 0/1.
  rt::BinaryWriter bw;
  bw.PutU8('F');
  bw.PutI64(5);
  bw.PutU8(7);
  First<int64_t> first;
  rt::BinaryReader br(bw.data());
  EXPECT_EQ(first.Deserialize(br).code(), rt::StatusCode::kCorruption);
}

}  // namespace
}  // namespace flow::agg
