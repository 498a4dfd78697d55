// Exactly-once Kafka sinks wired into the engine, against the broker of scripts/kafka: a bounded
// job's output is visible to read_committed readers exactly once after its final checkpoint;
// another instance with the same job id fences the running one, which ends with kFenced (exit
// code 3) and a message naming the job; a restored checkpoint that is not Kafka's committed one
// is refused.

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "../engine/test_util.h"
#include "flow/runtime/checkpoint/fault_injection.h"
#include "flow/runtime/engine/job.h"
#include "flow/runtime/engine/txn_sink.h"
#include "kafka/kafka_test_env.h"

namespace flow::rt {
namespace {

namespace fs = std::filesystem;
using test::Isolation;
using test::KafkaTestEnv;
using test::Millis;
using test::UniqueName;

struct Rec {
  int64_t i = 0;
};

class TxnEngineKafkaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(env_.CheckReachable().ok()) << "start the broker: scripts/kafka start";
    dir_ = fs::temp_directory_path() / UniqueName("flow-txn-engine-kafka");
    fs::create_directories(dir_);
    auto topic = env_.CreateUniqueTopic("txn-engine-out", 3);
    ASSERT_TRUE(topic.ok()) << topic.status().ToString();
    topic_ = *topic;
    job_id_ = UniqueName("txn-engine");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Generator 0..n-1 (parallelism 2; `pause_ms` every 100 records) -> exactly-once Kafka sink.
  Status Run(int64_t n, int pause_ms, std::atomic<Job*>* running = nullptr) {
    JobOptions o;
    o.parallelism = 2;
    o.job_id = job_id_;
    o.checkpoint.state_dir = (dir_ / "state").string();
    o.checkpoint.interval_ms = 50;
    o.checkpoint.options.interval_ms = 50;
    o.checkpoint.restart.max_attempts = 0;
    Job job(o);
    auto gen = [n, pause_ms](uint64_t index, Rec* r) {
      if (static_cast<int64_t>(index) >= n) return false;
      if (pause_ms > 0 && index % 100 == 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
      r->i = static_cast<int64_t>(index);
      return true;
    };
    auto s = job.Source<Rec>("gen", GeneratorSourceFactory<Rec>(gen),
                             WatermarkSpec{.mode = TimeMode::kNone});
    ExactlyOnceSink<Rec>(s, job, "out", KafkaTxnSink(env_.brokers(), {.topic = topic_}),
                         [](const Rec& r, std::string* key, std::string* payload) {
                           *key = std::to_string(r.i % 7);
                           *payload = std::to_string(r.i);
                         });
    if (running) running->store(&job);
    Status st = job.Execute();
    if (running) running->store(nullptr);
    return st;
  }

  std::map<std::string, int> Committed() {
    std::map<std::string, int> m;
    auto got = env_.ConsumeToEnd(topic_, Isolation::kReadCommitted);
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    if (got.ok()) {
      for (const auto& r : *got) ++m[r.value];
    }
    return m;
  }

  KafkaTestEnv env_;
  fs::path dir_;
  std::string topic_;
  std::string job_id_;
};

TEST_F(TxnEngineKafkaTest, BoundedJobIsVisibleExactlyOnceAfterItsFinalCheckpoint) {
  Status st = Run(3000, 1);
  ASSERT_TRUE(st.ok()) << st.ToString();
  auto m = Committed();
  ASSERT_EQ(m.size(), 3000u);
  for (int64_t i = 0; i < 3000; ++i) ASSERT_EQ(m[std::to_string(i)], 1) << "record " << i;
  // Running the finished job again restores its final checkpoint: nothing more is written.
  st = Run(3000, 0);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(Committed().size(), 3000u);
  size_t total = 0;
  for (const auto& [v, c] : Committed()) total += static_cast<size_t>(c);
  EXPECT_EQ(total, 3000u);
}

// One job, a Kafka and a file exactly-once sink on the same stream, killed (forked child) during
// the Kafka commit and right after it: after a rerun both outputs hold every record once.
class TxnEngineMixedKillTest : public TxnEngineKafkaTest,
                               public ::testing::WithParamInterface<const char*> {};

TEST_P(TxnEngineMixedKillTest, BothOutputsExactAfterAKillAndARerun) {
  const int64_t n = 4000;
  auto run = [&]() {
    JobOptions o;
    o.parallelism = 2;
    o.job_id = job_id_;
    o.checkpoint.state_dir = (dir_ / "state").string();
    o.checkpoint.interval_ms = 50;
    o.checkpoint.options.interval_ms = 50;
    o.checkpoint.restart.max_attempts = 0;
    Job job(o);
    auto gen = [n](uint64_t index, Rec* r) {
      if (static_cast<int64_t>(index) >= n) return false;
      // ~200 ms per subtask: several 50 ms checkpoints before the final one.
      if (index % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      r->i = static_cast<int64_t>(index);
      return true;
    };
    auto s = job.Source<Rec>("gen", GeneratorSourceFactory<Rec>(gen),
                             WatermarkSpec{.mode = TimeMode::kNone});
    auto encode = [](const Rec& r, std::string*, std::string* payload) {
      *payload = std::to_string(r.i);
    };
    ExactlyOnceSink<Rec>(s, job, "kafka", KafkaTxnSink(env_.brokers(), {.topic = topic_}), encode);
    ExactlyOnceSink<Rec>(s, job, "files", FileTxnSink({.directory = (dir_ / "out").string()}),
                         encode);
    return job.Execute();
  };
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (!ConfigureFaults(GetParam()).ok()) ::_exit(70);
    ::_exit(run().ok() ? 0 : 71);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
      << GetParam() << " not reached, status " << status;
  Status st = run();
  ASSERT_TRUE(st.ok()) << st.ToString();
  auto kafka = Committed();
  std::map<std::string, int> files;
  for (const auto& e : fs::directory_iterator(dir_ / "out")) {
    if (e.path().filename().string()[0] == '.') continue;
    std::ifstream in(e.path());
    std::string line;
    while (std::getline(in, line)) ++files[line];
  }
  ASSERT_EQ(kafka.size(), static_cast<size_t>(n));
  ASSERT_EQ(files.size(), static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(kafka[std::to_string(i)], 1) << "kafka record " << i;
    ASSERT_EQ(files[std::to_string(i)], 1) << "file record " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Faults, TxnEngineMixedKillTest,
                         ::testing::Values("during-commit:2", "after-commit-before-cleanup:2",
                                           "after-metadata:2"));

// A state dir from a version that did not record job ids (complete checkpoints, no `_job`), and
// no progress in Kafka under this job id: the job most likely ran under another id. It must be
// refused, never have its checkpoints discarded and its input replayed into the output.
TEST_F(TxnEngineKafkaTest, UnrecordedCheckpointsWithoutKafkaProgressAreRefusedNotDiscarded) {
  ASSERT_TRUE(Run(500, 0).ok());
  const fs::path state = dir_ / "state";
  const int64_t newest = testing::NewestCompleteCheckpoint(state);
  ASSERT_GT(newest, 0);
  fs::remove(state / "_job");
  fs::remove(state / "_committed");
  const std::string old_id = job_id_;
  job_id_ = UniqueName("txn-engine-renamed");  // what the binary's new name would have given
  Status st = Run(500, 0);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_NE(st.message().find("--job-id"), std::string::npos) << st.message();
  EXPECT_EQ(testing::NewestCompleteCheckpoint(state), newest) << "checkpoints were discarded";
  EXPECT_EQ(Committed().size(), 500u);
  size_t total = 0;
  for (const auto& [v, c] : Committed()) total += static_cast<size_t>(c);
  EXPECT_EQ(total, 500u) << "the input was written again";
  // Under its old id the job goes on (its final checkpoint: nothing more is written).
  job_id_ = old_id;
  st = Run(500, 0);
  EXPECT_TRUE(st.ok()) << st.ToString();
  total = 0;
  for (const auto& [v, c] : Committed()) total += static_cast<size_t>(c);
  EXPECT_EQ(total, 500u);
}

TEST_F(TxnEngineKafkaTest, AnotherInstanceFencesTheRunningJob) {
  std::atomic<Job*> running{nullptr};
  Status result;
  std::thread t([&] { result = Run(1000000, 5, &running); });
  // Let it start and commit a few checkpoints, then start a second producer with the same job id.
  for (int i = 0; i < 100 && running.load() == nullptr; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::this_thread::sleep_for(std::chrono::seconds(3));
  KafkaTransactionOptions o;
  o.brokers = env_.brokers();
  o.job_id = job_id_;
  o.checkpoints.interval_ms = 50;
  auto other = KafkaTransactionGroup::Start(o, 1);
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  // What the new instance found committed (init_transactions settled any commit in flight).
  const int64_t committed = (*other)->last_committed();
  ASSERT_GT(committed, 0) << "the first instance committed nothing in 3 s";
  for (int i = 0; i < 600 && running.load() != nullptr && result.ok(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (Job* j = running.load()) j->RequestStop();
  t.join();
  EXPECT_EQ(result.code(), StatusCode::kFenced) << result.ToString();
  EXPECT_NE(result.message().find(job_id_), std::string::npos) << result.message();
  EXPECT_NE(result.message().find("took over"), std::string::npos) << result.message();
  // The zombie stopped before it touched its checkpoints: at most the one in flight when it was
  // fenced completed (its commit then failed), and retention kept the committed one, which a
  // restart of this state dir needs.
  const fs::path state = dir_ / "state";
  EXPECT_LE(testing::NewestCompleteCheckpoint(state), committed + 1);
  EXPECT_TRUE(fs::exists(state / CheckpointDirName(committed) / "_metadata"))
      << "chk-" << committed << " (committed in Kafka) was deleted by the fenced instance";
}

TEST_F(TxnEngineKafkaTest, RestoreOfAnotherCheckpointThanKafkasIsRefused) {
  ASSERT_TRUE(Run(500, 0).ok());
  // Kafka committed the final checkpoint; asking for nothing would replay everything again.
  JobOptions o;
  o.job_id = job_id_;
  o.checkpoint.state_dir = (dir_ / "state").string();
  o.checkpoint.restore = "none";
  Job job(o);
  auto s =
      job.Source<Rec>("gen", GeneratorSourceFactory<Rec>([](uint64_t i, Rec*) { return i < 1; }),
                      WatermarkSpec{.mode = TimeMode::kNone});
  ExactlyOnceSink<Rec>(s, job, "out", KafkaTxnSink(env_.brokers(), {.topic = topic_}),
                       [](const Rec&, std::string*, std::string*) {});
  Status st = job.Execute();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("--restore none"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("new --job-id"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace flow::rt
