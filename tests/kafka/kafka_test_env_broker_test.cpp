// KafkaTestEnv against the real broker (label `kafka`): topics are created as asked, and what is
// produced reads back unchanged, so later tests can trust these helpers.

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "kafka/kafka_test_env.h"

namespace flow::test {
namespace {

class KafkaTestEnvBrokerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    rt::Status reachable = kafka_.CheckReachable(Millis(20000));
    ASSERT_TRUE(reachable.ok()) << reachable.ToString();
  }
  KafkaTestEnv kafka_;
};

TEST_F(KafkaTestEnvBrokerTest, CreatesTopicWithRequestedPartitionsOnce) {
  auto topic = kafka_.CreateUniqueTopic("env-create", 3);
  ASSERT_TRUE(topic.ok()) << topic.status().ToString();
  auto partitions = kafka_.PartitionCount(*topic);
  ASSERT_TRUE(partitions.ok()) << partitions.status().ToString();
  EXPECT_EQ(*partitions, 3);

  rt::Status again = kafka_.CreateTopic(*topic, 3);
  EXPECT_EQ(again.code(), rt::StatusCode::kInvalidArgument) << again.ToString();
}

TEST_F(KafkaTestEnvBrokerTest, MissingTopicIsNotFound) {
  auto partitions = kafka_.PartitionCount(UniqueName("env-missing"));
  ASSERT_FALSE(partitions.ok());
  EXPECT_EQ(partitions.status().code(), rt::StatusCode::kNotFound)
      << partitions.status().ToString();
}

TEST_F(KafkaTestEnvBrokerTest, ProducedRecordsReadBackInPartitionOrder) {
  auto topic = kafka_.CreateUniqueTopic("env-roundtrip", 3, {{"cleanup.policy", "delete"}});
  ASSERT_TRUE(topic.ok()) << topic.status().ToString();
  std::vector<KafkaRecord> sent;
  std::map<int32_t, std::vector<std::string>> expected;
  for (int i = 0; i < 30; ++i) {
    int32_t partition = (i * 7) % 3;
    std::string value = "value-" + std::to_string(i);
    sent.push_back({partition, "key-" + std::to_string(i), value, -1});
    expected[partition].push_back(value);
  }
  sent.push_back({2, "", "no-key", -1});
  expected[2].push_back("no-key");
  ASSERT_TRUE(kafka_.Produce(*topic, sent).ok());

  auto read = kafka_.ConsumeToEnd(*topic, Isolation::kReadUncommitted);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  std::map<int32_t, std::vector<std::string>> got;
  std::map<std::string, std::string> key_of;
  int32_t last_partition = -1;
  for (const KafkaRecord& r : *read) {
    EXPECT_GE(r.partition, last_partition) << "records not sorted by partition";
    last_partition = r.partition;
    EXPECT_EQ(r.offset, static_cast<int64_t>(got[r.partition].size()));
    got[r.partition].push_back(r.value);
    key_of[r.value] = r.key;
  }
  EXPECT_EQ(got, expected);
  EXPECT_EQ(key_of["value-4"], "key-4");
  EXPECT_EQ(key_of["no-key"], "");

  auto first_five = kafka_.ConsumeCount(*topic, 5, Isolation::kReadCommitted);
  ASSERT_TRUE(first_five.ok()) << first_five.status().ToString();
  EXPECT_EQ(first_five->size(), 5u);
}

TEST_F(KafkaTestEnvBrokerTest, ConsumeCountTimesOutWhenTooFewRecords) {
  auto topic = kafka_.CreateUniqueTopic("env-short", 1);
  ASSERT_TRUE(topic.ok()) << topic.status().ToString();
  ASSERT_TRUE(kafka_.Produce(*topic, {{0, "k", "only", -1}}).ok());
  auto read = kafka_.ConsumeCount(*topic, 2, Isolation::kReadCommitted, Millis(3000));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), rt::StatusCode::kTimedOut);
  EXPECT_NE(read.status().message().find("got 1 of 2"), std::string::npos)
      << read.status().ToString();
}

}  // namespace
}  // namespace flow::test
