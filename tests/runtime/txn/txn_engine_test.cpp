// Exactly-once sinks wired into the engine (runtime/src/engine/txn_sinks.cpp), with the file
// sink: a bounded job's output becomes visible through its final checkpoint; a job killed at each
// protocol step (in a forked child) and then run again leaves every record visible exactly once;
// configuration errors are reported before anything runs.

#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "flow/runtime/checkpoint/fault_injection.h"
#include "flow/runtime/engine/job.h"
#include "flow/runtime/engine/txn_sink.h"

namespace flow::rt {
namespace {

namespace fs = std::filesystem;

struct Rec {
  int64_t i = 0;
};

// Like the generator below (subtask s of p emits s, s+p, ... below n, pausing every 100 records),
// but each subtask holds its last record back (kIdle) for up to `hold_ms`: a child armed with a
// fault keeps taking checkpoints until the fault kills it, however slowly a loaded machine takes
// the first ones (a job that ends first would finish through its final checkpoint instead).
class TailHoldingSource final : public SourceFunction<Rec> {
 public:
  TailHoldingSource(int64_t n, int64_t hold_ms, uint32_t subtask, uint32_t parallelism)
      : n_(static_cast<uint64_t>(n)),
        hold_(std::chrono::milliseconds(hold_ms)),
        next_(subtask),
        step_(parallelism) {}

