// End-to-end checkpoints and recovery: recovery_job (generator -> KeyBy -> running count -> file
// sink) runs in a child process with checkpoints every 100 ms, is killed with SIGKILL (at random
// moments, or by FLOW_FAULT at a checkpoint step) and restarted with the same state dir until it
// finishes. The output must then hold every (key, count) the input implies, nothing else, and
// end with each key's total count (at-least-once: duplicates are allowed).

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace {

constexpr int64_t kRecords = 40000;
constexpr int64_t kKeys = 37;
// The job sleeps 1 ms every this many events per subtask: a run lasts over a second, long
// enough for several checkpoints and a kill in between.
constexpr int64_t kPauseEvery = 20;

namespace fs = std::filesystem;

struct RunResult {
  bool killed = false;  // ended by SIGKILL
  int exit_code = -1;   // when it exited
  std::string log;      // its stderr
};

class RecoveryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("flow_recovery_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs the job once; `fault` goes to FLOW_FAULT (empty: none); kill_after_ms > 0 kills it with
  // SIGKILL after that long unless it ended before.
  RunResult RunOnce(const std::string& fault, int kill_after_ms, const char* parallelism = "2") {
    std::string log_path = (dir_ / "run.log").string();
    pid_t pid = ::fork();
    if (pid == 0) {
      std::freopen(log_path.c_str(), "w", stderr);
      if (fault.empty()) {
        ::unsetenv("FLOW_FAULT");
      } else {
        ::setenv("FLOW_FAULT", fault.c_str(), 1);
      }
      std::string out = "out=" + (dir_ / "out.csv").string();
      std::string state = (dir_ / "state").string();
      ::execl(FLOW_RECOVERY_JOB, FLOW_RECOVERY_JOB, "--parallelism", parallelism, "--state-dir",
              state.c_str(), "--checkpoint-interval", "100ms", "--progress-interval", "0", "--set",
              out.c_str(), "--set", ("records=" + std::to_string(kRecords)).c_str(), "--set",
              ("keys=" + std::to_string(kKeys)).c_str(), "--set",
              ("pause_every=" + std::to_string(kPauseEvery)).c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    RunResult r;
    int status = 0;
    auto start = std::chrono::steady_clock::now();
    while (true) {
      pid_t done = ::waitpid(pid, &status, kill_after_ms > 0 ? WNOHANG : 0);
      if (done == pid) break;
      if (kill_after_ms > 0 &&
          std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(kill_after_ms)) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    r.killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    std::ifstream in(log_path);
    std::stringstream ss;
    ss << in.rdbuf();
    r.log = ss.str();
    return r;
  }

  // Whether a complete checkpoint (one with its _metadata) is in the state dir: what a restart
  // restores from.
  bool HasCompleteCheckpoint() const {
    std::error_code ec;
    for (fs::recursive_directory_iterator it(dir_ / "state", ec), end; !ec && it != end;
         it.increment(ec)) {
      if (it->path().filename() == "_metadata") return true;
    }
    return false;
  }

  size_t OutputLines() const {
    std::ifstream in(dir_ / "out.csv");
    size_t lines = 0;
    for (std::string line; std::getline(in, line);) ++lines;
    return lines;
  }

  // Runs the job without faults to its end and checks it resumed from a checkpoint: it logged
  // the restore, and it wrote fewer lines than the whole input (a fresh start writes one line
  // per input record, which the final-count check alone would accept).
  void RunToCompletionFromCheckpoint() {
    size_t before = OutputLines();
    RunResult r = RunOnce("", 0);
    ASSERT_EQ(r.exit_code, 0) << r.log;
    EXPECT_NE(r.log.find("restoring"), std::string::npos) << r.log;
    EXPECT_LT(OutputLines() - before, static_cast<size_t>(kRecords))
        << "the restarted run started from scratch";
  }

  // The output against a reference computed from the input (key i % kKeys for i < kRecords).
  void CheckOutput() {
    std::map<int64_t, int64_t> expected;
    for (int64_t i = 0; i < kRecords; ++i) ++expected[i % kKeys];
    std::map<int64_t, std::set<int64_t>> seen;
    std::map<int64_t, int64_t> last;
    std::ifstream in(dir_ / "out.csv");
    std::string line;
    size_t lines = 0;
    while (std::getline(in, line)) {
      ++lines;
      int64_t key = 0, count = 0;
      ASSERT_EQ(std::sscanf(line.c_str(), "%ld,%ld", &key, &count), 2) << "bad line: " << line;
      ASSERT_TRUE(expected.count(key)) << "unknown key in " << line;
      ASSERT_GE(count, 1) << line;
      ASSERT_LE(count, expected[key]) << "count beyond the input in " << line;
      seen[key].insert(count);
      last[key] = count;
    }
    EXPECT_GE(lines, static_cast<size_t>(kRecords));
    for (const auto& [key, total] : expected) {
      EXPECT_EQ(last[key], total) << "final count of key " << key;
      EXPECT_EQ(seen[key].size(), static_cast<size_t>(total)) << "key " << key << " misses counts";
    }
  }

  fs::path dir_;
};

TEST_F(RecoveryTest, WithoutFailuresEveryCountAppearsOnce) {
  RunResult r = RunOnce("", 0);
  ASSERT_EQ(r.exit_code, 0) << r.log;
  EXPECT_NE(r.log.find("result=completed"), std::string::npos)
      << "no checkpoint completed: " << r.log;
  CheckOutput();
  // Exactly one line per input record when nothing failed.
  EXPECT_EQ(OutputLines(), static_cast<size_t>(kRecords));
}

TEST_F(RecoveryTest, SurvivesKillsAtRandomMoments) {
  std::mt19937 rng(20261129);
  std::uniform_int_distribution<int> delay(300, 900);
  int kills = 0;
  bool finished = false;
  // Up to three runs are killed at random moments; the run after them goes to the end.
  for (int attempt = 0; attempt < 4 && !finished; ++attempt) {
    size_t before = OutputLines();
    // A kill can land before the first checkpoint completes (a slow machine): then there is
    // nothing to restore, and only the output check below applies.
    bool restorable = HasCompleteCheckpoint();
    RunResult r = RunOnce("", attempt < 3 ? delay(rng) : 0);
    if (r.killed) {
      ++kills;
      continue;
    }
    ASSERT_EQ(r.exit_code, 0) << r.log;
    finished = true;
    if (kills > 0 && restorable) {
      EXPECT_NE(r.log.find("restoring"), std::string::npos) << r.log;
      EXPECT_LT(OutputLines() - before, static_cast<size_t>(kRecords))
          << "the last run started from scratch";
    }
  }
  ASSERT_TRUE(finished);
  ASSERT_GE(kills, 1) << "the job finished before the first kill";
  CheckOutput();
}

// The generator source has no split rule for another parallelism: the restore is refused with
// an error that says so (keyed state alone would rescale).
TEST_F(RecoveryTest, RefusesToRescaleAGeneratorSource) {
  RunResult first = RunOnce("after-metadata:1", 0);
  ASSERT_TRUE(first.killed) << first.log;
  size_t before = OutputLines();
  RunResult other = RunOnce("", 0, "3");
  EXPECT_EQ(other.exit_code, 1) << other.log;
  EXPECT_NE(other.log.find("cannot restore positions taken at parallelism 2"), std::string::npos)
      << other.log;
  EXPECT_EQ(OutputLines(), before) << "the refused run processed data";
  // The original parallelism still recovers.
  RunToCompletionFromCheckpoint();
  CheckOutput();
}

class FaultRecoveryTest : public RecoveryTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(FaultRecoveryTest, SurvivesKillAtCheckpointStep) {
  RunResult first = RunOnce(GetParam(), 0);
  ASSERT_TRUE(first.killed) << "the fault point was not hit: exit " << first.exit_code << " "
                            << first.log;
  // Checkpoint 1 completed before the fault in every case, so the restart restores.
  RunToCompletionFromCheckpoint();
  CheckOutput();
}

INSTANTIATE_TEST_SUITE_P(Points, FaultRecoveryTest,
                         ::testing::Values("after-barrier:2:count", "after-state-before-metadata:2",
                                           "after-metadata:2"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

}  // namespace
