// KafkaSource inside a running job, against the broker of scripts/kafka (LABEL kafka):
// partitions added to the topic while the job runs are discovered and read from their first
// record, exactly once; a `start: latest` job killed (SIGKILL, forked child) before its first
// checkpoint and started again reads every record produced after its first start.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
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
#include "kafka/kafka_test_env.h"

namespace flow::rt {
namespace {

namespace fs = std::filesystem;
using test::KafkaRecord;
using test::KafkaTestEnv;
using test::UniqueName;

constexpr auto kWait = std::chrono::seconds(45);

// One job: Kafka source `in` (parallelism 2, payload as the record) -> a collecting sink.
struct RunningJob {
  std::unique_ptr<Job> job;
  std::shared_ptr<Collected<std::string>> out = std::make_shared<Collected<std::string>>();
  std::thread thread;
  Status result;

  void Start(JobOptions o, KafkaSourceOptions source) {
    job = std::make_unique<Job>(std::move(o));
    auto make_raw = [source] { return std::make_unique<KafkaSource>(source); };
    auto decode = [](const RawRecord& r, std::string* v) {
      *v = std::string(r.payload);
      return Status::Ok();
    };
    auto s = job->Source<std::string>("in", RawSourceAdapter<std::string>(make_raw, decode),
                                      WatermarkSpec{.mode = TimeMode::kNone});
    s.Sink("out", CollectingSinkFactory(out));
    thread = std::thread([this] { result = job->Execute(); });
  }
  // Waits until `pred(records so far)` holds or kWait passed; returns whether it held.
  template <typename Pred>
  bool WaitFor(Pred pred) const {
    const auto deadline = std::chrono::steady_clock::now() + kWait;
    while (std::chrono::steady_clock::now() < deadline) {
      if (pred(out->Records())) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return pred(out->Records());
  }
  Status Stop() {
    job->RequestStop();
    thread.join();
    return result;
  }
};

std::map<std::string, int> CountOf(const std::vector<std::string>& records) {
  std::map<std::string, int> m;
  for (const std::string& r : records) ++m[r];
  return m;
}

class KafkaSourceJobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Status reachable = env_.CheckReachable(test::Millis(20000));
    ASSERT_TRUE(reachable.ok()) << reachable.ToString();
    dir_ = fs::temp_directory_path() / UniqueName("flow-kafka-source-job");
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // `count` records "<prefix>-<i>", record i into partition first + i % partitions.
  void Produce(const std::string& topic, const std::string& prefix, int count, int partitions,
               int first = 0) {
    std::vector<KafkaRecord> records;
    for (int i = 0; i < count; ++i)
      records.push_back({first + i % partitions, "", fmt::format("{}-{}", prefix, i), -1});
    Status s = env_.Produce(topic, records);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  JobOptions Options() const {
    JobOptions o;
    o.parallelism = 2;
    o.job_id = "kafka-source-job";
    o.checkpoint.restart.max_attempts = 0;
    return o;
  }

  KafkaTestEnv env_;
  fs::path dir_;
};

TEST_F(KafkaSourceJobTest, PartitionsAddedWhileRunningAreReadExactlyOnce) {
  auto topic = env_.CreateUniqueTopic("grow", 2);
  ASSERT_TRUE(topic.ok()) << topic.status().ToString();
  Produce(*topic, "before", 40, 2);
  RunningJob run;
  run.Start(Options(),
            {.brokers = env_.brokers(), .topic = *topic, .partition_discovery_interval_ms = 300});
  ASSERT_TRUE(run.WaitFor([](const auto& r) { return r.size() >= 40; }))
      << run.out->size() << " of 40 before";
  // Two new partitions (one for each subtask) while the job runs, then records in all four.
  Status grown = env_.AddPartitions(*topic, 4);
  ASSERT_TRUE(grown.ok()) << grown.ToString();
  Produce(*topic, "old-partitions", 40, 2);
  Produce(*topic, "new-partitions", 60, 2, /*first=*/2);
  const bool complete = run.WaitFor([](const auto& r) { return r.size() >= 140; });
  Status st = run.Stop();
  ASSERT_TRUE(st.ok()) << st.ToString();
  std::map<std::string, int> got = CountOf(run.out->Records());
  EXPECT_TRUE(complete) << "read " << run.out->size() << " of 140 records";
  for (const auto& [prefix, n] :
       std::map<std::string, int>{{"before", 40}, {"old-partitions", 40}, {"new-partitions", 60}}) {
    for (int i = 0; i < n; ++i)
      EXPECT_EQ(got[fmt::format("{}-{}", prefix, i)], 1) << prefix << "-" << i;
  }
  EXPECT_EQ(got.size(), 140u);
}

// The child resolves `latest`, reads what is produced after that, and is killed before any
// checkpoint. The rerun on the same state dir must read every record produced after the first
// start (not only after its own), and nothing from before it.
TEST_F(KafkaSourceJobTest, LatestStartIsKeptAcrossACrashBeforeTheFirstCheckpoint) {
  auto topic = env_.CreateUniqueTopic("latest", 2);
  ASSERT_TRUE(topic.ok()) << topic.status().ToString();
  Produce(*topic, "old", 20, 2);
  JobOptions o = Options();
  o.checkpoint.state_dir = (dir_ / "state").string();
  o.checkpoint.interval_ms = 3600000;  // no checkpoint completes in either run
  o.checkpoint.options.interval_ms = 3600000;
  const KafkaSourceOptions source{
      .brokers = env_.brokers(), .topic = *topic, .start = KafkaStart::kLatest};

  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    RunningJob run;
    run.Start(o, source);
    // Probes until the job reads one: its source has resolved `latest` by then.
    bool reading = false;
    for (int round = 0; round < 300 && !reading; ++round) {
      std::vector<KafkaRecord> probe{{0, "", fmt::format("probe-{}-0", round), -1},
                                     {1, "", fmt::format("probe-{}-1", round), -1}};
      if (!env_.Produce(*topic, probe).ok()) ::_exit(71);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      reading = run.out->size() > 0;
    }
    if (!reading) ::_exit(72);
    std::vector<KafkaRecord> after;
    for (int i = 0; i < 50; ++i) after.push_back({i % 2, "", fmt::format("after-{}", i), -1});
    if (!env_.Produce(*topic, after).ok()) ::_exit(73);
    ::kill(::getpid(), SIGKILL);
    ::_exit(74);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "child status " << status;

  RunningJob rerun;
  rerun.Start(o, source);
  const bool complete = rerun.WaitFor([](const auto& r) {
    int after = 0;
    for (const std::string& v : r) after += v.starts_with("after-") ? 1 : 0;
    return after >= 50;
  });
  Status st = rerun.Stop();
  ASSERT_TRUE(st.ok()) << st.ToString();
  std::map<std::string, int> got = CountOf(rerun.out->Records());
  EXPECT_TRUE(complete) << "the rerun read " << rerun.out->size()
                        << " records; those produced after the first start are missing";
  for (int i = 0; i < 50; ++i) EXPECT_EQ(got[fmt::format("after-{}", i)], 1) << "after-" << i;
  int probes = 0;
  for (const auto& [v, n] : got) {
    EXPECT_FALSE(v.starts_with("old-")) << v << " was produced before the first start";
    EXPECT_EQ(n, 1) << v;
    probes += v.starts_with("probe-") ? 1 : 0;
  }
  EXPECT_GE(probes, 1) << "the probe the first run read must be read again";
}

}  // namespace
}  // namespace flow::rt
