// The job-level metrics a running job serves (runtime/src/engine/job_metrics.cpp): checkpoints,
// end-to-end latency, the process, watermarks only once known; and GET /readyz while a job
// starts and runs. Values are read back from the Prometheus text the endpoint answers.

#include <gtest/gtest.h>

#include <httplib.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "flow/runtime/engine/job.h"
#include "flow/runtime/engine/sink.h"
#include "flow/runtime/engine/source.h"
#include "test_util.h"

namespace flow::rt {
namespace {

namespace fs = std::filesystem;

// The value of the series `series` (name and labels exactly as rendered) in a Prometheus text
// body; nullopt when the body has no such line.
std::optional<double> Value(const std::string& body, const std::string& series) {
  std::istringstream in(body);
  for (std::string line; std::getline(in, line);) {
    if (line.size() > series.size() && line.compare(0, series.size(), series) == 0 &&
        line[series.size()] == ' ') {
      return std::stod(line.substr(series.size() + 1));
    }
  }
  return std::nullopt;
}

std::string Get(int port, const std::string& path, int* status = nullptr) {
  httplib::Client client("127.0.0.1", port);
  auto r = client.Get(path.c_str());
  if (status) *status = r ? r->status : 0;
  return r ? r->body : "";
}

class JobMetricsEndpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("flow-job-metrics-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// Event times a second behind the wall clock, slowly, until stopped (or 10 minutes, if the
// test breaks): latency observations near 1 s, watermarks that move.
SourceFactory<int64_t> Recent(std::atomic<bool>* stop) {
  return GeneratorSourceFactory<int64_t>([stop](uint64_t i, int64_t* v, TimestampMs* ts) {
    if (stop->load() || i > 6000000) return false;
    if (i % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    *v = static_cast<int64_t>(i);
    *ts = WallNowMs() - 1000;
    return true;
  });
}

TEST_F(JobMetricsEndpointTest, ServesCheckpointLatencyAndProcessMetrics) {
  JobOptions o;
  o.parallelism = 1;
  o.metrics_port = 0;
  o.log_level = LogLevel::kWarn;
  o.checkpoint.state_dir = (dir_ / "state").string();
  o.checkpoint.interval_ms = 20;
  o.checkpoint.options.interval_ms = 20;
  Job job(o);
  std::atomic<bool> stop{false};
  auto out = std::make_shared<Collected<int64_t>>();
  job.Source<int64_t>("recent", Recent(&stop), WatermarkSpec{.interval = 10})
      .Sink("collect", CollectingSinkFactory(out));
  std::string body;
  int ready_status = 0;
  std::string ready_body;
  std::thread scraper([&] {
    for (int i = 0; i < 3000 && (job.metrics_port() == 0 ||
                                 testing::NewestCompleteCheckpoint(dir_ / "state") < 3);
         ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // watermarks and latencies arrive
    if (job.metrics_port() > 0) {
      body = Get(job.metrics_port(), "/metrics");
      ready_body = Get(job.metrics_port(), "/readyz", &ready_status);
    }
    stop.store(true);
  });
  Status s = testing::ExecuteWithWatchdog(job);
  scraper.join();
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_FALSE(body.empty());

  const std::optional<double> completed = Value(body, "flow_checkpoints_completed_total");
  ASSERT_TRUE(completed.has_value()) << body;
  EXPECT_GE(*completed, 3);
  // The histograms count the completed checkpoints (one may complete between the two lines).
  const std::optional<double> durations = Value(body, "flow_checkpoint_duration_seconds_count");
  ASSERT_TRUE(durations.has_value()) << body;
  EXPECT_GE(*durations, *completed);
  EXPECT_LE(*durations, *completed + 1);
  EXPECT_EQ(Value(body, "flow_checkpoint_duration_seconds_bucket{le=\"+Inf\"}"), durations);
  EXPECT_TRUE(Value(body, "flow_checkpoint_size_bytes_count").has_value()) << body;
  const std::optional<double> age = Value(body, "flow_last_checkpoint_age_seconds");
  ASSERT_TRUE(age.has_value()) << body;
  EXPECT_GE(*age, 0);
  EXPECT_LT(*age, 30);
  EXPECT_EQ(body.find("flow_checkpoints_failed_total"), std::string::npos)
      << "no checkpoint failed";

  // Records are a second old when made: most latency observations lie in (1.024 s, 4.096 s].
  const std::string latency = "flow_end_to_end_latency_seconds";
  const std::string labels = "{operator=\"collect\",subtask=\"0\"";
  const std::optional<double> count = Value(body, latency + "_count" + labels + "}");
  ASSERT_TRUE(count.has_value()) << body;
  EXPECT_GT(*count, 0);
  const std::optional<double> below_1s =
      Value(body, latency + "_bucket" + labels + ",le=\"0.256\"}");
  const std::optional<double> below_4s =
      Value(body, latency + "_bucket" + labels + ",le=\"4.096\"}");
  ASSERT_TRUE(below_1s && below_4s) << body;
  EXPECT_EQ(*below_1s, 0) << "latencies are at least a second";
  EXPECT_GT(*below_4s, *count / 2) << body;
  const std::optional<double> sum = Value(body, latency + "_sum" + labels + "}");
  ASSERT_TRUE(sum.has_value());
  EXPECT_GE(*sum / *count, 1.0);

  // Event time moved: the watermark is a time near now, in ms.
  const std::optional<double> wm =
      Value(body, "flow_watermark_ms{operator=\"collect\",subtask=\"0\"}");
  ASSERT_TRUE(wm.has_value()) << body;
  EXPECT_NEAR(*wm, static_cast<double>(WallNowMs()), 120000);

  const std::optional<double> cpu = Value(body, "process_cpu_seconds_total");
  ASSERT_TRUE(cpu.has_value()) << body;
  EXPECT_GT(*cpu, 0);
  EXPECT_GT(Value(body, "process_resident_memory_bytes").value_or(0), 1 << 20);
  EXPECT_GT(Value(body, "process_open_fds").value_or(0), 2);
  EXPECT_GT(Value(body, "process_threads").value_or(0), 2);
  const double start = Value(body, "process_start_time_seconds").value_or(0);
  EXPECT_NEAR(start, static_cast<double>(WallNowMs()) / 1000, 24 * 3600);

  EXPECT_EQ(ready_status, 200) << ready_body;
}

// Declines every other checkpoint (its snapshot fails); passes records on.
class FlakySnapshot final : public OneInputOperator<int64_t, int64_t> {
 public:
  Status ProcessBatch(const Batch<int64_t>& batch, Output<int64_t>& out) override {
    for (size_t i = 0; i < batch.size(); ++i) out.Emit(batch.records[i], batch.timestamps[i]);
    return Status::Ok();
  }
  Status SnapshotState(BinaryWriter* out) override {
    out->PutU64(++snapshots_);
    return snapshots_ % 2 == 0 ? Status::IoError("disk said no") : Status::Ok();
  }

 private:
  uint64_t snapshots_ = 0;
};

TEST_F(JobMetricsEndpointTest, FailedCheckpointsAreCountedByReason) {
  JobOptions o;
  o.metrics_port = 0;
  o.log_level = LogLevel::kError;
  o.checkpoint.state_dir = (dir_ / "state").string();
  o.checkpoint.interval_ms = 20;
  o.checkpoint.options.interval_ms = 20;
  o.checkpoint.options.tolerable_failures = 1000;
  Job job(o);
  std::atomic<bool> stop{false};
  auto out = std::make_shared<Collected<int64_t>>();
  job.Source<int64_t>("recent", Recent(&stop), WatermarkSpec{.mode = TimeMode::kNone})
      .Then<int64_t>("flaky", [] { return std::make_unique<FlakySnapshot>(); })
      .Sink("collect", CollectingSinkFactory(out));
  std::string body;
  std::thread scraper([&] {
    for (int i = 0; i < 3000; ++i) {
      if (job.metrics_port() > 0) {
        body = Get(job.metrics_port(), "/metrics");
        if (Value(body, "flow_checkpoints_failed_total{reason=\"task_declined\"}").value_or(0) >=
                2 &&
            Value(body, "flow_checkpoints_completed_total").value_or(0) >= 2) {
          break;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    stop.store(true);
  });
  Status s = testing::ExecuteWithWatchdog(job);
  scraper.join();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_GE(Value(body, "flow_checkpoints_failed_total{reason=\"task_declined\"}").value_or(0), 2)
      << body;
  const double completed = Value(body, "flow_checkpoints_completed_total").value_or(0);
  EXPECT_GE(completed, 2) << body;
  // Only completed checkpoints are timed.
  EXPECT_LE(Value(body, "flow_checkpoint_duration_seconds_count").value_or(0), completed + 1)
      << body;
}

// No event time in this job: no watermark series at all (it used to read -9223372036854775808).
TEST_F(JobMetricsEndpointTest, WatermarksAreAbsentUntilKnown) {
  JobOptions o;
  o.metrics_port = 0;
  o.log_level = LogLevel::kWarn;
  Job job(o);
  std::atomic<bool> stop{false};
  auto out = std::make_shared<Collected<int64_t>>();
  job.Source<int64_t>("numbers", Recent(&stop), WatermarkSpec{.mode = TimeMode::kNone})
      .Sink("collect", CollectingSinkFactory(out));
  std::string body;
  std::thread scraper([&] {
    for (int i = 0; i < 3000 && (job.metrics_port() == 0 || out->size() < 1000); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (job.metrics_port() > 0) body = Get(job.metrics_port(), "/metrics");
    stop.store(true);
  });
  Status s = testing::ExecuteWithWatchdog(job);
  scraper.join();
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_NE(body.find("flow_records_in_total{operator=\"collect\""), std::string::npos) << body;
  EXPECT_EQ(body.find("flow_watermark_ms"), std::string::npos) << body;
  EXPECT_EQ(body.find("-9223372036854775808"), std::string::npos) << body;
  EXPECT_EQ(body.find("9223372036854775807"), std::string::npos) << body;
  // Without checkpoints there is no age of the last one.
  EXPECT_EQ(body.find("flow_last_checkpoint_age_seconds"), std::string::npos) << body;
}

// A source that takes its time to open (a broker far away): /readyz says the job is starting
// until every task opened, then ready.
class SlowOpen final : public SourceFunction<int64_t> {
 public:
  SlowOpen(std::atomic<bool>* release, std::atomic<bool>* stop) : release_(release), stop_(stop) {}
  Status Open(OperatorContext&) override {
    while (!release_->load()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return Status::Ok();
  }
  Result<PollResult> PollBatch(Batch<int64_t>& out, size_t) override {
    if (stop_->load()) return PollResult::kEnd;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return PollResult::kIdle;
  }

 private:
  std::atomic<bool>* release_;
  std::atomic<bool>* stop_;
};

TEST_F(JobMetricsEndpointTest, ReadyOnlyOnceEveryTaskOpened) {
  JobOptions o;
  o.parallelism = 2;
  o.chaining = false;  // six tasks: the four downstream ones open at once, the sources wait
  o.metrics_port = 0;
  o.log_level = LogLevel::kWarn;
  Job job(o);
  std::atomic<bool> release{false}, stop{false};
  auto out = std::make_shared<Collected<int64_t>>();
  job.Source<int64_t>(
         "slow", [&](uint32_t, uint32_t) { return std::make_unique<SlowOpen>(&release, &stop); },
         WatermarkSpec{.mode = TimeMode::kNone})
      .Map<int64_t>("ident", [](const int64_t& v) { return v; })
      .Sink("collect", CollectingSinkFactory(out));
  int starting_status = 0, ready_status = 0, stopped_status = 0;
  std::string starting_body, ready_body;
  std::thread prober([&] {
    for (int i = 0; i < 3000 && job.metrics_port() == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const int port = job.metrics_port();
    // The server answers before the tasks exist ("not running"); then the tasks open.
    // Every task but the two blocked sources opens soon; under load not all at once.
    for (int i = 0; i < 2000 && starting_body.find("4 of 6 tasks opened") == std::string::npos;
         ++i) {
      starting_body = Get(port, "/readyz", &starting_status);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    release.store(true);
    for (int i = 0; i < 1000; ++i) {
      ready_body = Get(port, "/readyz", &ready_status);
      if (ready_status == 200) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    job.RequestStop();
    Get(port, "/readyz", &stopped_status);
    stop.store(true);
  });
  Status s = testing::ExecuteWithWatchdog(job);
  prober.join();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(starting_status, 503) << starting_body;
  EXPECT_NE(starting_body.find("starting:"), std::string::npos) << starting_body;
  EXPECT_NE(starting_body.find("4 of 6 tasks opened"), std::string::npos) << starting_body;
  EXPECT_EQ(ready_status, 200) << ready_body;
  EXPECT_EQ(ready_body, "ready\n");
  // Asked to stop: no longer ready (or the server is already gone).
  EXPECT_NE(stopped_status, 200);
}

}  // namespace
}  // namespace flow::rt
