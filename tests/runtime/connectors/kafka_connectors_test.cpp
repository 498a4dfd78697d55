// KafkaSource and KafkaSink against a real broker (LABEL kafka; scripts/kafka start).

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "flow/runtime/connectors/kafka_sink.h"
#include "flow/runtime/connectors/kafka_source.h"
#include "kafka_test_util.h"

namespace flow::rt {
namespace {

using testing::ClosedPort;
using testing::CreateTopic;
using testing::KafkaBrokers;
using testing::UniqueTopic;

// Kafka's Java default partitioner, written out from its specification as an independent
// reference: murmur2 (seed 0x9747b28c), sign bit cleared, modulo the partition count.
int32_t JavaPartition(const std::string& key, int32_t partitions) {
  const uint32_t m = 0x5bd1e995;
  const auto* d = reinterpret_cast<const unsigned char*>(key.data());
  uint32_t len = static_cast<uint32_t>(key.size());
  uint32_t h = 0x9747b28c ^ len;
  for (uint32_t i = 0; i + 4 <= len; i += 4) {
    uint32_t k = d[i] | (uint32_t{d[i + 1]} << 8) | (uint32_t{d[i + 2]} << 16) |
                 (uint32_t{d[i + 3]} << 24);
    k *= m;
    k ^= k >> 24;
    k *= m;
    h *= m;
    h ^= k;
  }
  uint32_t tail = len & ~3u;
  switch (len % 4) {
    case 3: h ^= uint32_t{d[tail + 2]} << 16; [[fallthrough]];
    case 2: h ^= uint32_t{d[tail + 1]} << 8; [[fallthrough]];
    case 1: h ^= d[tail]; h *= m;
  }
  h ^= h >> 13;
  h *= m;
  h ^= h >> 15;
  return static_cast<int32_t>((h & 0x7fffffff) % static_cast<uint32_t>(partitions));
}

struct Got {
  int32_t partition;
  int64_t offset;
  std::string key;
  std::string payload;
  bool operator<(const Got& o) const {
    return std::tie(partition, offset) < std::tie(o.partition, o.offset);
  }
};

// Polls until `want` records arrived or a generous deadline passed (a safety net, not a timing
// assertion: the count check below fails if records are missing).
std::vector<Got> ReadN(KafkaSource* src, size_t want, size_t batch = 64) {
  std::vector<Got> got;
  std::vector<RawRecord> recs;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (got.size() < want && std::chrono::steady_clock::now() < deadline) {
    recs.clear();
    Result<PollResult> r = src->Poll(&recs, std::min(batch, want - got.size()), 200);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) break;
    for (const auto& rec : recs) {
      got.push_back({rec.partition, rec.offset, std::string(rec.key), std::string(rec.payload)});
    }
  }
  return got;
}

class KafkaConnectorsTest : public ::testing::Test {
 protected:
  static constexpr int kPartitions = 4;
  static constexpr int kRecords = 400;

  void SetUp() override {
    topic_ = UniqueTopic("conn");
    std::string err = CreateTopic(topic_, kPartitions);
    ASSERT_EQ(err, "") << "is the broker running (scripts/kafka start)? " << KafkaBrokers();
  }

  // Writes kRecords keyed records; returns payload -> key.
  std::map<std::string, std::string> Produce() {
    KafkaSink sink({.brokers = KafkaBrokers(), .topic = topic_});
    EXPECT_TRUE(sink.Open(0, 1).ok());
    std::map<std::string, std::string> sent;
    for (int i = 0; i < kRecords; ++i) {
      std::string key = "key-" + std::to_string(i % 37);
      std::string payload = "{\"i\":" + std::to_string(i) + "}";
      EXPECT_TRUE(sink.Write(key, payload, 1000 + i).ok());
      sent[payload] = key;
    }
    Status s = sink.Flush();
    EXPECT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(sink.delivered(), static_cast<uint64_t>(kRecords));
    EXPECT_TRUE(sink.Close().ok());
    return sent;
  }

