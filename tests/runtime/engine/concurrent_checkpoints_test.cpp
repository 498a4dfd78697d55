// Concurrent checkpoints (--max-concurrent-checkpoints 2 and 3) through multi-input tasks: two
// parallel sources whose polls sometimes block for several checkpoint intervals (as a Kafka poll
// may), so several checkpoints are requested between two polls of one source subtask. Every
// source must take every requested barrier in order; otherwise the aligners of the union and of
// the two-input operator see barrier N+1 on one channel while others carry N, decline N, and the
// job restarts. The tests assert many completed checkpoints, no decline, no restart and exact
// output (keyed counts; an exactly-once file sink).

#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>

#include "flow/runtime/common/key_group.h"
#include "flow/runtime/engine/job.h"
#include "flow/runtime/engine/txn_sink.h"
#include "split_count_job.h"
#include "test_util.h"

namespace flow::rt {
namespace {

namespace fs = std::filesystem;
using split_count::KeyedCount;
using split_count::kKeys;
using split_count::Results;

constexpr int64_t kPerSubtask = 3000;
constexpr uint32_t kSourceParallelism = 2;
constexpr size_t kPerPoll = 8;
constexpr int kPauseEvery = 12;  // polls
constexpr int kPauseMs = 35;     // > 3 checkpoint intervals of 10 ms

// Record i of subtask s of source `side` (0 left, 1 right); its key is value % kKeys.
int64_t ValueOf(int side, uint32_t s, int64_t i) {
  return side * 7919 + static_cast<int64_t>(s) * 100003 + i * 13;
}

// Emits kPerSubtask records per subtask, kPerPoll per poll, sleeping 1 ms per poll and kPauseMs
// every kPauseEvery polls (a poll that blocks while the checkpoint timer keeps triggering).
class PausingSource final : public SourceFunction<int64_t> {
 public:
  PausingSource(int side, uint32_t subtask) : side_(side), subtask_(subtask) {}
  Result<PollResult> PollBatch(Batch<int64_t>& out, size_t max) override {
    ++polls_;
    std::this_thread::sleep_for(
        std::chrono::milliseconds(polls_ % kPauseEvery == 0 ? kPauseMs : 1));
    for (size_t n = 0; n < std::min(max, kPerPoll) && next_ < kPerSubtask; ++n, ++next_) {
      out.Add(ValueOf(side_, subtask_, next_), kNoEventTime);
    }
    return next_ < kPerSubtask ? PollResult::kRecords : PollResult::kEnd;
  }
  Status SnapshotPosition(BinaryWriter* out) const override {
    out->PutI64(next_);
    return Status::Ok();
  }
  Status RestorePosition(BinaryReader* in) override { return in->GetI64(&next_); }

 private:
  int side_;
  uint32_t subtask_;
  int64_t next_ = 0;
  int64_t polls_ = 0;
};

SourceFactory<int64_t> PausingSourceFactory(int side) {
  return [side](uint32_t s, uint32_t) { return std::make_unique<PausingSource>(side, s); };
}

uint64_t KeyOf(const int64_t& v) {
  return StableHash(v % kKeys);
}

// Two-input keyed operator: per key, how many records came on each input; the counts are its
// state (restore keeps the owned key groups). Results go to `results` under key*2 + input.
class SideCount final : public TwoInputOperator<int64_t, int64_t, int64_t> {
 public:
  explicit SideCount(Results* results) : results_(results) {}
  Status Open(OperatorContext& ctx) override {
    ctx_ = &ctx;
    return Status::Ok();
  }
  Status ProcessBatch1(const Batch<int64_t>& batch, Output<int64_t>&) override {
    return Add(batch, 0);
  }
  Status ProcessBatch2(const Batch<int64_t>& batch, Output<int64_t>&) override {
    return Add(batch, 1);
  }
  Status SnapshotState(BinaryWriter* out) override {
    out->PutU64(counts_.size());
    for (const auto& [k, c] : counts_) {
      out->PutI64(k);
      out->PutI64(c);
    }
    return Status::Ok();
  }
  Status RestoreState(BinaryReader* in) override {
    uint64_t n = 0;
    FLOW_RETURN_IF_ERROR(in->GetU64(&n));
    for (uint64_t i = 0; i < n; ++i) {
      int64_t k = 0, c = 0;
      FLOW_RETURN_IF_ERROR(in->GetI64(&k));
      FLOW_RETURN_IF_ERROR(in->GetI64(&c));
      if (ctx_->key_groups.Contains(KeyGroupForHash(StableHash(k / 2), ctx_->max_parallelism)))
        counts_[k] += c;
    }
    return Status::Ok();
  }
  Status Finish(Output<int64_t>&) override {
    std::lock_guard<std::mutex> lock(results_->mu);
    for (const auto& [k, c] : counts_) results_->counts[k] += c;
    return Status::Ok();
  }

