// Kafka sinks while their cluster is down (docs/exactly-once.md, "Why a crash anywhere is safe";
// docs/connectors.md, "Kafka" sink): no wait outlasts its documented bound, cancellation of the
// job ends them early, and an exactly-once job restarts and completes exactly once after the
// cluster is back. The tests kill and start a broker of their own (scripts/kafka on
// FLOW_CHAOS_KAFKA_PORT, default 19392, like tests/chaos, and under the same RESOURCE_LOCK), so
// the shared broker is never touched; the one started here is stopped at the end.

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "flow/runtime/connectors/kafka_sink.h"
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
using test::KafkaTestEnv;
using test::UniqueName;

int64_t MsSince(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
}

TimestampMs RecentMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int Port() {
  const char* v = std::getenv("FLOW_CHAOS_KAFKA_PORT");
  return v != nullptr && *v != '\0' ? std::atoi(v) : 19392;
}

int KafkaScript(const std::string& cmd) {
  return std::system(
      fmt::format("FLOW_KAFKA_PORT={} {}/scripts/kafka {} >> {}/outage-kafka.log 2>&1", Port(),
                  FLOW_SOURCE_DIR, cmd, fs::temp_directory_path().string())
          .c_str());
}

class KafkaOutageTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    started_ = KafkaScript("status") != 0;
    // Its own broker from empty data: a restart after a kill recovers every partition it holds
    // (tests/chaos/chaos_support.h).
    if (started_) {
      ASSERT_EQ(KafkaScript("wipe"), 0) << "cannot wipe the test's own broker";
    }
  }
  static void TearDownTestSuite() {
    if (started_) (void)KafkaScript("stop");
  }
  void SetUp() override {
    // Every test kills the broker; the next one starts it again (data is kept).
    if (KafkaScript("status") != 0) {
      ASSERT_EQ(KafkaScript("start"), 0) << "cannot start the test's own broker";
    }
    env_ = KafkaTestEnv(fmt::format("127.0.0.1:{}", Port()));
    ASSERT_TRUE(env_.CheckReachable().ok());
    dir_ = fs::temp_directory_path() / UniqueName("flow-kafka-outage");
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static bool started_;
  KafkaTestEnv env_;
  fs::path dir_;
};
bool KafkaOutageTest::started_ = false;

// With the cluster down, a write that finds the producer queue full gives up after
// retry_timeout (records would otherwise wait for message.timeout.ms = transaction.timeout.ms),
// and a commit gives up when the job is cancelled instead of after its bound.
TEST_F(KafkaOutageTest, GroupWaitsEndWithinTheirBoundWhileTheClusterIsDown) {
  auto topic = env_.CreateUniqueTopic("outage-group", 2);
  ASSERT_TRUE(topic.ok()) << topic.status().ToString();
  std::atomic<bool> cancel{false};
  auto start = [&](int retry_timeout_ms) {
    KafkaTransactionOptions o;
    o.brokers = env_.brokers();
    o.job_id = UniqueName("outage");
    o.transaction_timeout_ms = 120000;
    o.checkpoints.interval_ms = 1000;
    o.checkpoints.timeout_ms = 10000;
    o.operation_timeout_ms = 3000;
    o.retry_timeout_ms = retry_timeout_ms;
    o.cancel = &cancel;
    o.properties = {{"queue.buffering.max.messages", "20"}};
    auto group = KafkaTransactionGroup::Start(std::move(o), 1);
    EXPECT_TRUE(group.ok()) << group.status().ToString();
    return group.ok() ? std::move(group).value() : nullptr;
  };
  std::unique_ptr<KafkaTransactionGroup> writer = start(4000);
  std::unique_ptr<KafkaTransactionGroup> committer = start(60000);
  ASSERT_TRUE(writer && committer);
  ASSERT_TRUE(writer->WaitForLeaders(*topic, 2).ok());
  ASSERT_TRUE(committer->WaitForLeaders(*topic, 2).ok());
  std::vector<std::string> payloads;
  for (int i = 0; i < 200; ++i) payloads.push_back(fmt::format("r{}", i));
  std::vector<TxnRecord> records;
  for (const std::string& p : payloads) records.push_back(TxnRecord{"", p, RecentMs()});
  size_t written = 0;
  ASSERT_TRUE(committer->WriteBatch(0, *topic, -1, std::span(records).first(10), &written).ok());
  ASSERT_TRUE(committer->PreCommit(0, 1).ok());

  ASSERT_EQ(KafkaScript("kill"), 0);
  auto t0 = Clock::now();
  Status s = writer->WriteBatch(0, *topic, -1, records, &written);
  const int64_t write_ms = MsSince(t0);
  ASSERT_FALSE(s.ok()) << "200 records into a queue of 20 with the cluster down were taken";
  EXPECT_TRUE(s.code() == StatusCode::kAborted || s.code() == StatusCode::kUnavailable)
      << s.ToString();
  EXPECT_NE(s.message().find("still full"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(env_.brokers()), std::string::npos) << s.message();
  // retry_timeout 4 s, then the abort: a flush of at most 3 s and an abort of at most 3 s.
  EXPECT_LT(write_ms, 4000 + 3000 + 3000 + 3000) << s.ToString();
  EXPECT_GE(write_ms, 4000) << s.ToString();

  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    cancel.store(true);
  });
  t0 = Clock::now();
  s = committer->Commit(1);
  const int64_t commit_ms = MsSince(t0);
  canceller.join();
  EXPECT_EQ(s.code(), StatusCode::kCancelled) << s.ToString();
  EXPECT_LT(commit_ms, 1500 + 2000)
      << "a cancelled commit must not wait out retry_timeout (60 s): " << s.ToString();
  EXPECT_EQ(committer->Commit(1).code(), StatusCode::kCancelled)
      << "a cancelled group stays failed";
  writer.reset();
  t0 = Clock::now();
  committer.reset();
  EXPECT_LT(MsSince(t0), 10000) << "closing a group of a dead cluster is bounded";
}