  std::string topic_;
};

TEST_F(KafkaConnectorsTest, ProduceThenReadAtParallelism1And3) {
  std::map<std::string, std::string> sent = Produce();
  for (uint32_t p : {1u, 3u}) {
    std::map<std::string, int> seen;
    size_t total = 0;
    for (uint32_t s = 0; s < p; ++s) {
      KafkaSource src({.brokers = KafkaBrokers(), .topic = topic_});
      ASSERT_TRUE(src.Open(s, p).ok());
      size_t mine = 0;
      for (const auto& [part, off] : src.positions()) {
        EXPECT_EQ(static_cast<uint32_t>(part) % p, s);
        (void)off;
      }
      // How many records this subtask's partitions hold, from the reference partitioner.
      for (const auto& [payload, key] : sent) {
        if (static_cast<uint32_t>(JavaPartition(key, kPartitions)) % p == s) ++mine;
      }
      std::vector<Got> got = ReadN(&src, mine);
      ASSERT_EQ(got.size(), mine) << "subtask " << s << " of " << p;
      for (const Got& g : got) {
        EXPECT_EQ(static_cast<uint32_t>(g.partition) % p, s);
        EXPECT_EQ(g.partition, JavaPartition(g.key, kPartitions)) << g.key;
        ASSERT_TRUE(sent.count(g.payload)) << g.payload;
        EXPECT_EQ(sent[g.payload], g.key);
        ++seen[g.payload];
      }
      total += got.size();
      // Nothing more than expected arrives.
      std::vector<RawRecord> extra;
      ASSERT_TRUE(src.Poll(&extra, 10, 300).ok());
      EXPECT_TRUE(extra.empty());
      ASSERT_TRUE(src.Close().ok());
    }
    EXPECT_EQ(total, sent.size());
    for (const auto& [payload, n] : seen) EXPECT_EQ(n, 1) << payload;
    EXPECT_EQ(seen.size(), sent.size());
  }
}

TEST_F(KafkaConnectorsTest, RestoreFromSnapshotContinuesExactly) {
  Produce();
  KafkaSource first({.brokers = KafkaBrokers(), .topic = topic_});
  ASSERT_TRUE(first.Open(0, 1).ok());
  std::vector<Got> before = ReadN(&first, 150, 50);
  ASSERT_EQ(before.size(), 150u);
  BinaryWriter w;
  ASSERT_TRUE(first.SnapshotPosition(&w).ok());
  std::vector<Got> rest = ReadN(&first, kRecords - 150);
  ASSERT_EQ(rest.size(), static_cast<size_t>(kRecords - 150));

  KafkaSource second({.brokers = KafkaBrokers(), .topic = topic_, .start = KafkaStart::kLatest});
  ASSERT_TRUE(second.Open(0, 1).ok());
  BinaryReader r(w.data());
  ASSERT_TRUE(second.RestorePosition(&r).ok());
  std::vector<Got> again = ReadN(&second, kRecords - 150);
  std::set<Got> a(rest.begin(), rest.end()), b(again.begin(), again.end());
  ASSERT_EQ(again.size(), rest.size());
  EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const Got& x, const Got& y) {
    return x.partition == y.partition && x.offset == y.offset && x.payload == y.payload;
  }));
  // Restored offsets are exact even though `start` says latest.
  std::set<Got> all(before.begin(), before.end());
  for (const Got& g : again) EXPECT_TRUE(all.insert(g).second) << "duplicate " << g.payload;
  EXPECT_EQ(all.size(), static_cast<size_t>(kRecords));
}

TEST_F(KafkaConnectorsTest, LatestAndCommittedStarts) {
  Produce();
  KafkaSource latest({.brokers = KafkaBrokers(), .topic = topic_, .start = KafkaStart::kLatest});
  ASSERT_TRUE(latest.Open(0, 1).ok());
  std::vector<RawRecord> recs;
  ASSERT_TRUE(latest.Poll(&recs, 10, 500).ok());
  EXPECT_TRUE(recs.empty());  // only records produced after Open

  std::string group = "g-" + topic_;
  KafkaSource reader({.brokers = KafkaBrokers(), .topic = topic_, .group_id = group});
  ASSERT_TRUE(reader.Open(0, 1).ok());
  ASSERT_EQ(ReadN(&reader, 100).size(), 100u);
  ASSERT_TRUE(reader.CommitOffsets().ok());
  KafkaSource committed({.brokers = KafkaBrokers(), .topic = topic_, .group_id = group,
                         .start = KafkaStart::kCommitted});
  ASSERT_TRUE(committed.Open(0, 1).ok());
  EXPECT_EQ(committed.positions(), reader.positions());
  EXPECT_EQ(ReadN(&committed, kRecords - 100).size(), static_cast<size_t>(kRecords - 100));
}

TEST_F(KafkaConnectorsTest, ExplicitPartitionAndMissingTopic) {
  KafkaSink sink({.brokers = KafkaBrokers(), .topic = topic_,
                  .partitioner = KafkaPartitioner::kExplicit, .partition = 2});
  ASSERT_TRUE(sink.Open(0, 1).ok());
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(sink.Write("k" + std::to_string(i), "x", 0).ok());
  ASSERT_TRUE(sink.Close().ok());
  KafkaSource src({.brokers = KafkaBrokers(), .topic = topic_});
  Status opened = src.Open(0, 1);
  ASSERT_TRUE(opened.ok()) << opened.ToString();
  std::vector<Got> got = ReadN(&src, 20);
  EXPECT_EQ(got.size(), 20u);
  for (const Got& g : got) EXPECT_EQ(g.partition, 2);

  KafkaSink bad({.brokers = KafkaBrokers(), .topic = topic_,
                 .partitioner = KafkaPartitioner::kExplicit, .partition = kPartitions});
  EXPECT_EQ(bad.Open(0, 1).code(), StatusCode::kInvalidArgument);
  KafkaSource missing({.brokers = KafkaBrokers(), .topic = topic_ + "-absent",
                       .metadata_timeout_ms = 5000});
  EXPECT_EQ(missing.Open(0, 1).code(), StatusCode::kNotFound);
}

TEST(KafkaUnreachable, OpenReturnsUnavailable) {
  std::string brokers = "127.0.0.1:" + std::to_string(ClosedPort());
  KafkaSource src({.brokers = brokers, .topic = "t", .metadata_timeout_ms = 2000});
  Status s = src.Open(0, 1);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  EXPECT_NE(s.message().find(brokers), std::string::npos) << s.message();
  KafkaSink sink({.brokers = brokers, .topic = "t", .metadata_timeout_ms = 2000});
  s = sink.Open(0, 1);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
}

TEST(KafkaOptions, RejectedPropertyIsInvalidArgument) {
  KafkaSource src({.brokers = "127.0.0.1:1", .topic = "t",
                   .properties = {{"no.such.property", "1"}}});
  Status s = src.Open(0, 1);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("no.such.property"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace flow::rt
