// Credentials for the schema registry (HTTP basic auth). No registry server we can run here
// takes logins (Apicurio 2.x authenticates through Keycloak only), so this stands up a small HTTP
// server that serves one schema to the right Authorization header and answers 401 otherwise, as
// Confluent's registry does; the Avro path itself is tested against Apicurio (codegen_io/avro).

#include <httplib.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "flow/runtime/formats/schema_registry.h"

namespace flow::rt {
namespace {

class RegistryAuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_.Get(R"(/schemas/ids/(\d+))", [](const httplib::Request& req, httplib::Response& res) {
      // base64("user:s3cret"), worked out by hand.
      if (req.get_header_value("Authorization") != "Basic dXNlcjpzM2NyZXQ=") {
        res.status = 401;
        res.set_content(R"({"error_code":401,"message":"Unauthorized"})", "application/json");
        return;
      }
      res.set_content(R"({"schema":"\"long\""})", "application/vnd.schemaregistry.v1+json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    ASSERT_GT(port_, 0);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    setenv("FLOW_TEST_REGISTRY_SECRET", "s3cret", 1);
    unsetenv("FLOW_TEST_REGISTRY_UNSET");
  }
  void TearDown() override {
    server_.stop();
    thread_.join();
  }
  std::string Url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  Result<std::shared_ptr<SchemaRegistry>> Make(const std::string& credentials) {
    SchemaRegistryOptions options;
    options.credentials = credentials;
    options.retry_timeout_ms = 60000;  // a refused login must not wait for this
    return SchemaRegistry::Make(Url(), options);
  }

  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
};

TEST_F(RegistryAuthTest, CredentialsFromTheEnvironmentAreSentAsBasicAuth) {
  auto registry = Make("user:${FLOW_TEST_REGISTRY_SECRET}");
  ASSERT_TRUE(registry.ok()) << registry.status().ToString();
  auto schema = (*registry)->AvroSchemaById(1);
  ASSERT_TRUE(schema.ok()) << schema.status().ToString();
  EXPECT_EQ(*schema, "\"long\"");
}

TEST_F(RegistryAuthTest, ARefusedLoginFailsAtOnceAndNeverShowsThePassword) {
  auto registry = Make("user:not-the-s3cret");
  ASSERT_TRUE(registry.ok());
  const auto start = std::chrono::steady_clock::now();
  auto schema = (*registry)->AvroSchemaById(1);
  const auto waited = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(schema.ok());
  EXPECT_EQ(schema.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(schema.status().message().find("HTTP 401"), std::string::npos)
      << schema.status().ToString();
  EXPECT_NE(schema.status().message().find("check the credentials"), std::string::npos);
  EXPECT_EQ(schema.status().message().find("not-the-s3cret"), std::string::npos);
  // Not retried for retry_timeout_ms (60 s): retrying cannot cure a wrong password.
  EXPECT_LT(waited, std::chrono::seconds(20));
}

TEST_F(RegistryAuthTest, ARegistryThatWantsALoginSaysSoWhenNoneIsGiven) {
  auto registry = Make("");
  ASSERT_TRUE(registry.ok());
  auto schema = (*registry)->AvroSchemaById(1);
  ASSERT_FALSE(schema.ok());
  EXPECT_EQ(schema.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(schema.status().message().find("it needs credentials"), std::string::npos)
      << schema.status().ToString();
}

TEST_F(RegistryAuthTest, BadCredentialSettingsAreClearErrorsWithoutTheirValues) {
  auto unset = Make("user:${FLOW_TEST_REGISTRY_UNSET}");
  ASSERT_FALSE(unset.ok());
  EXPECT_EQ(unset.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unset.status().message().find("FLOW_TEST_REGISTRY_UNSET"), std::string::npos);

  auto no_colon = Make("${FLOW_TEST_REGISTRY_SECRET}");
  ASSERT_FALSE(no_colon.ok());
  EXPECT_NE(no_colon.status().message().find("user:password"), std::string::npos);
  EXPECT_EQ(no_colon.status().message().find("s3cret"), std::string::npos);

  auto in_url = SchemaRegistry::Make("http://user:s3cret@127.0.0.1:1");
  ASSERT_FALSE(in_url.ok());
  EXPECT_NE(in_url.status().message().find("credentials"), std::string::npos);
  EXPECT_EQ(in_url.status().message().find("s3cret"), std::string::npos)
      << in_url.status().ToString();
  // Also when the URL is wrong in another way first.
  auto spaces = SchemaRegistry::Make("http://user:s3cret@127.0.0.1:1/a b");
  ASSERT_FALSE(spaces.ok());
  EXPECT_EQ(spaces.status().message().find("s3cret"), std::string::npos)
      << spaces.status().ToString();
  EXPECT_NE(spaces.status().message().find("http://...@127.0.0.1:1/a b"), std::string::npos)
      << spaces.status().ToString();
}

}  // namespace
}  // namespace flow::rt
