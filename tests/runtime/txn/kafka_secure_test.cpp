// Kafka connectors against a secured broker (docs/connectors.md, "Secured clusters"): an
// exactly-once job reads and writes over SASL_SSL and its output is every input record exactly
// once; a wrong password or a broker certificate the client does not trust fails the source, the
// exactly-once sink and the job at once (kInvalidArgument, exit code 1, no restarts) with a
// message naming the cause and the brokers, also with the default timeouts.
//
// The test runs its own secure broker (scripts/kafka start with FLOW_KAFKA_SECURE=1 on
// FLOW_SECURE_KAFKA_PORT, default 19620; SASL_SSL on port + 2), started if not running and
// stopped at the end if started here. All tests run in one process (one broker start).

#include <librdkafka/rdkafka.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "flow/runtime/connectors/kafka_source.h"
#include "flow/runtime/engine/job.h"
#include "flow/runtime/engine/raw_adapters.h"
#include "flow/runtime/engine/txn_sink.h"
#include "flow/runtime/txn/kafka_exactly_once_sink.h"
#include "kafka/kafka_test_env.h"

namespace flow::rt {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using test::Isolation;
using test::KafkaSettings;
using test::KafkaTestEnv;
using test::UniqueName;

constexpr const char* kUser = "flow";
constexpr const char* kPassword = "flow-secure-test";
// A refused login or an untrusted certificate must fail well within this, whatever the timeouts.
constexpr int64_t kPromptMs = 5000;

int64_t MsSince(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
}

int Port() {
  const char* v = std::getenv("FLOW_SECURE_KAFKA_PORT");
  return v != nullptr && *v != '\0' ? std::atoi(v) : 19620;
}
int SecurePort() {
  return Port() + 2;
}
std::string BrokerDir() {
  return fmt::format("/tmp/flow-kafka-{}", Port());
}
std::string SecureBrokers() {
  return fmt::format("127.0.0.1:{}", SecurePort());
}

// Every setting the script reads is given, so a FLOW_KAFKA_* of the caller's shell (meant for
// the shared broker) cannot redirect this one.
int KafkaScript(const std::string& cmd) {
  return std::system(
      fmt::format("FLOW_KAFKA_PORT={} FLOW_KAFKA_CONTROLLER_PORT={} FLOW_KAFKA_SECURE_PORT={} "
                  "FLOW_KAFKA_DIR={} FLOW_KAFKA_SECURE=1 FLOW_KAFKA_SASL_USER={} "
                  "FLOW_KAFKA_SASL_PASSWORD={} {}/scripts/kafka {} >> {}/secure-kafka.log 2>&1",
                  Port(), Port() + 1, SecurePort(), BrokerDir(), kUser, kPassword, FLOW_SOURCE_DIR,
                  cmd, fs::temp_directory_path().string())
          .c_str());
}

// librdkafka before 2.6.1 answers the SCRAM challenge in a way Kafka 4 brokers reject
// (librdkafka issue 4895): it then uses PLAIN, which the secure listener also offers, inside TLS.
std::string Mechanism() {
  return rd_kafka_version() >= 0x020601ff ? "SCRAM-SHA-256" : "PLAIN";
}

std::map<std::string, std::string> SecureProperties(const std::string& password = kPassword,
                                                    const std::string& ca = BrokerDir() +
                                                                            "/tls/ca.pem") {
  return {{"security.protocol", "SASL_SSL"},
          {"sasl.mechanism", Mechanism()},
          {"sasl.username", kUser},
          {"sasl.password", password},
          {"ssl.ca.location", ca}};
}

class KafkaSecureTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    started_ = KafkaScript("status") != 0;
    if (started_) start_status_ = KafkaScript("start");
  }
  static void TearDownTestSuite() {
    if (started_) (void)KafkaScript("stop");
  }
  void SetUp() override {
    ASSERT_EQ(start_status_, 0) << "cannot start the secure broker; see "
                                << fs::temp_directory_path().string() << "/secure-kafka.log";
    env_ = KafkaTestEnv(SecureBrokers(), SecureProperties());
    ASSERT_TRUE(env_.CheckReachable().ok()) << env_.CheckReachable().ToString();
    dir_ = fs::temp_directory_path() / UniqueName("flow-kafka-secure");
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A CA certificate that did not sign the broker's.
  std::string OtherCa() {
    const fs::path pem = dir_ / "other-ca.pem";
    const std::string cmd = fmt::format(
        "openssl req -x509 -newkey rsa:2048 -nodes -keyout {}/other-ca.key -out {} -subj "
        "/CN=other-ca -days 1 "
        ">/dev/null 2>&1",
        dir_.string(), pem.string());
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return pem.string();
  }

  static bool started_;
  static int start_status_;
  KafkaTestEnv env_;
  fs::path dir_;
};
bool KafkaSecureTest::started_ = false;
int KafkaSecureTest::start_status_ = 0;

