// Injected retriable errors (FLOW_FAULT=error:<point>) and what in-process restarts do with them:
// the configuration syntax and its errors, a job with --restart-attempts 3 that recovers from an
// injected failure with exact results (reference computed here), exhausted attempts ending with
// exit code 1, metrics that keep counting (never go back) across restarts, and stops that arrive
// as partitions move or while a restart is still starting (a stop, exit 0; a first start that
// fails is a failure).

#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "flow/runtime/checkpoint/fault_injection.h"
#include "flow/runtime/common/key_group.h"
#include "flow/runtime/engine/job.h"
#include "flow/runtime/engine/main.h"
#include "flow/runtime/engine/sink.h"
#include "flow/runtime/engine/txn_sink.h"
#include "flow/runtime/txn/commit_group.h"
#include "split_count_job.h"
#include "test_util.h"

namespace flow::rt {
namespace {

namespace fs = std::filesystem;

class FaultConfig : public ::testing::Test {
 protected:
  void TearDown() override { DisarmFaults(); }
};

TEST_F(FaultConfig, ErrorKindParsesOnPointsThatAcceptIt) {
  ASSERT_TRUE(ConfigureFaults("error:before-batch:count:*").ok());
  EXPECT_EQ(DescribeFaults(), "error:before-batch:count:*:1");
  ASSERT_TRUE(ConfigureFaults("error:before-batch:*:2:3,before-batch:sink:0:2").ok());
  EXPECT_EQ(DescribeFaults(), "error:before-batch:*:2:3,before-batch:sink:0:2");
}

TEST_F(FaultConfig, BadErrorEntriesNameTheEntryAndTheReason) {
  Status s = ConfigureFaults("error:after-metadata");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("'error:after-metadata'"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("only kills the process"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("before-batch"), std::string::npos) << s.ToString();
  s = ConfigureFaults("error:");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  s = ConfigureFaults("error");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  s = ConfigureFaults("error:random:4");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  s = ConfigureFaults("error:before-batch:count");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("takes 2 argument"), std::string::npos) << s.ToString();
  s = ConfigureFaults("error:before-batch:count:*:0");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(DescribeFaults(), "") << "a rejected configuration arms nothing";
}

TEST_F(FaultConfig, AnErrorEntryFailsItsNthHitOnce) {
  ASSERT_TRUE(ConfigureFaults("error:before-batch:count:1:2").ok());
  EXPECT_TRUE(FaultPointStatus("before-batch", "count", 1).ok());
  EXPECT_TRUE(FaultPointStatus("before-batch", "other", 1).ok())
      << "another operator does not count";
  EXPECT_TRUE(FaultPointStatus("before-batch", "count", 0).ok())
      << "another subtask does not count";
  Status s = FaultPointStatus("before-batch", "count", 1);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("fault injection: error at before-batch:count:1 (hit 2)"),
            std::string::npos)
      << s.ToString();
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(FaultPointStatus("before-batch", "count", 1).ok());
}

TEST_F(FaultConfig, RandomNeverPicksTheErrorOnlyPoint) {
  for (int seed = 0; seed < 200; ++seed) {
    ASSERT_TRUE(ConfigureFaults("random:" + std::to_string(seed)).ok());
    EXPECT_EQ(DescribeFaults().find("before-batch"), std::string::npos) << "seed " << seed;
  }
}

// ---- a keyed job restarted in-process ----

using namespace split_count;  // NOLINT: the shared job's names

// One failure per attempt: a failed subtask takes no further batch in that attempt.
constexpr const char* kThreeFailures =
    "error:before-batch:count:2:1,error:before-batch:count:2:2,error:before-batch:count:2:3";

class FaultRestartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("flow_fault_restart_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override {
    DisarmFaults();
    fs::remove_all(dir_);
  }
  // interval 0: checkpoints off (a restart then starts from scratch).
  JobOptions Options(int max_attempts, DurationMs interval_ms = 20) const {
    JobOptions options;
    options.parallelism = 4;
    options.checkpoint.state_dir = dir_.string();
    options.checkpoint.options.interval_ms = interval_ms;
    options.checkpoint.restart.initial_delay_ms = 10;
    options.checkpoint.restart.max_delay_ms = 40;
    options.checkpoint.restart.max_attempts = max_attempts;
    return options;
  }
  static void Build(Job& job, Results* results, const std::atomic<bool>* hold = nullptr) {
    // With `hold`: stops at half of each split (idle) until the flag is cleared.
    const SourceOptions source{
        .sleep_every = 2, .hold_at = hold != nullptr ? kPerSplit / 2 : 0, .hold = hold};
    job.Source<int64_t>(
           "splits",
           [source](uint32_t s, uint32_t p) { return std::make_unique<SplitSource>(s, p, source); },
           WatermarkSpec{.mode = TimeMode::kNone})
        .KeyBy("key", [](const int64_t& v) { return KeyHash(v); })
        .Then<int64_t>("count", [results] { return std::make_unique<KeyedCount>(results); })
        .Sink("sink", CollectingSinkFactory(std::make_shared<Collected<int64_t>>()), 1);
  }
  // Highest checkpoint id in the state dir: of any chk-N directory, or of complete ones.
  int64_t MaxCheckpointId(bool complete) const {
    int64_t best = 0;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir_, ec)) {
      const int64_t id = ParseCheckpointDir(e.path().filename().string());
      if (id < 0) continue;
      if (complete && !fs::exists(e.path() / "_metadata")) continue;
      best = std::max(best, id);
    }
    return best;
  }
  fs::path dir_;
};

