// Names, partition counts, the partition of a key and the Kafka key of a repartition topic. The
// partition reference is the contiguous-range rule written out independently: partition p of P
// holds key groups [ceil(p*M/P), ceil((p+1)*M/P)).

#include "flow/runtime/shuffle/repartition_topic.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace flow::rt::shuffle {
namespace {

TEST(RepartitionTopicTest, NameIsTheJobAndTheOperator) {
  auto name = RepartitionTopicName("orders-eu", "bids.window2");
  ASSERT_TRUE(name.ok()) << name.status().ToString();
  EXPECT_EQ(*name, "__flow_repartition_orders-eu.bids.window2");
}

TEST(RepartitionTopicTest, NamesKafkaCannotTakeAreRefusedNamingTheOperator) {
  auto bad = RepartitionTopicName("j", "bids window");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("`bids window`"), std::string::npos);
  EXPECT_FALSE(RepartitionTopicName("j", "b\xc3\xa9ts.window").ok());
  EXPECT_FALSE(RepartitionTopicName("j", "").ok());

  // 19 + job + 1 + operator characters; Kafka takes 249.
  const std::string job(200, 'j');
  EXPECT_TRUE(RepartitionTopicName(job, std::string(29, 'o')).ok());
  auto long_name = RepartitionTopicName(job, std::string(30, 'o'));
  ASSERT_FALSE(long_name.ok());
  EXPECT_NE(long_name.status().message().find("250 characters"), std::string::npos)
      << long_name.status().message();
  EXPECT_NE(long_name.status().message().find("--job-id"), std::string::npos);
}

TEST(RepartitionTopicTest, PartitionCountIsBetweenOneAndTheMaxParallelism) {
  EXPECT_TRUE(ValidateRepartitionPartitions(1, 128).ok());
  EXPECT_TRUE(ValidateRepartitionPartitions(128, 128).ok());
  for (int32_t bad : {0, -1, 129}) {
    Status s = ValidateRepartitionPartitions(bad, 128);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(s.message().find(std::to_string(bad)), std::string::npos) << s.message();
  }
}

TEST(RepartitionTopicTest, EachPartitionHoldsAContiguousRangeOfKeyGroups) {
  for (uint32_t max_p : {1u, 7u, 128u, 1000u}) {
    for (int32_t partitions = 1; partitions <= static_cast<int32_t>(std::min(max_p, 40u));
         ++partitions) {
      for (int32_t p = 0; p < partitions; ++p) {
        // ceil(p * M / P) without floating point.
        const uint64_t from = (uint64_t{static_cast<uint32_t>(p)} * max_p + partitions - 1) /
                              static_cast<uint64_t>(partitions);
        const uint64_t to = (uint64_t{static_cast<uint32_t>(p) + 1} * max_p + partitions - 1) /
                            static_cast<uint64_t>(partitions);
        ASSERT_LT(from, to) << "partition " << p << " of " << partitions << " has no key group";
        for (uint64_t kg = from; kg < to; ++kg) {
          ASSERT_EQ(PartitionOfKeyGroup(static_cast<uint32_t>(kg), max_p, partitions), p)
              << "key group " << kg << ", " << partitions << " partitions, max " << max_p;
        }
      }
    }
  }
}

TEST(RepartitionTopicTest, AKeyHashGoesToThePartitionOfItsKeyGroup) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 10000; ++i) {
    const uint64_t hash = rng();
    const uint32_t kg = static_cast<uint32_t>(hash % 128);
    EXPECT_EQ(PartitionOfHash(hash, 128, 6), static_cast<int32_t>(kg * 6 / 128));
  }
}

TEST(RepartitionTopicTest, KeysAreTheHashInEightLittleEndianBytes) {
  EXPECT_EQ(EncodeRepartitionKey(0x0102030405060708ULL),
            std::string("\x08\x07\x06\x05\x04\x03\x02\x01", 8));
  std::mt19937_64 rng(11);
  for (int i = 0; i < 1000; ++i) {
    const uint64_t hash = rng();
    auto back = DecodeRepartitionKey(EncodeRepartitionKey(hash), "t");
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, hash);
  }
  for (size_t n : {0u, 7u, 9u}) {
    auto bad = DecodeRepartitionKey(std::string(n, 'k'), "topic t partition 2 offset 9");
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.status().code(), StatusCode::kCorruption);
    EXPECT_NE(bad.status().message().find("topic t partition 2 offset 9"), std::string::npos);
  }
}

}  // namespace
}  // namespace flow::rt::shuffle
