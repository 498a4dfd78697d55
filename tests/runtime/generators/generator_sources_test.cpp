// The engine sources over the generators: they emit the generator's records with their event
// times, end bounded inputs, and resume from a snapshotted position.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "flow/runtime/generators/generator_sources.h"

namespace flow::rt {
namespace {

struct Auction {  // what generated code would declare for the built-in schema
  int64_t id = 0;
  int64_t seller = 0;
  std::string itemName;
  TimestampMs dateTime = 0;
};

struct Reading {
  std::string sensor;
  int64_t level = 0;
  TimestampMs ts = 0;
};

auto ConvertAuction = [](NexmarkEvent& e, Auction* out) {
  out->id = e.auction.id;
  out->seller = e.auction.seller;
  out->itemName = std::move(e.auction.itemName);
  out->dateTime = e.auction.dateTime;
};

auto FillReading = [](DatagenRng& rng, Reading* out) {
  out->sensor = rng.VocabString("sensor");
  out->level = rng.Int();
  out->ts = rng.Timestamp();
};

template <typename T>
std::vector<std::pair<T, TimestampMs>> PollAll(SourceFunction<T>& source, size_t max) {
  std::vector<std::pair<T, TimestampMs>> out;
  for (int guard = 0; guard < 100000; ++guard) {
    Batch<T> batch;
    auto r = source.PollBatch(batch, max);
    EXPECT_TRUE(r.ok());
    for (size_t i = 0; i < batch.size(); ++i)
      out.emplace_back(batch.records[i], batch.timestamps[i]);
    if (r.value() == PollResult::kEnd) return out;
  }
  ADD_FAILURE() << "source never ended";
  return out;
}

TEST(GeneratorSourcesTest, NexmarkSourceEmitsOneKindAcrossSubtasks) {
  NexmarkConfig config;
  config.events = 5000;
  auto factory = NexmarkSourceFactory<Auction>(config, NexmarkKind::kAuction, ConvertAuction);
  ASSERT_TRUE(factory.ok());
  // Reference: the auctions of the whole sequence, straight from the generator.
  auto gen = NexmarkGenerator::Create(config);
  ASSERT_TRUE(gen.ok());
  std::vector<int64_t> expected_ids;
  for (int64_t i = 0; i < 5000; ++i) {
    if (gen->KindAt(i) == NexmarkKind::kAuction) {
      NexmarkAuction a;
      gen->GenerateAuction(i, &a);
      expected_ids.push_back(a.id);
    }
  }
  ASSERT_EQ(expected_ids.size(), 300u);  // 3 in 50
  std::vector<int64_t> ids;
  for (uint32_t s = 0; s < 3; ++s) {
    auto source = (*factory)(s, 3);
    for (const auto& [a, ts] : PollAll(*source, 7)) {
      EXPECT_EQ(ts, a.dateTime);
      EXPECT_FALSE(a.itemName.empty());
      ids.push_back(a.id);
    }
  }
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, expected_ids);
}

TEST(GeneratorSourcesTest, DatagenSourceMatchesTheRngAndResumes) {
  DatagenConfig config;
  config.count = 100;
  config.seed = 9;
  auto factory = DatagenSourceFactory<Reading>(config, FillReading);
  ASSERT_TRUE(factory.ok());
  auto source = (*factory)(0, 1);
  Batch<Reading> first;
  ASSERT_TRUE(source->PollBatch(first, 40).ok());
  ASSERT_EQ(first.size(), 40u);
  BinaryWriter w;
  ASSERT_TRUE(source->SnapshotPosition(&w).ok());
  const auto rest = PollAll(*source, 16);
  ASSERT_EQ(rest.size(), 60u);
  for (size_t i = 0; i < rest.size(); ++i) {
    Reading expected;
    DatagenRng rng(config, static_cast<int64_t>(40 + i));
    FillReading(rng, &expected);
    EXPECT_EQ(rest[i].first.sensor, expected.sensor);
    EXPECT_EQ(rest[i].first.level, expected.level);
    EXPECT_EQ(rest[i].second, expected.ts);
  }
  auto restored = (*factory)(0, 1);
  BinaryReader r(w.data());
  ASSERT_TRUE(restored->RestorePosition(&r).ok());
  const auto again = PollAll(*restored, 100);
  ASSERT_EQ(again.size(), rest.size());
  for (size_t i = 0; i < again.size(); ++i) EXPECT_EQ(again[i].first.sensor, rest[i].first.sensor);
}

TEST(GeneratorSourcesTest, FactoriesRejectBadConfigs) {
  NexmarkConfig n;
  n.rate = -3;
  EXPECT_FALSE((NexmarkSourceFactory<Auction>(n, NexmarkKind::kAuction, ConvertAuction).ok()));
  DatagenConfig d;
  d.max_int = 0;
  auto f = DatagenSourceFactory<Reading>(d, FillReading);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("max"), std::string::npos);
}

// Instances of a job scaled out through Kafka would each generate the whole input: refused at
// Open, naming the instance; a job without --instance opens as before.
TEST(GeneratorSourcesTest, GeneratorsRefuseToRunAsInstances) {
  NexmarkConfig n;
  n.events = 10;
  auto nexmark = NexmarkSourceFactory<Auction>(n, NexmarkKind::kAuction, ConvertAuction);
  DatagenConfig d;
  d.count = 10;
  auto datagen = DatagenSourceFactory<Reading>(d, FillReading);
  ASSERT_TRUE(nexmark.ok() && datagen.ok());
  OperatorContext plain;
  OperatorContext instance;
  instance.instance = "host-2";
  EXPECT_TRUE((*nexmark)(0, 1)->Open(plain).ok());
  EXPECT_TRUE((*datagen)(0, 1)->Open(plain).ok());
  for (Status s : {(*nexmark)(0, 1)->Open(instance), (*datagen)(0, 1)->Open(instance)}) {
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("--instance host-2: every instance would read the whole input"),
              std::string::npos)
        << s.message();
  }
}

}  // namespace
}  // namespace flow::rt
