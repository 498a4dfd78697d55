// Recovery inside the engine: in-process restart after a retriable failure (restoring the last
// checkpoint), no restart for non-retriable errors, giving up after the configured attempts, and
// restoring a checkpoint at another parallelism (keyed state by key group, source splits by the
// source's rules), compared with references computed here.

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "flow/runtime/common/key_group.h"
#include "flow/runtime/engine/job.h"
#include "split_count_job.h"
#include "test_util.h"

namespace flow::rt {
namespace {

namespace fs = std::filesystem;

using namespace split_count;  // NOLINT: the shared job's names

struct RunSpec {
  uint32_t parallelism = 4;
  CheckpointFlags flags;
  std::atomic<int>* fail_budget = nullptr;
  Status fail = Status::Ok();
  int64_t fail_after = 0;
  int sleep_every = 2;
  int64_t hold_at = 0;  // SourceOptions::hold_at
};

// Runs split source -> key by -> KeyedCount; fills *results from Finish; *restarts from metrics.
Status RunKeyedJob(const RunSpec& spec, Results* results, int64_t* restarts,
                   Job** running = nullptr) {
  JobOptions options;
  options.parallelism = spec.parallelism;
  options.checkpoint = spec.flags;
  Job job(options);
  if (running != nullptr) *running = &job;
  const SourceOptions source{.sleep_every = spec.sleep_every, .hold_at = spec.hold_at};
  job.Source<int64_t>(
         "splits",
         [source](uint32_t s, uint32_t p) { return std::make_unique<SplitSource>(s, p, source); },
         WatermarkSpec{.mode = TimeMode::kNone})
      .KeyBy("key", [](const int64_t& v) { return KeyHash(v); })
      .Then<int64_t>("count",
                     [results, spec] {
                       return std::make_unique<KeyedCount>(results,
                                                           FailSpec{.budget = spec.fail_budget,
                                                                    .status = spec.fail,
                                                                    .after = spec.fail_after});
                     })
      .Sink("sink", CollectingSinkFactory(std::make_shared<Collected<int64_t>>()), 1);
  Status s = testing::ExecuteWithWatchdog(job);
  if (restarts != nullptr) *restarts = job.metrics().Sum(kMetricRestarts);
  return s;
}

class EngineRecoveryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("flow_engine_recovery_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // Runs the job at parallelism 4 with checkpoints kept, held mid-input, and stops it once
  // checkpoint 3 completed. (Held: a job that ran to its end before the stop would leave a newest
  // checkpoint of finished tasks, which holds no state.)
  Status RunUntilThirdCheckpoint() {
    RunSpec first;
    first.flags = Flags();
    first.flags.retained = 1000;
    first.sleep_every = 1;
    first.hold_at = kPerSplit / 2;
    Results ignored;
    Job* job = nullptr;
    std::atomic<bool> done{false};
    std::thread stopper([&] {
      while (!done.load()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        if (fs::exists(dir_ / "chk-3" / "_metadata")) {
          job->RequestStop();
          return;
        }
      }
    });
    Status s = RunKeyedJob(first, &ignored, nullptr, &job);
    done.store(true);
    stopper.join();
    return s;
  }
  CheckpointFlags Flags() const {
    CheckpointFlags f;
    f.state_dir = dir_.string();
    f.options.interval_ms = 20;
    f.restart.initial_delay_ms = 10;
    f.restart.max_delay_ms = 40;
    f.restart.max_attempts = 3;
    return f;
  }
  fs::path dir_;
};

TEST_F(EngineRecoveryTest, RetriableFailureRestartsInProcessFromTheLastCheckpoint) {
  RunSpec spec;
  spec.flags = Flags();
  std::atomic<int> budget{1};
  spec.fail_budget = &budget;
  spec.fail = Status::Unavailable("service went away");
  spec.fail_after = kSplits * kPerSplit / 8;  // per subtask: about half of its records
  Results results;
  int64_t restarts = -1;
  Status s = RunKeyedJob(spec, &results, &restarts);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(budget.load(), 0) << "the failure was never injected";
  EXPECT_EQ(restarts, 1);
  // Counts are exact: the restarted run restored state and source positions of one checkpoint
  // (a restart from scratch keeps no state, a lost position would count records twice).
  EXPECT_EQ(results.counts, Reference());
}

TEST_F(EngineRecoveryTest, NonRetriableFailureDoesNotRestart) {
  RunSpec spec;
  spec.flags = Flags();
  std::atomic<int> budget{1};
  spec.fail_budget = &budget;
  spec.fail = Status::InvalidArgument("bad record");
  spec.fail_after = 100;
  Results results;
  int64_t restarts = -1;
  Status s = RunKeyedJob(spec, &results, &restarts);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("bad record"), std::string::npos) << s.ToString();
  EXPECT_EQ(restarts, 0);
}

TEST_F(EngineRecoveryTest, GivesUpAfterTheConfiguredAttempts) {
  RunSpec spec;
  spec.flags = Flags();
  spec.flags.restart.max_attempts = 2;
  std::atomic<int> budget{1000};  // fails on every run
  spec.fail_budget = &budget;
  spec.fail = Status::IoError("disk on fire");
  spec.fail_after = 1;
  Results results;
  int64_t restarts = -1;
  Status s = RunKeyedJob(spec, &results, &restarts);
  EXPECT_EQ(s.code(), StatusCode::kIoError) << s.ToString();
  EXPECT_NE(s.message().find("gave up after 2 restarts"), std::string::npos) << s.ToString();
  EXPECT_EQ(restarts, 2);
}

TEST_F(EngineRecoveryTest, WithoutStateDirAFailureIsFinal) {
  RunSpec spec;
  std::atomic<int> budget{1};
  spec.fail_budget = &budget;
  spec.fail = Status::Unavailable("gone");
  spec.fail_after = 1;
  Results results;
  int64_t restarts = -1;
  Status s = RunKeyedJob(spec, &results, &restarts);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  EXPECT_EQ(restarts, 0);
}

// The newest complete checkpoint under dir, taken while the source still ran.
std::string NewestCheckpoint(const fs::path& dir) {
  int64_t best = -1;
  std::string path;
  for (const auto& e : fs::directory_iterator(dir)) {
    const int64_t id = ParseCheckpointDir(e.path().filename().string());
    if (id < 0 || !fs::exists(e.path() / "_metadata")) continue;
    if (id > best) {
      best = id;
      path = e.path().string();
    }
  }
  return path;
}

class RescaleTest : public EngineRecoveryTest, public ::testing::WithParamInterface<uint32_t> {};

TEST_P(RescaleTest, RestoresKeyedStateAndSplitsAtAnotherParallelism) {
  // Run at parallelism 4 with checkpoints; stop it once a few checkpoints completed mid-run.
  Status s = RunUntilThirdCheckpoint();
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::string checkpoint = NewestCheckpoint(dir_);
  ASSERT_FALSE(checkpoint.empty());

  // Restore it at the new parallelism: counts per key must be exact.
  RunSpec second;
  second.parallelism = GetParam();
  second.flags.restore = checkpoint;
  second.sleep_every = 0;
  Results results;
  s = RunKeyedJob(second, &results, nullptr);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(results.counts, Reference())
      << "restored " << checkpoint << " at parallelism " << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Parallelism, RescaleTest, ::testing::Values(2u, 8u, 4u));

TEST_F(EngineRecoveryTest, CorruptNewestCheckpointFallsBackToThePreviousOne) {
  Status s = RunUntilThirdCheckpoint();
  ASSERT_TRUE(s.ok()) << s.ToString();
  // Flip one byte of a snapshot file of the newest checkpoint: its CRC no longer matches.
  std::string newest = NewestCheckpoint(dir_);
  ASSERT_FALSE(newest.empty());
  bool damaged = false;
  for (const auto& e : fs::directory_iterator(newest)) {
    if (e.path().extension() != ".snap" || fs::file_size(e.path()) == 0) continue;
    std::fstream f(e.path(), std::ios::in | std::ios::out | std::ios::binary);
    char c = 0;
    f.seekg(0);
    f.get(c);
    f.seekp(0);
    f.put(static_cast<char>(c ^ 0x5a));
    damaged = true;
    break;
  }
  ASSERT_TRUE(damaged) << "no snapshot file in " << newest;
  // Automatic selection skips it (warning) and restores the one before: counts stay exact.
  RunSpec second;
  second.flags = Flags();
  second.flags.options.interval_ms = 0;
  second.sleep_every = 0;
  Results results;
  s = RunKeyedJob(second, &results, nullptr);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(results.counts, Reference());
}

TEST_F(EngineRecoveryTest, SourceThatCannotRescaleGivesAClearError) {
  CheckpointFlags flags = Flags();
  flags.restart.max_attempts = 0;
  std::string checkpoint;
  {
    JobOptions options;
    options.parallelism = 2;
    options.checkpoint = flags;
    Job job(options);
    auto gen = [](uint64_t i, int64_t* out) {
      if (i >= 200000) return false;
      if (i % 20 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      *out = static_cast<int64_t>(i);
      return true;
    };
    job.Source<int64_t>("numbers", GeneratorSourceFactory<int64_t>(gen),
                        WatermarkSpec{.mode = TimeMode::kNone})
        .Sink("sink", CollectingSinkFactory(std::make_shared<Collected<int64_t>>()));
    std::thread stopper([&] {
      for (int i = 0; i < 2000 && !fs::exists(dir_ / "chk-2" / "_metadata"); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      job.RequestStop();
    });
    ASSERT_TRUE(testing::ExecuteWithWatchdog(job).ok());
    stopper.join();
    checkpoint = NewestCheckpoint(dir_);
  }
  ASSERT_FALSE(checkpoint.empty());
  JobOptions options;
  options.parallelism = 3;
  options.checkpoint.restore = checkpoint;
  Job job(options);
  auto gen = [](uint64_t i, int64_t* out) {
    *out = static_cast<int64_t>(i);
    return i < 4000;
  };
  job.Source<int64_t>("numbers", GeneratorSourceFactory<int64_t>(gen),
                      WatermarkSpec{.mode = TimeMode::kNone})
      .Sink("sink", CollectingSinkFactory(std::make_shared<Collected<int64_t>>()));
  Status s = testing::ExecuteWithWatchdog(job);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("cannot restore positions taken at parallelism 2"), std::string::npos)
      << s.ToString();
  EXPECT_NE(s.message().find("--parallelism 2"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace flow::rt