struct JobRun {
  Status result;
  int64_t ms = 0;
};

// Kafka source `in` (parallelism 2) -> exactly-once Kafka sink `out`, both with `properties`.
// With `until_committed` > 0 the job runs until that many records are committed, then stops.
// `job_properties` go to JobOptions::kafka_properties (--kafka-properties) instead.
JobRun RunJob(const fs::path& dir, const std::string& in, const std::string& out,
              const std::map<std::string, std::string>& properties,
              const KafkaTestEnv* reader = nullptr, size_t until_committed = 0,
              const std::map<std::string, std::string>& job_properties = {}) {
  JobOptions o;
  o.kafka_properties = job_properties;
  o.parallelism = 2;
  o.job_id = UniqueName("secure");
  o.checkpoint.state_dir = (dir / "state").string();
  o.checkpoint.interval_ms = 200;
  o.checkpoint.options.interval_ms = 200;
  // Retriable failures would be restarted: a security failure must not be.
  o.checkpoint.restart.max_attempts = 3;
  o.checkpoint.restart.initial_delay_ms = 100;
  Job job(o);
  KafkaSourceOptions source{.brokers = SecureBrokers(), .topic = in, .properties = properties};
  auto make_raw = [source] { return std::make_unique<KafkaSource>(source); };
  auto decode = [](const RawRecord& r, std::string* v) {
    *v = std::string(r.payload);
    return Status::Ok();
  };
  auto s = job.Source<std::string>("in", RawSourceAdapter<std::string>(make_raw, decode),
                                   WatermarkSpec{.mode = TimeMode::kNone});
  KafkaTxnSinkConfig sink;
  sink.brokers = SecureBrokers();
  sink.sink.topic = out;
  sink.properties = properties;
  ExactlyOnceSink<std::string>(
      s, job, "out", KafkaTxnSink(sink),
      [](const std::string& v, std::string*, std::string* payload) { *payload = v; });
  JobRun run;
  std::atomic<bool> done{false};
  const auto t0 = Clock::now();
  std::thread runner([&] {
    run.result = job.Execute();
    run.ms = MsSince(t0);
    done.store(true);
  });
  if (until_committed > 0 && reader != nullptr) {
    auto got =
        reader->ConsumeCount(out, until_committed, Isolation::kReadCommitted, test::Millis(60000));
    EXPECT_TRUE(got.ok()) << got.status().ToString();
  }
  // A job that should fail by itself gets 60 s before it is stopped (the assertions then fail).
  while (until_committed == 0 && !done.load() && MsSince(t0) < 60000) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  job.RequestStop();
  runner.join();
  return run;
}

TEST_F(KafkaSecureTest, ExactlyOnceJobOverSaslSslWritesEveryRecordOnce) {
  constexpr int kRecords = 2000;
  auto in = env_.CreateUniqueTopic("secure-in", 3);
  ASSERT_TRUE(in.ok()) << in.status().ToString();
  auto out = env_.CreateUniqueTopic("secure-out", 2);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  std::vector<test::KafkaRecord> input;
  for (int i = 0; i < kRecords; ++i)
    input.push_back({.key = std::to_string(i % 11), .value = fmt::format("r{}", i)});
  ASSERT_TRUE(env_.Produce(*in, input).ok());
  JobRun run = RunJob(dir_, *in, *out, SecureProperties(), &env_, kRecords);
  ASSERT_TRUE(run.result.ok()) << run.result.ToString();
  // An independent read_committed reader over SASL_SSL: the input, each record once.
  auto got = env_.ConsumeToEnd(*out, Isolation::kReadCommitted);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  std::map<std::string, int> counts;
  for (const auto& r : *got) ++counts[r.value];
  EXPECT_EQ(got->size(), static_cast<size_t>(kRecords));
  for (int i = 0; i < kRecords; ++i) ASSERT_EQ(counts[fmt::format("r{}", i)], 1) << "record " << i;
  std::printf("mechanism %s; job ran %lld ms\n", Mechanism().c_str(),
              static_cast<long long>(run.ms));
}

