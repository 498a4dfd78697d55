// KafkaTestEnv without a broker: names, and that a missing broker gives a bounded, clear error
// rather than a hang. Port 1 on the loopback interface refuses every connection.

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "kafka/kafka_test_env.h"

namespace flow::test {
namespace {

constexpr const char* kNoBroker = "127.0.0.1:1";

TEST(KafkaTestEnvTest, UniqueNamesDifferAndAreValidTopicNames) {
  std::set<std::string> names;
  for (int i = 0; i < 100; ++i) names.insert(UniqueName("a b/c"));
  EXPECT_EQ(names.size(), 100u);
  for (const std::string& name : names) {
    EXPECT_EQ(name.rfind("a-b-c-", 0), 0u) << name;
    EXPECT_EQ(
        name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"),
        std::string::npos)
        << name;
  }
}

TEST(KafkaTestEnvTest, ExplicitBrokerListIsUsed) {
  EXPECT_EQ(KafkaTestEnv("10.1.2.3:9999").brokers(), "10.1.2.3:9999");
}

TEST(KafkaTestEnvTest, UnreachableBrokerIsReportedWithItsAddress) {
  KafkaTestEnv env(kNoBroker);
  rt::Status status = env.CheckReachable(Millis(2000));
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), rt::StatusCode::kUnavailable);
  EXPECT_NE(status.message().find(kNoBroker), std::string::npos) << status.ToString();
  EXPECT_NE(status.message().find("scripts/kafka start"), std::string::npos) << status.ToString();
}

TEST(KafkaTestEnvTest, CreateTopicWithoutBrokerFailsNamingTheTopic) {
  KafkaTestEnv env(kNoBroker);
  rt::Status status = env.CreateTopic("t-no-broker", 1, {}, Millis(2000));
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("t-no-broker"), std::string::npos) << status.ToString();
}

TEST(KafkaTestEnvTest, ProduceWithoutBrokerFailsNamingTheTopic) {
  KafkaTestEnv env(kNoBroker);
  rt::Status status = env.Produce("t-no-broker", {{-1, "k", "v", -1}}, Millis(2000));
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("t-no-broker"), std::string::npos) << status.ToString();
}

TEST(KafkaTestEnvTest, ConsumeWithoutBrokerFails) {
  KafkaTestEnv env(kNoBroker);
  auto records = env.ConsumeToEnd("t-no-broker", Isolation::kReadCommitted, Millis(2000));
  ASSERT_FALSE(records.ok());
  EXPECT_NE(records.status().message().find("t-no-broker"), std::string::npos)
      << records.status().ToString();
}

TEST(KafkaTestEnvTest, BadClientSettingIsNamed) {
  KafkaTestEnv env(kNoBroker);
  auto producer = env.MakeProducer({{"no.such.setting", "1"}});
  ASSERT_FALSE(producer.ok());
  EXPECT_EQ(producer.status().code(), rt::StatusCode::kInvalidArgument);
  EXPECT_NE(producer.status().message().find("no.such.setting"), std::string::npos);
}

TEST(KafkaTestEnvTest, NonPositivePartitionCountIsRejected) {
  KafkaTestEnv env(kNoBroker);
  rt::Status status = env.CreateTopic("t", 0);
  EXPECT_EQ(status.code(), rt::StatusCode::kInvalidArgument) << status.ToString();
}

}  // namespace
}  // namespace flow::test