// Emits records forever (`emit`), or nothing until `fail` is set and then fails the job.
class ScriptedSource final : public SourceFunction<std::string> {
 public:
  ScriptedSource(bool emit, std::atomic<bool>* fail) : emit_(emit), fail_(fail) {}
  Result<PollResult> PollBatch(Batch<std::string>& out, size_t max) override {
    if (fail_->load()) return Status::InvalidArgument("injected source failure");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (!emit_) return PollResult::kIdle;
    for (size_t i = 0; i < std::min<size_t>(max, 50); ++i)
      out.Add(fmt::format("v{}", next_++), RecentMs());
    return PollResult::kRecords;
  }

 private:
  bool emit_;
  std::atomic<bool>* fail_;
  int64_t next_ = 0;
};

// The at-least-once sink blocks on a full queue while the cluster is down (backpressure, up to
// delivery_timeout = 120 s here) and its flush at the end would wait flush_timeout (120 s): a job
// that fails meanwhile must end at once, not after those bounds.
TEST_F(KafkaOutageTest, AtLeastOnceSinkDoesNotHoldAFailedJob) {
  auto topic = env_.CreateUniqueTopic("outage-alo", 2);
  ASSERT_TRUE(topic.ok()) << topic.status().ToString();
  std::atomic<bool> fail{false};
  JobOptions o;
  o.parallelism = 1;
  o.checkpoint.restart.max_attempts = 0;
  Job job(o);
  // gen -> Kafka blocks on the full queue (and its source behind it); the failure comes from a
  // second pipeline of the same job, as a failure elsewhere in a real job would.
  std::atomic<bool> never{false};
  auto src = job.Source<std::string>(
      "gen",
      [&never](uint32_t, uint32_t) { return std::make_unique<ScriptedSource>(true, &never); },
      WatermarkSpec{.mode = TimeMode::kNone});
  KafkaSinkOptions sink{.brokers = env_.brokers(),
                        .topic = *topic,
                        .delivery_timeout_ms = 120000,
                        .flush_timeout_ms = 120000,
                        .properties = {{"queue.buffering.max.messages", "100"}}};
  src.Sink("out", RawSinkAdapter<std::string>([sink] { return std::make_unique<KafkaSink>(sink); },
                                              [](const std::string& v, std::string*,
                                                 std::string* payload) { *payload = v; }));
  auto trigger = job.Source<std::string>(
      "trigger",
      [&fail](uint32_t, uint32_t) { return std::make_unique<ScriptedSource>(false, &fail); },
      WatermarkSpec{.mode = TimeMode::kNone});
  trigger.Sink("collect", CollectingSinkFactory(std::make_shared<Collected<std::string>>()));
  Status result;
  std::atomic<bool> done{false};
  std::thread runner([&] {
    result = job.Execute();
    done.store(true);
  });
  // Let records flow, then take the cluster away and let the queue fill.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  ASSERT_EQ(KafkaScript("kill"), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const auto t0 = Clock::now();
  fail.store(true);
  while (!done.load() && MsSince(t0) < 150000)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const int64_t end_ms = MsSince(t0);
  runner.join();
  EXPECT_EQ(result.code(), StatusCode::kInvalidArgument) << result.ToString();
  EXPECT_NE(result.message().find("injected source failure"), std::string::npos)
      << result.ToString();
  EXPECT_LT(end_ms, 5000) << "the failed job waited for its Kafka sink";
}