// The settings given once for the whole job (--kafka-properties) reach every client: the source,
// the transactional producer and the sink's admin and progress clients. The connectors get none.
TEST_F(KafkaSecureTest, JobWidePropertiesReachEveryKafkaClient) {
  constexpr int kRecords = 300;
  auto in = env_.CreateUniqueTopic("secure-in", 2);
  ASSERT_TRUE(in.ok()) << in.status().ToString();
  auto out = env_.CreateUniqueTopic("secure-out", 2);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  std::vector<test::KafkaRecord> input;
  for (int i = 0; i < kRecords; ++i) input.push_back({.key = "", .value = fmt::format("j{}", i)});
  ASSERT_TRUE(env_.Produce(*in, input).ok());
  JobRun run = RunJob(dir_, *in, *out, {}, &env_, kRecords, SecureProperties());
  ASSERT_TRUE(run.result.ok()) << run.result.ToString();
  auto got = env_.ConsumeToEnd(*out, Isolation::kReadCommitted);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->size(), static_cast<size_t>(kRecords));
}

// Defaults everywhere (metadata_timeout 10 s, retry_timeout 60 s, operation_timeout 30 s): the
// failure must still come at once.
void ExpectPromptSecurityFailure(const std::map<std::string, std::string>& properties,
                                 const std::string& cause, const std::string& topic) {
  {
    KafkaSource source({.brokers = SecureBrokers(), .topic = topic, .properties = properties});
    const auto t0 = Clock::now();
    Status st = source.Open(0, 1);
    const int64_t ms = MsSince(t0);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
    EXPECT_NE(st.message().find(cause), std::string::npos) << st.ToString();
    EXPECT_NE(st.message().find(SecureBrokers()), std::string::npos) << st.ToString();
    EXPECT_LT(ms, kPromptMs) << st.ToString();
    std::printf("source Open: %lld ms: %s\n", static_cast<long long>(ms), st.ToString().c_str());
  }
  {
    KafkaTransactionOptions o;
    o.brokers = SecureBrokers();
    o.job_id = UniqueName("secure-fail");
    o.checkpoints.interval_ms = 200;
    o.properties = properties;
    const auto t0 = Clock::now();
    auto group = KafkaTransactionGroup::Start(o, 1);
    const int64_t ms = MsSince(t0);
    ASSERT_FALSE(group.ok());
    EXPECT_EQ(group.status().code(), StatusCode::kInvalidArgument) << group.status().ToString();
    EXPECT_NE(group.status().message().find(cause), std::string::npos) << group.status().ToString();
    EXPECT_NE(group.status().message().find(SecureBrokers()), std::string::npos)
        << group.status().ToString();
    EXPECT_LT(ms, kPromptMs) << group.status().ToString();
    std::printf("exactly-once sink start: %lld ms: %s\n", static_cast<long long>(ms),
                group.status().ToString().c_str());
  }
}

TEST_F(KafkaSecureTest, WrongPasswordFailsAtOnceNamingTheLogin) {
  auto topic = env_.CreateUniqueTopic("secure-auth", 1);
  ASSERT_TRUE(topic.ok()) << topic.status().ToString();
  const auto wrong = SecureProperties("not-the-password");
  ExpectPromptSecurityFailure(wrong, "SASL authentication failed", *topic);
  // The whole job: not retried (the restart policy would allow 3), exit code 1 (Job::Run).
  JobRun run = RunJob(dir_, *topic, *topic, wrong);
  EXPECT_EQ(run.result.code(), StatusCode::kInvalidArgument) << run.result.ToString();
  EXPECT_NE(run.result.message().find("SASL authentication failed"), std::string::npos)
      << run.result.ToString();
  EXPECT_LT(run.ms, 2 * kPromptMs) << run.result.ToString();
  std::printf("job: %lld ms: %s\n", static_cast<long long>(run.ms), run.result.ToString().c_str());
}

TEST_F(KafkaSecureTest, UntrustedCertificateFailsAtOnceNamingTheVerification) {
  auto topic = env_.CreateUniqueTopic("secure-tls", 1);
  ASSERT_TRUE(topic.ok()) << topic.status().ToString();
  const std::string ca = OtherCa();
  ASSERT_TRUE(fs::exists(ca));
  ExpectPromptSecurityFailure(SecureProperties(kPassword, ca), "certificate verify failed", *topic);
}

}  // namespace
}  // namespace flow::rt