  Result<PollResult> PollBatch(Batch<Rec>& out, size_t max) override {
    for (size_t k = 0; k < max; ++k) {
      if (next_ >= n_) return PollResult::kEnd;
      if (next_ + step_ >= n_) {  // the last record of this subtask
        auto now = std::chrono::steady_clock::now();
        if (held_since_ == std::chrono::steady_clock::time_point{}) held_since_ = now;
        if (now - held_since_ < hold_) {
          if (k > 0) return PollResult::kRecords;
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
          return PollResult::kIdle;
        }
      }
      if (next_ % 100 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
      out.Add(Rec{static_cast<int64_t>(next_)}, kNoEventTime);
      next_ += step_;
    }
    return PollResult::kRecords;
  }
  // The generator's format: a rerun with the plain generator restores these positions.
  Status SnapshotPosition(BinaryWriter* out) const override {
    out->PutU64(next_);
    return Status::Ok();
  }
  Status RestorePosition(BinaryReader* in) override { return in->GetU64(&next_); }

 private:
  uint64_t n_;
  std::chrono::steady_clock::duration hold_;
  std::chrono::steady_clock::time_point held_since_{};
  uint64_t next_;
  uint64_t step_;
};

class TxnEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("flow-txn-engine-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Generator 0..n-1 at parallelism 2 (a short pause every 100 records so checkpoints land
  // mid-run) -> exactly-once file sink at parallelism 2.
  // `interval_ms`: checkpoint interval (an hour: only the final checkpoint). `uneven`: source
  // subtask 0 ends after 50 records while subtask 1 goes on, each feeding its own sink subtask
  // (forward), so sink subtask 0 finishes while the job runs. `hold_last_ms_` > 0: the source
  // is a TailHoldingSource.
  Status RunJob(int64_t n, bool with_state_dir = true, int64_t interval_ms = 20,
                bool uneven = false) {
    JobOptions o;
    o.parallelism = 2;
    if (with_state_dir) o.checkpoint.state_dir = (dir_ / "state").string();
    o.checkpoint.interval_ms = interval_ms;
    o.checkpoint.options.interval_ms = interval_ms;
    Job job(o);
    auto gen = [n, uneven](uint64_t index, Rec* r) {
      if (static_cast<int64_t>(index) >= n || (uneven && index % 2 == 0 && index >= 100))
        return false;
      if (index % 100 == (uneven ? 1 : 0))
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      r->i = static_cast<int64_t>(index);
      return true;
    };
    SourceFactory<Rec> factory = GeneratorSourceFactory<Rec>(gen);
    if (hold_last_ms_ > 0) {
      factory = [n, hold = hold_last_ms_](uint32_t subtask, uint32_t parallelism) {
        return std::make_unique<TailHoldingSource>(n, hold, subtask, parallelism);
      };
    }
    auto s = job.Source<Rec>("gen", factory, WatermarkSpec{.mode = TimeMode::kNone});
    ExactlyOnceFileSinkOptions fo;
    fo.directory = (dir_ / "out").string();
    ExactlyOnceSink<Rec>(
        uneven ? s : s.Rebalance(), job, "files", FileTxnSink(fo),
        [](const Rec& r, std::string*, std::string* payload) { *payload = std::to_string(r.i); });
    return job.Execute();
  }

  // Lines of the visible (committed) files; hidden files are counted in *hidden.
  std::map<int64_t, int> Visible(int* hidden = nullptr) {
    std::map<int64_t, int> lines;
    int h = 0;
    if (!fs::exists(dir_ / "out")) return lines;
    for (const auto& e : fs::directory_iterator(dir_ / "out")) {
      std::string name = e.path().filename().string();
      if (name[0] == '.') {
        ++h;
        continue;
      }
      std::ifstream in(e.path());
      std::string line;
      while (std::getline(in, line)) ++lines[std::stoll(line)];
    }
    if (hidden) *hidden = h;
    return lines;
  }

  // Every i in [0, n) exactly once (only the odd ones and 0..99 when `uneven`), nothing else.
  static ::testing::AssertionResult ExactlyOnce(const std::map<int64_t, int>& lines, int64_t n,
                                                bool uneven = false) {
    auto expected = [uneven](int64_t i) { return !uneven || i % 2 == 1 || i < 100; };
    int64_t want = 0;
    for (int64_t i = 0; i < n; ++i) want += expected(i) ? 1 : 0;
    if (static_cast<int64_t>(lines.size()) != want) {
      return ::testing::AssertionFailure()
             << lines.size() << " distinct records visible, expected " << want;
    }
    for (int64_t i = 0; i < n; ++i) {
      if (!expected(i)) continue;
      auto it = lines.find(i);
      if (it == lines.end()) return ::testing::AssertionFailure() << "record " << i << " missing";
      if (it->second != 1)
        return ::testing::AssertionFailure()
               << "record " << i << " visible " << it->second << " times";
    }
    return ::testing::AssertionSuccess();
  }

  fs::path dir_;
  int64_t hold_last_ms_ = 0;
};

TEST_F(TxnEngineTest, BoundedJobCommitsEverythingThroughItsFinalCheckpoint) {
  Status s = RunJob(3000);
  ASSERT_TRUE(s.ok()) << s.ToString();
  int hidden = -1;
  auto lines = Visible(&hidden);
  EXPECT_TRUE(ExactlyOnce(lines, 3000));
  EXPECT_EQ(hidden, 0) << "pending or in-progress files left after the final commit";
}

TEST_F(TxnEngineTest, RunningAgainAfterTheEndAddsNothing) {
  ASSERT_TRUE(RunJob(1000).ok());
  // The restored (final) checkpoint says every subtask finished: nothing is replayed.
  Status s = RunJob(1000);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(ExactlyOnce(Visible(), 1000));
}

TEST_F(TxnEngineTest, NeedsAStateDir) {
  Status s = RunJob(10, /*with_state_dir=*/false);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("--state-dir"), std::string::npos) << s.message();
  EXPECT_TRUE(Visible().empty());
}

TEST_F(TxnEngineTest, KafkaSinkWithoutJobIdIsRefusedBeforeAnythingRuns) {
  JobOptions o;
  o.checkpoint.state_dir = (dir_ / "state").string();
  Job job(o);
  auto s =
      job.Source<Rec>("gen", GeneratorSourceFactory<Rec>([](uint64_t i, Rec* r) { return i < 1; }),
                      WatermarkSpec{.mode = TimeMode::kNone});
  ExactlyOnceSink<Rec>(s, job, "kafka", KafkaTxnSink("127.0.0.1:1", {.topic = "t"}),
                       [](const Rec&, std::string*, std::string*) {});
  Status st = job.Execute();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("--job-id"), std::string::npos) << st.message();
}

// A child process runs the job with FLOW_FAULT-style `fault` and dies there; the parent then
// runs the same job to the end: every record is visible exactly once.
class TxnEngineCrashTest : public TxnEngineTest,
                           public ::testing::WithParamInterface<const char*> {};

TEST_P(TxnEngineCrashTest, KilledAtAProtocolStepThenRerunIsExact) {
  const int64_t n = 20000;
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (!ConfigureFaults(GetParam()).ok()) ::_exit(70);
    hold_last_ms_ = 60000;  // every fault point is reached before the input ends
    Status s = RunJob(n);
    ::_exit(s.ok() ? 0 : 71);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
      << GetParam() << " was not reached (status " << status << ")";
  // Nothing is visible twice even before recovery.
  for (const auto& [i, c] : Visible()) ASSERT_EQ(c, 1) << "record " << i;
  Status s = RunJob(n);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(ExactlyOnce(Visible(), n));
}

// Runs the job in a forked child armed with `fault`, which must kill it; the child's exit status.
::testing::AssertionResult KilledAt(const char* fault, const std::function<Status()>& run) {
  pid_t pid = ::fork();
  if (pid < 0) return ::testing::AssertionFailure() << "fork failed";
  if (pid == 0) {
    if (!ConfigureFaults(fault).ok()) ::_exit(70);
    Status s = run();
    ::_exit(s.ok() ? 0 : 71);
  }
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return ::testing::AssertionFailure() << "waitpid failed";
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << fault << " was not reached (status " << status << ")";
}

// The final checkpoint of a bounded job is durable (its metadata written) and the process dies
// before the sinks heard it completed: the rerun restores it, every source has finished, and the
// restore alone must make the last epoch visible (the sinks sealed it before acknowledging).
TEST_F(TxnEngineTest, KilledRightAfterTheFinalCheckpointIsDurableLosesNothing) {
  const int64_t n = 3000;
  // An hour between checkpoints: the first checkpoint is the final one.
  ASSERT_TRUE(KilledAt("after-metadata:1", [&] { return RunJob(n, true, 3600000); }));
  Status s = RunJob(n, true, 3600000);
  ASSERT_TRUE(s.ok()) << s.ToString();
  int hidden = -1;
  EXPECT_TRUE(ExactlyOnce(Visible(&hidden), n));
  EXPECT_EQ(hidden, 0);
}

// Sink subtask 0 ends (within milliseconds) while subtask 1 writes for about 0.4 s; the first
// checkpoint, which covers subtask 0's end, completes and the process dies before the commit.
// Subtask 0's records must survive the restore (its source is not rerun: it had finished).
TEST_F(TxnEngineTest, SinkSubtaskThatEndedBeforeOthersKeepsItsRecordsAcrossACrash) {
  const int64_t n = 20000;
  ASSERT_TRUE(KilledAt("after-metadata:1", [&] { return RunJob(n, true, 20, /*uneven=*/true); }));
  for (const auto& [i, c] : Visible()) ASSERT_EQ(c, 1) << "record " << i;
  Status s = RunJob(n, true, 20, /*uneven=*/true);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(ExactlyOnce(Visible(), n, /*uneven=*/true));
}

INSTANTIATE_TEST_SUITE_P(Faults, TxnEngineCrashTest,
                         ::testing::Values("after-precommit:5", "after-metadata:3",
                                           "during-commit:3", "after-commit-before-cleanup:3",
                                           "after-barrier:4:*:1"));

}  // namespace
}  // namespace flow::rt