// An exactly-once job (retry_timeout 3 s) loses its cluster for longer than that: the attempt
// fails instead of waiting for transaction.timeout.ms (the broker's 15 min), the job restarts
// until the cluster is back, and its output is complete with no record twice.
TEST_F(KafkaOutageTest, ExactlyOnceJobRestartsAndCompletesExactlyOnceAfterTheClusterReturns) {
  auto topic = env_.CreateUniqueTopic("outage-eo", 2);
  ASSERT_TRUE(topic.ok()) << topic.status().ToString();
  constexpr int64_t kRecords = 3000;
  JobOptions o;
  o.parallelism = 2;
  o.job_id = UniqueName("outage-eo");
  o.checkpoint.state_dir = (dir_ / "state").string();
  o.checkpoint.interval_ms = 200;
  o.checkpoint.options.interval_ms = 200;
  o.checkpoint.options.timeout_ms = 10000;  // with the commit bound well below transaction_timeout
  o.checkpoint.restart.max_attempts = 1000;
  o.checkpoint.restart.initial_delay_ms = 200;
  o.checkpoint.restart.max_delay_ms = 1000;
  Job job(o);
  auto gen = [](uint64_t index, int64_t* r) {
    if (static_cast<int64_t>(index) >= kRecords) return false;
    if (index % 20 == 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // about 3 s per subtask
    *r = static_cast<int64_t>(index);
    return true;
  };
  auto s = job.Source<int64_t>("gen", GeneratorSourceFactory<int64_t>(gen),
                               WatermarkSpec{.mode = TimeMode::kNone});
  auto spec = TxnSinkSpecFor("kafka", {{"brokers", env_.brokers()},
                                       {"topic", *topic},
                                       {"retry_timeout", "3s"},
                                       {"transaction_timeout", "5m"},
                                       {"kafka.queue.buffering.max.messages", "50"}});
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  ExactlyOnceSink<int64_t>(
      s, job, "out", *spec,
      [](const int64_t& v, std::string*, std::string* payload) { *payload = std::to_string(v); });
  Metric* restarts =
      job.metrics().Counter(kMetricRestarts, "In-process restarts of the job after a failure", {});
  Status result;
  std::atomic<bool> done{false};
  std::thread runner([&] {
    result = job.Execute();
    done.store(true);
  });
  // Some checkpoints commit, then the cluster goes away for longer than the bound. Waiting for
  // the first completed checkpoint (not a fixed time) keeps a slow start-up on a loaded machine
  // from meeting the outage before the job runs at all.
  const auto started = Clock::now();
  while (job.metrics().Sum(kMetricCheckpointsCompleted) < 1 && !done.load() &&
         MsSince(started) < 60000) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_GE(job.metrics().Sum(kMetricCheckpointsCompleted), 1)
      << "no checkpoint completed within 60 s";
  ASSERT_EQ(KafkaScript("kill"), 0);
  const auto t0 = Clock::now();
  while (restarts->value() == 0 && !done.load() && MsSince(t0) < 120000) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const int64_t failed_ms = MsSince(t0);
  EXPECT_GE(restarts->value(), 1) << "the attempt did not fail while the cluster was down";
  // retry_timeout 3 s + the flush before the abort (5 s) + the abort (30 s, the group's operation
  // timeout) at most; far less in practice.
  EXPECT_LT(failed_ms, 3000 + 200 + 5000 + 30000 + 5000);
  ASSERT_EQ(KafkaScript("start"), 0);
  while (!done.load() && MsSince(t0) < 240000)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  if (!done.load()) job.RequestStop();
  runner.join();
  ASSERT_TRUE(result.ok()) << result.ToString();
  auto got = env_.ConsumeToEnd(*topic, Isolation::kReadCommitted);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  std::map<std::string, int> counts;
  for (const auto& r : *got) ++counts[r.value];
  EXPECT_EQ(counts.size(), static_cast<size_t>(kRecords));
  for (int64_t i = 0; i < kRecords; ++i) ASSERT_EQ(counts[std::to_string(i)], 1) << "record " << i;
  std::printf("attempt failed %lld ms after the kill; %lld restarts\n",
              static_cast<long long>(failed_ms), static_cast<long long>(restarts->value()));
}

}  // namespace
}  // namespace flow::rt