TEST_F(FaultRestartTest, InjectedErrorRestartsFromTheLastCheckpointWithExactResults) {
  Results results;
  Job job(Options(3));
  // The sources stop at half their input until a checkpoint holds that half; then the fault is
  // armed and they go on, so the restart restores a checkpoint taken mid-way.
  std::atomic<bool> hold{true};
  Build(job, &results, &hold);
  // All series of a name: the sink receives nothing and 'count' emits nothing, so records in are
  // the counter's and records out the sources'.
  auto total = [&](std::string_view name) { return job.metrics().Sum(name); };
  std::atomic<bool> stop{false};
  std::thread arm([&] {
    auto wait = [&](auto done) {
      while (!stop.load() && !done()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    };
    // The first half reached the counter; at most one checkpoint is in flight, so the one after
    // the next was triggered after that and holds the half.
    wait([&] { return total(kMetricRecordsIn) >= kTotal / 2; });
    const int64_t after = MaxCheckpointId(false) + 2;
    wait([&] { return MaxCheckpointId(true) >= after; });
    if (!stop.load()) {
      EXPECT_TRUE(ConfigureFaults("error:before-batch:count:*:3").ok());
    }
    hold.store(false);
  });
  Status s = testing::ExecuteWithWatchdog(job);
  stop.store(true);
  arm.join();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(job.metrics().Sum(kMetricRestarts), 1)
      << "the injected error happened once and was retried";
  EXPECT_EQ(results.counts, Reference());
  // Counters accumulate over both attempts: what the restored attempt replays is counted again,
  // so they reach at least the input size (a reset would lose the half the restore skipped).
  EXPECT_GE(total(kMetricRecordsIn), kTotal);
  EXPECT_GE(total(kMetricRecordsOut), total(kMetricRecordsIn));
  std::string text = job.metrics().RenderPrometheus();
  EXPECT_NE(text.find("# HELP flow_records_in_total Records received by an operator subtask"),
            std::string::npos)
      << text;
}

TEST_F(FaultRestartTest, ExhaustedAttemptsExitWithCode1) {
  // Subtask 2 of 'count' fails on its first batch of the first run and of two restarts.
  ASSERT_TRUE(ConfigureFaults(kThreeFailures).ok());
  Results results;
  // No checkpoints: one completing before a failure would reset the attempt count.
  Job job(Options(2, 0));
  Build(job, &results);
  int code = -1;
  std::thread run([&] { code = job.Run(); });
  run.join();
  EXPECT_EQ(code, 1);
  EXPECT_EQ(job.metrics().Sum(kMetricRestarts), 2);
}

TEST_F(FaultRestartTest, TheSameFaultsWithinTheAttemptsRecover) {
  ASSERT_TRUE(ConfigureFaults(kThreeFailures).ok());
  Results results;
  Job job(Options(3, 0));
  Build(job, &results);
  Status s = testing::ExecuteWithWatchdog(job);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(job.metrics().Sum(kMetricRestarts), 3);
  EXPECT_EQ(results.counts, Reference());
}

TEST_F(FaultRestartTest, InjectedErrorWithoutStateDirIsFinal) {
  ASSERT_TRUE(ConfigureFaults("error:before-batch:count:*").ok());
  Results results;
  JobOptions options = Options(3);
  options.checkpoint.state_dir.clear();
  Job job(options);
  Build(job, &results);
  Status s = testing::ExecuteWithWatchdog(job);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  EXPECT_NE(s.message().find("fault injection: error at before-batch:count:*"), std::string::npos)
      << s.ToString();
  EXPECT_EQ(job.metrics().Sum(kMetricRestarts), 0);
}

// Reads 1000 records, then its partitions move to another instance (kReassigned, as a
// consumer-group member reports a revocation) just as the job is told to stop: it waits for
// `stopping` before it says so.
class MovedWhileStoppingSource final : public SourceFunction<int64_t> {
 public:
  MovedWhileStoppingSource(std::atomic<int64_t>* produced, const std::atomic<bool>* stopping)
      : produced_(produced), stopping_(stopping) {}
  Result<PollResult> PollBatch(Batch<int64_t>& out, size_t max) override {
    if (produced_->load() >= 1000) {
      while (!stopping_->load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return Status::Reassigned("partitions 0,1 of topic `in` moved to another instance");
    }
    for (size_t i = 0; i < std::min<size_t>(max, 10); ++i) out.Add(produced_->fetch_add(1), 0);
    return PollResult::kRecords;
  }

 private:
  std::atomic<int64_t>* produced_;
  const std::atomic<bool>* stopping_;
};

// An instance told to stop whose partitions moved away as it stopped ends as asked: the work it
// had is another instance's now, from the last commit. Exit 0, no restart (it used to exit 1,
// "not retriable").
TEST_F(FaultRestartTest, PartitionsThatMoveAsTheJobStopsEndItCleanly) {
  std::atomic<int64_t> produced{0};
  std::atomic<bool> stopping{false};
  Job job(Options(3));
  job.Source<int64_t>(
         "moving",
         [&](uint32_t, uint32_t) {
           return std::make_unique<MovedWhileStoppingSource>(&produced, &stopping);
         },
         WatermarkSpec{.mode = TimeMode::kNone}, 1)
      .Sink("sink", CollectingSinkFactory(std::make_shared<Collected<int64_t>>()), 1);
  std::thread stopper([&] {
    while (produced.load() < 1000) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    job.RequestStop();
    stopping.store(true);
  });
  const int code = job.Run();
  stopper.join();
  EXPECT_EQ(code, 0);
  EXPECT_EQ(job.metrics().Sum(kMetricReassignedRestarts), 0);
  EXPECT_EQ(job.metrics().Sum(kMetricRestarts), 0);
}

// ---- a stop that arrives while a restart is starting ----

// A commit group in memory whose participants fail the first run with a retriable error after
// 200 records, and whose start (as a Kafka group's does when the broker is away) fails from the
// second call on, optionally after the job was told to stop: a stop arriving during a restart's
// start-up.
struct StartUp {
  Job* job = nullptr;
  int stop_on_call = 0;    // the start that requests a stop before it fails (0: none)
  bool by_signal = false;  // that stop is a SIGTERM (the job runs under RunMain)
  std::atomic<int> calls{0};
  std::atomic<int64_t> written{0};
  int64_t restarts = -1;  // the job's kMetricRestarts when it ended
};

class FirstRunFailsSink final : public TwoPhaseCommitSink {
 public:
  explicit FirstRunFailsSink(StartUp* up) : up_(up) {}
  Status Open(uint32_t, uint32_t) override { return Status::Ok(); }
  Status Recover(int64_t) override { return Status::Ok(); }
  Status BeginTransaction() override { return Status::Ok(); }
  Status Write(std::string_view, std::string_view, TimestampMs) override {
    if (up_->written.fetch_add(1) == 200) return Status::IoError("the output went away");
    return Status::Ok();
  }
  Status PreCommit(int64_t) override { return Status::Ok(); }
  Status Commit(int64_t) override { return Status::Ok(); }
  Status Abort(int64_t) override { return Status::Ok(); }
  Status Close() override { return Status::Ok(); }
  bool CommitIsResumable() const override { return false; }

 private:
  StartUp* up_;
};

class InMemoryGroup final : public CommitGroup {
 public:
  int64_t last_committed() const override { return 0; }
  Status Commit(int64_t) override { return Status::Ok(); }
  std::string Describe() const override { return "in-memory group"; }
};

// A generator of many records into an exactly-once sink in the group above.
void BuildStartUpJob(Job& job, StartUp* up) {
  up->job = &job;
  auto source =
      job.Source<int64_t>("gen", GeneratorSourceFactory<int64_t>([](uint64_t i, int64_t* v) {
                            *v = static_cast<int64_t>(i);
                            return i < 1000000;
                          }),
                          WatermarkSpec{.mode = TimeMode::kNone});
  TxnSinkSpec spec;
  spec.group = CommitGroupSpec{
      .key = "in-memory",
      .start = [up](const CommitGroupContext&, uint32_t) -> Result<std::unique_ptr<CommitGroup>> {
        const int call = up->calls.fetch_add(1) + 1;
        if (call == up->stop_on_call) {
          if (up->by_signal) {
            ::raise(SIGTERM);
          } else {
            up->job->RequestStop();
          }
        }
        if (call >= 2 || call == up->stop_on_call)
          return Status::TimedOut("reading progress did not reach its end in time");
        return std::unique_ptr<CommitGroup>(std::make_unique<InMemoryGroup>());
      },
      .participant = [up](CommitGroup*, uint32_t) -> std::unique_ptr<TwoPhaseCommitSink> {
        return std::make_unique<FirstRunFailsSink>(up);
      }};
  ExactlyOnceSink<int64_t>(
      source, job, "out", std::move(spec),
      [](const int64_t& v, std::string*, std::string* payload) { *payload = std::to_string(v); });
}

// The job above with restarts; no checkpoint completes before the first run fails (so every
// start restores nothing).
int RunStartUpJob(StartUp* up, int max_attempts, const std::string& state_dir) {
  JobOptions options;
  options.parallelism = 1;
  options.checkpoint.state_dir = state_dir;
  options.checkpoint.options.interval_ms = 60000;
  options.checkpoint.restart.initial_delay_ms = 10;
  options.checkpoint.restart.max_delay_ms = 10;
  options.checkpoint.restart.max_attempts = max_attempts;
  Job job(options);
  BuildStartUpJob(job, up);
  const int code = job.Run();
  up->restarts = job.metrics().Sum(kMetricRestarts);
  up->job = nullptr;
  return code;
}

// Told to stop while its restart waits for the commit group (a broker outage): the job stops as
// asked, exit 0 (it used to exit 1, "job failed", for a stop the user asked for).
TEST_F(FaultRestartTest, AStopDuringARestartsStartUpIsAStopNotAFailure) {
  StartUp up;
  up.stop_on_call = 2;
  EXPECT_EQ(RunStartUpJob(&up, 3, dir_.string()), 0);
  EXPECT_EQ(up.calls.load(), 2);
  EXPECT_EQ(up.restarts, 1);
}

// The control: the same start-up failures without a stop are a failure (restarts used up).
TEST_F(FaultRestartTest, AFailingRestartWithoutAStopStillFails) {
  StartUp up;
  EXPECT_EQ(RunStartUpJob(&up, 2, dir_.string()), 1);
  EXPECT_EQ(up.calls.load(), 3);
  EXPECT_EQ(up.restarts, 2);
}

// A first start that fails under a stop is no restart: the job never ran, exit 1.
TEST_F(FaultRestartTest, AFirstStartThatFailsUnderAStopStillFails) {
  StartUp up;
  up.stop_on_call = 1;
  EXPECT_EQ(RunStartUpJob(&up, 3, dir_.string()), 1);
  EXPECT_EQ(up.calls.load(), 1);
}

// In a child process: the job under RunMain, where the second start gets a SIGTERM; with
// `savepoint_on_stop`, --savepoint-on-stop.
int RunSignalledStartUpJob(const std::string& state_dir, bool savepoint_on_stop) {
  static StartUp up;
  up.stop_on_call = 2;
  up.by_signal = true;
  std::vector<const char*> argv = {"job",
                                   "--parallelism",
                                   "1",
                                   "--state-dir",
                                   state_dir.c_str(),
                                   "--checkpoint-interval",
                                   "60s",
                                   "--restart-delay",
                                   "10ms",
                                   "--progress-interval",
                                   "0"};
  if (savepoint_on_stop) argv.push_back("--savepoint-on-stop");
  return RunMain(static_cast<int>(argv.size()), argv.data(), {}, [](Job& job) {
    BuildStartUpJob(job, &up);
    return Status::Ok();
  });
}

// SIGTERM while the restart starts: a stop (exit 0) ...
TEST_F(FaultRestartTest, ASignalDuringARestartsStartUpIsAStop) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::exit(RunSignalledStartUpJob(dir_.string(), false)), ::testing::ExitedWithCode(0),
              "stopped before the restart completed");
}