 private:
  Status Add(const Batch<int64_t>& batch, int input) {
    for (int64_t v : batch.records) ++counts_[(v % kKeys) * 2 + input];
    return Status::Ok();
  }
  Results* results_;
  OperatorContext* ctx_ = nullptr;
  std::unordered_map<int64_t, int64_t> counts_;
};

std::map<int64_t, int64_t> UnionReference() {
  std::map<int64_t, int64_t> ref;
  for (int side = 0; side < 2; ++side) {
    for (uint32_t s = 0; s < kSourceParallelism; ++s) {
      for (int64_t i = 0; i < kPerSubtask; ++i) ++ref[ValueOf(side, s, i) % kKeys];
    }
  }
  return ref;
}

std::map<int64_t, int64_t> SideReference() {
  std::map<int64_t, int64_t> ref;
  for (int side = 0; side < 2; ++side) {
    for (uint32_t s = 0; s < kSourceParallelism; ++s) {
      for (int64_t i = 0; i < kPerSubtask; ++i) ++ref[(ValueOf(side, s, i) % kKeys) * 2 + side];
    }
  }
  return ref;
}

size_t CountOf(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// How many completed checkpoints were triggered before the one completed just before them
// (trigger = log time of completion - duration_ms): proof that checkpoints ran concurrently.
int OverlappingCheckpoints(const std::string& log) {
  int overlaps = 0;
  int64_t previous_completion = -1;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    const size_t at = line.find("result=completed duration_ms=");
    const size_t t = line.find('T');
    if (at == std::string::npos || t == std::string::npos || line.size() < t + 13) continue;
    // "2026-12-01T15:00:45.494Z ...": milliseconds of the day.
    const int64_t completion =
        ((std::stoll(line.substr(t + 1, 2)) * 60 + std::stoll(line.substr(t + 4, 2))) * 60 +
         std::stoll(line.substr(t + 7, 2))) *
            1000 +
        std::stoll(line.substr(t + 10, 3));
    const int64_t trigger = completion - std::stoll(line.substr(at + 29));
    if (previous_completion >= 0 && trigger < previous_completion) ++overlaps;
    previous_completion = completion;
  }
  return overlaps;
}

class ConcurrentCheckpointsTest : public ::testing::TestWithParam<uint32_t> {
 protected:
  void SetUp() override {
    dir_ =
        fs::temp_directory_path() /
        ("flow_concurrent_ckpt_" + std::to_string(::getpid()) + "_" + std::to_string(GetParam()) +
         "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  JobOptions Options() const {
    JobOptions o;
    o.parallelism = 2;
    o.checkpoint.state_dir = (dir_ / "state").string();
    o.checkpoint.interval_ms = 10;
    o.checkpoint.options.interval_ms = 10;
    o.checkpoint.options.min_pause_ms = 0;
    o.checkpoint.options.max_concurrent = GetParam();
    o.checkpoint.options.tolerable_failures = 0;  // any decline fails the run (and restarts it)
    o.checkpoint.restart.initial_delay_ms = 10;
    o.checkpoint.restart.max_delay_ms = 20;
    o.checkpoint.restart.max_attempts = 5;
    return o;
  }

  // Runs the job with stderr captured; checks the run's log: no decline, no restart, at least
  // `min_completed` completed checkpoints.
  void ExpectCleanRun(Job& job, size_t min_completed) {
    ::testing::internal::CaptureStderr();
    Status s = testing::ExecuteWithWatchdog(job);
    std::string log = ::testing::internal::GetCapturedStderr();
    ASSERT_TRUE(s.ok()) << s.ToString() << "\n" << log;
    EXPECT_EQ(job.metrics().Sum(kMetricRestarts), 0) << log;
    EXPECT_EQ(CountOf(log, "alignment overtaken by a newer barrier"), 0u) << log;
    EXPECT_EQ(CountOf(log, "task declines checkpoint"), 0u) << log;
    EXPECT_EQ(CountOf(log, "reason=task_declined"), 0u) << log;
    EXPECT_EQ(CountOf(log, "reason=timeout"), 0u) << log;
    EXPECT_EQ(CountOf(log, "restarting job"), 0u) << log;
    EXPECT_GE(CountOf(log, "result=completed"), min_completed) << log;
    EXPECT_GT(OverlappingCheckpoints(log), 0) << "no checkpoint ran while another was pending\n"
                                              << log;
  }

  fs::path dir_;
};

TEST_P(ConcurrentCheckpointsTest, UnionAndTwoInputTasksAlignEveryBarrier) {
  Results union_counts, side_counts;
  Job job(Options());
  auto left = job.Source<int64_t>("left", PausingSourceFactory(0),
                                  WatermarkSpec{.mode = TimeMode::kNone}, kSourceParallelism);
  auto right = job.Source<int64_t>("right", PausingSourceFactory(1),
                                   WatermarkSpec{.mode = TimeMode::kNone}, kSourceParallelism);
  // Union of both sources, keyed: each "count" subtask reads four channels.
  left.KeyBy("key", KeyOf)
      .Union("both", {right.KeyBy("key", KeyOf)})
      .Then<int64_t>("count",
                     [&union_counts] { return std::make_unique<KeyedCount>(&union_counts); })
      .Sink("sink", CollectingSinkFactory(std::make_shared<Collected<int64_t>>()), 1);
  // Two-input keyed task: two channels per input.
  Connect(left.KeyBy("key", KeyOf), right.KeyBy("key", KeyOf))
      .Then<int64_t>("sides", [&side_counts] { return std::make_unique<SideCount>(&side_counts); })
      .Sink("side_sink", CollectingSinkFactory(std::make_shared<Collected<int64_t>>()), 1);
  ExpectCleanRun(job, 20);
  EXPECT_EQ(union_counts.counts, UnionReference());
  EXPECT_EQ(side_counts.counts, SideReference());
}

TEST_P(ConcurrentCheckpointsTest, ExactlyOnceFileSinkCommitsEveryRecordOnce) {
  JobOptions o = Options();
  Job job(o);
  auto left = job.Source<int64_t>("left", PausingSourceFactory(0),
                                  WatermarkSpec{.mode = TimeMode::kNone}, kSourceParallelism);
  auto right = job.Source<int64_t>("right", PausingSourceFactory(1),
                                   WatermarkSpec{.mode = TimeMode::kNone}, kSourceParallelism);
  ExactlyOnceFileSinkOptions fo;
  fo.directory = (dir_ / "out").string();
  ExactlyOnceSink<int64_t>(
      left.Union("both", {right}).Rebalance(), job, "files", FileTxnSink(fo),
      [](const int64_t& v, std::string*, std::string* payload) { *payload = std::to_string(v); });
  // Fewer than the union test's 20: each completion here also commits files, which a loaded
  // machine's disk slows; the overlap of checkpoints is checked directly (ExpectCleanRun).
  ExpectCleanRun(job, 10);
  // Every record visible exactly once, nothing left pending.
  std::map<int64_t, int> lines;
  int hidden = 0;
  for (const auto& e : fs::directory_iterator(dir_ / "out")) {
    if (e.path().filename().string()[0] == '.') {
      ++hidden;
      continue;
    }
    std::ifstream in(e.path());
    std::string line;
    while (std::getline(in, line)) ++lines[std::stoll(line)];
  }
  EXPECT_EQ(hidden, 0);
  std::map<int64_t, int> expected;
  for (int side = 0; side < 2; ++side) {
    for (uint32_t s = 0; s < kSourceParallelism; ++s) {
      for (int64_t i = 0; i < kPerSubtask; ++i) ++expected[ValueOf(side, s, i)];
    }
  }
  EXPECT_EQ(lines, expected);
}

INSTANTIATE_TEST_SUITE_P(MaxConcurrent, ConcurrentCheckpointsTest, ::testing::Values(2u, 3u));

}  // namespace
}  // namespace flow::rt
