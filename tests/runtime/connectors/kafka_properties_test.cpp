// Kafka client settings given by users: parsing, ${ENV} expansion, reserved keys, masking, and
// the connector factory reading a script's `properties` list.

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "flow/runtime/connectors/connector_factory.h"
#include "flow/runtime/connectors/kafka_properties.h"
#include "flow/runtime/txn/txn_sink_spec.h"

namespace flow::rt {
namespace {

const char* FakeEnv(const char* name) {
  static const std::map<std::string, std::string> env = {{"KAFKA_PASSWORD", "s3cr$t"},
                                                         {"USER_NAME", "flow"}};
  auto it = env.find(name);
  return it == env.end() ? nullptr : it->second.c_str();
}

TEST(KafkaPropertiesTest, ParsesLinesCommentsAndEnvironmentVariables) {
  auto p = ParseKafkaProperties(
      "# cluster\n"
      "security.protocol = SASL_SSL\n"
      "\n"
      "! also a comment\n"
      "sasl.username=${USER_NAME}\n"
      "sasl.password=${KAFKA_PASSWORD}\n"
      "client.id=price $$5 and $ alone\r\n",
      "test", &FakeEnv);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(*p, (KafkaProperties{{"security.protocol", "SASL_SSL"},
                                 {"sasl.username", "flow"},
                                 {"sasl.password", "s3cr$t"},
                                 {"client.id", "price $5 and $ alone"}}));
}

TEST(KafkaPropertiesTest, ErrorsNameTheLineAndNeverTheSecret) {
  auto missing = ParseKafkaProperties("a=1\nsasl.password=${NOPE}\n", "file x", &FakeEnv);
  ASSERT_EQ(missing.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("file x, line 2"), std::string::npos)
      << missing.status().message();
  EXPECT_NE(missing.status().message().find("NOPE"), std::string::npos);

  auto no_eq = ParseKafkaProperties("hunter2\n", "file x", &FakeEnv);
  ASSERT_EQ(no_eq.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(no_eq.status().message().find("hunter2"), std::string::npos)
      << no_eq.status().message();

  auto twice = ParseKafkaProperties("linger.ms=1\nlinger.ms=2\n", "f", &FakeEnv);
  EXPECT_NE(twice.status().message().find("given twice"), std::string::npos);
  auto bad_var = ParseKafkaProperties("x=${A-B}\n", "f", &FakeEnv);
  EXPECT_EQ(bad_var.status().code(), StatusCode::kInvalidArgument);
  auto empty_key = ParseKafkaProperties("=v\n", "f", &FakeEnv);
  EXPECT_EQ(empty_key.status().code(), StatusCode::kInvalidArgument);
}

TEST(KafkaPropertiesTest, FlowsOwnSettingsAreRefusedWithWhatToUseInstead) {
  for (const char* key : {"bootstrap.servers", "group.id", "isolation.level", "enable.auto.commit",
                          "enable.partition.eof", "transactional.id", "enable.idempotence",
                          "transaction.timeout.ms", "auto.offset.reset"}) {
    auto p = ParseKafkaProperties(std::string(key) + "=x\n", "f", &FakeEnv);
    ASSERT_EQ(p.status().code(), StatusCode::kInvalidArgument) << key;
    EXPECT_NE(p.status().message().find(key), std::string::npos) << p.status().message();
    EXPECT_NE(p.status().message().find("cannot be set"), std::string::npos)
        << p.status().message();
  }
  EXPECT_NE(ParseKafkaProperties("group.id=x\n", "f", &FakeEnv).status().message().find("`group:`"),
            std::string::npos);
}

TEST(KafkaPropertiesTest, SecretsAreMasked) {
  EXPECT_TRUE(IsSecretKafkaProperty("sasl.password"));
  EXPECT_TRUE(IsSecretKafkaProperty("ssl.key.password"));
  EXPECT_TRUE(IsSecretKafkaProperty("sasl.oauthbearer.client.secret"));
  EXPECT_TRUE(IsSecretKafkaProperty("sasl.jaas.config"));
  EXPECT_FALSE(IsSecretKafkaProperty("sasl.username"));
  EXPECT_EQ(MaskedKafkaValue("sasl.password", "hunter2"), "***");
  EXPECT_EQ(MaskedKafkaValue("linger.ms", "5"), "5");
}

TEST(KafkaPropertiesTest, TheFactoryReadsAScriptsPropertiesList) {
  // The script's list arrives one entry per line (exec::OptionText).
  auto ok = MakeRawSink(
      "kafka",
      {{"brokers", "127.0.0.1:1"}, {"topic", "t"}, {"properties", "linger.ms=7\nacks=all"}});
  EXPECT_TRUE(ok.ok()) << ok.status().ToString();
  auto reserved = MakeRawSource(
      "kafka", {{"brokers", "127.0.0.1:1"}, {"topic", "t"}, {"properties", "group.id=g"}});
  ASSERT_EQ(reserved.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(reserved.status().message().find("`group:`"), std::string::npos)
      << reserved.status().message();
  auto passthrough = MakeRawSource(
      "kafka", {{"brokers", "127.0.0.1:1"}, {"topic", "t"}, {"kafka.isolation.level", "x"}});
  EXPECT_EQ(passthrough.status().code(), StatusCode::kInvalidArgument);
  auto txn = TxnSinkSpecFor(
      "kafka",
      {{"brokers", "127.0.0.1:1"}, {"topic", "t"}, {"properties", "transactional.id=mine"}});
  ASSERT_EQ(txn.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(txn.status().message().find("job id"), std::string::npos) << txn.status().message();
}

}  // namespace
}  // namespace flow::rt