namespace flow::rt {
namespace {

// The path generated code takes: a sink from the script's connector options.
TEST_F(TxnEngineTest, SinkFromScriptOptionsCommitsAtTheEnd) {
  JobOptions o;
  o.checkpoint.state_dir = (dir_ / "state").string();
  Job job(o);
  auto s = job.Source<Rec>("gen", GeneratorSourceFactory<Rec>([](uint64_t i, Rec* r) {
                             r->i = static_cast<int64_t>(i);
                             return i < 500;
                           }),
                           WatermarkSpec{.mode = TimeMode::kNone});
  Status added = AddExactlyOnceSink<Rec>(
      job, s, "files", "file", {{"directory", (dir_ / "out").string()}, {"suffix", ".txt"}},
      [](const Rec& r, std::string*, std::string* p) { *p = std::to_string(r.i); });
  ASSERT_TRUE(added.ok()) << added.ToString();
  Status st = job.Execute();
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(ExactlyOnce(Visible(), 500));
}

TEST(TxnSinkSpecTest, OptionsAreCheckedAndNamed) {
  const std::map<std::string, std::string> options = {{"brokers", "b:1"},
                                                      {"topic", "t"},
                                                      {"partitioner", "explicit"},
                                                      {"partition", "3"},
                                                      {"transaction_timeout", "2m"},
                                                      {"kafka.linger.ms", "5"}};
  auto k = KafkaTxnSinkConfigFor(options);
  ASSERT_TRUE(k.ok()) << k.status().ToString();
  EXPECT_EQ(k->brokers, "b:1");
  EXPECT_EQ(k->sink.topic, "t");
  EXPECT_EQ(k->sink.partitioner, KafkaPartitioner::kExplicit);
  EXPECT_EQ(k->sink.partition, 3);
  EXPECT_EQ(k->transaction_timeout_ms, 120000);
  EXPECT_EQ(k->properties.at("linger.ms"), "5");
  // A Kafka sink is a participant of a commit group keyed by its brokers; the engine sees no more.
  auto spec = TxnSinkSpecFor("kafka", options);
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  ASSERT_TRUE(spec->group.has_value());
  EXPECT_NE(spec->group->key.find("b:1"), std::string::npos) << spec->group->key;
  EXPECT_FALSE(static_cast<bool>(spec->factory));

  auto missing = TxnSinkSpecFor("kafka", {{"brokers", "b:1"}});
  EXPECT_EQ(missing.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("`topic`"), std::string::npos)
      << missing.status().message();
  auto unknown = TxnSinkSpecFor("kafka", {{"brokers", "b:1"}, {"topic", "t"}, {"acks", "1"}});
  EXPECT_NE(unknown.status().message().find("unknown option `acks`"), std::string::npos)
      << unknown.status().message();
  auto bad = TxnSinkSpecFor("kafka",
                            {{"brokers", "b:1"}, {"topic", "t"}, {"transaction_timeout", "soon"}});
  EXPECT_NE(bad.status().message().find("transaction_timeout"), std::string::npos)
      << bad.status().message();
  auto other = TxnSinkSpecFor("stdout", {});
  EXPECT_NE(other.status().message().find("kafka and file"), std::string::npos)
      << other.status().message();
  auto hidden = TxnSinkSpecFor("file", {{"directory", "/tmp/x"}, {"prefix", ".p"}});
  EXPECT_EQ(hidden.status().code(), StatusCode::kInvalidArgument);
  auto file = TxnSinkSpecFor("file", {{"directory", "/tmp/x"}, {"roll_bytes", "4096"}});
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_FALSE(file->group.has_value());
  EXPECT_TRUE(static_cast<bool>(file->factory));
}

}  // namespace
}  // namespace flow::rt