// ... but with --savepoint-on-stop no savepoint could be taken, which that flag reports as
// exit 1, as when its savepoint fails.
TEST_F(FaultRestartTest, ASignalDuringARestartsStartUpWithSavepointOnStopExits1) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::exit(RunSignalledStartUpJob(dir_.string(), true)), ::testing::ExitedWithCode(1),
              "stopped without a savepoint: the signal came while the job was restarting");
}

// flow_backpressure_ms_total is computed from the channels of the running attempt plus what the
// earlier attempts accumulated; it is registered as a counter so scrapers treat it as one.
TEST(MetricsCallbacks, CounterCallbacksRenderAsCounters) {
  MetricsRegistry registry;
  int64_t v = 5;
  registry.AddCallback(
      "x_total", "a computed counter", {{"operator", "a"}}, [&v] { return v; },
      MetricType::kCounter);
  registry.AddCallback("y", "a computed gauge", {}, [] { return int64_t{1}; });
  std::string text = registry.RenderPrometheus();
  EXPECT_NE(text.find("# TYPE x_total counter\nx_total{operator=\"a\"} 5\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("# TYPE y gauge\ny 1\n"), std::string::npos) << text;
  registry.ClearCallbacks();
  EXPECT_EQ(registry.RenderPrometheus(), "");
}

}  // namespace
}  // namespace flow::rt
