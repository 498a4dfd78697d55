// ExactlyOnceFileSink: visibility only at commit, idempotent commits, and recovery after a
// crash at every step (simulated by dropping the objects, and for real by SIGKILL in a forked
// child at the checkpoint area's fault points). The expected output is a reference list of
// records kept by the test: exactly the records of the committed epochs.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "flow/runtime/checkpoint/fault_injection.h"
#include "flow/runtime/txn/exactly_once_file_sink.h"

namespace flow::rt {
namespace {

namespace fs = std::filesystem;
constexpr uint32_t kParallelism = 2;

class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base != nullptr ? base : "/tmp") + "/flow-txn-XXXXXX";
    char* made = ::mkdtemp(tmpl.data());
    path_ = made != nullptr ? made : "";
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Lines of every visible (non-dot) file in `dir`, sorted: what a reader of the output sees.
std::vector<std::string> VisibleLines(const std::string& dir) {
  std::vector<std::string> lines;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line)) lines.push_back(line);
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

std::vector<std::string> HiddenFiles(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (!name.empty() && name[0] == '.') names.push_back(name);
  }
  return names;
}

std::string Record(uint32_t subtask, int64_t epoch, int i) {
  return "s" + std::to_string(subtask) + "-e" + std::to_string(epoch) + "-" + std::to_string(i);
}

// The reference: every record of epochs 1..through, for all subtasks, sorted.
std::vector<std::string> Expected(int64_t through, int per_epoch) {
  std::vector<std::string> out;
  for (int64_t e = 1; e <= through; ++e) {
    for (uint32_t s = 0; s < kParallelism; ++s) {
      for (int i = 0; i < per_epoch; ++i) out.push_back(Record(s, e, i));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

ExactlyOnceFileSinkOptions Options(const std::string& dir, uint64_t roll_bytes = 1 << 20) {
  ExactlyOnceFileSinkOptions o;
  o.directory = dir;
  o.roll_bytes = roll_bytes;
  o.buffer_bytes = 16;  // small: in-progress files really hold bytes when a crash happens
  return o;
}

std::vector<std::unique_ptr<ExactlyOnceFileSink>> StartSinks(const std::string& dir,
                                                             int64_t restored,
                                                             uint64_t roll_bytes = 1 << 20) {
  std::vector<std::unique_ptr<ExactlyOnceFileSink>> sinks;
  for (uint32_t s = 0; s < kParallelism; ++s) {
    auto sink = std::make_unique<ExactlyOnceFileSink>(Options(dir, roll_bytes));
    EXPECT_TRUE(sink->Open(s, kParallelism).ok());
    Status r = sink->Recover(restored);
    EXPECT_TRUE(r.ok()) << r.ToString();
    EXPECT_TRUE(sink->BeginTransaction().ok());
    sinks.push_back(std::move(sink));
  }
  return sinks;
}

void WriteEpoch(ExactlyOnceFileSink& sink, uint32_t subtask, int64_t epoch, int per_epoch) {
  for (int i = 0; i < per_epoch; ++i) {
    Status s = sink.Write("", Record(subtask, epoch, i), kNoTimestamp);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
}

// Barrier `epoch` at every subtask: pre-commit, begin the next transaction.
void Barrier(std::vector<std::unique_ptr<ExactlyOnceFileSink>>& sinks, int64_t epoch) {
  for (auto& sink : sinks) {
    Status s = sink->PreCommit(epoch);
    EXPECT_TRUE(s.ok()) << s.ToString();
    EXPECT_TRUE(sink->BeginTransaction().ok());
  }
}

TEST(ExactlyOnceFileSinkTest, RecordsBecomeVisibleOnlyAtCommitAndExactlyOnce) {
  TempDir dir;
  auto sinks = StartSinks(dir.path(), 0);
  for (uint32_t s = 0; s < kParallelism; ++s) WriteEpoch(*sinks[s], s, 1, 5);
  EXPECT_TRUE(VisibleLines(dir.path()).empty());
  Barrier(sinks, 1);
  EXPECT_TRUE(VisibleLines(dir.path()).empty()) << "pre-committed data must stay invisible";
  for (uint32_t s = 0; s < kParallelism; ++s) WriteEpoch(*sinks[s], s, 2, 5);
  for (auto& sink : sinks) ASSERT_TRUE(sink->Commit(1).ok());
  EXPECT_EQ(VisibleLines(dir.path()), Expected(1, 5));
  // Idempotent: committing again changes nothing.
  for (auto& sink : sinks) ASSERT_TRUE(sink->Commit(1).ok());
  EXPECT_EQ(VisibleLines(dir.path()), Expected(1, 5));
  Barrier(sinks, 2);
  for (auto& sink : sinks) ASSERT_TRUE(sink->Commit(2).ok());
  EXPECT_EQ(VisibleLines(dir.path()), Expected(2, 5));
}

TEST(ExactlyOnceFileSinkTest, CommitOfNCommitsEveryPendingCheckpointUpToN) {
  TempDir dir;
  auto sinks = StartSinks(dir.path(), 0);
  for (int64_t e = 1; e <= 3; ++e) {
    for (uint32_t s = 0; s < kParallelism; ++s) WriteEpoch(*sinks[s], s, e, 3);
    Barrier(sinks, e);
  }
  EXPECT_TRUE(VisibleLines(dir.path()).empty());
  // Checkpoint 1 was aborted (a hint only), 2 completed: 1 and 2 become visible, 3 stays pending.
  for (auto& sink : sinks) ASSERT_TRUE(sink->Commit(2).ok());
  EXPECT_EQ(VisibleLines(dir.path()), Expected(2, 3));
  for (auto& sink : sinks) ASSERT_TRUE(sink->Commit(3).ok());
  EXPECT_EQ(VisibleLines(dir.path()), Expected(3, 3));
}

TEST(ExactlyOnceFileSinkTest, RolledFilesOfAnEpochAreCommittedTogether) {
  TempDir dir;
  auto sinks = StartSinks(dir.path(), 0, /*roll_bytes=*/20);
  for (uint32_t s = 0; s < kParallelism; ++s) WriteEpoch(*sinks[s], s, 1, 12);
  Barrier(sinks, 1);
  EXPECT_TRUE(VisibleLines(dir.path()).empty());
  EXPECT_GT(sinks[0]->pending().at(1).size(), 3u) << "roll_bytes should have split the epoch";
  for (auto& sink : sinks) ASSERT_TRUE(sink->Commit(1).ok());
  EXPECT_EQ(VisibleLines(dir.path()), Expected(1, 12));
}

// Where the simulated crash happens in epoch 3 (checkpoints 1 and 2 completed and committed).
enum class CrashAt {
  kAfterWrite,                // epoch 3 partly written
  kAfterPreCommit,            // barrier 3 passed every sink, checkpoint 3 not complete
  kAfterCheckpointComplete,   // checkpoint 3 durable, no sink committed
  kBetweenSubtaskCommits,     // subtask 0 committed 3, subtask 1 did not
  kAfterCommitBeforeCleanup,  // both committed 3
};

class FileSinkCrashTest : public ::testing::TestWithParam<CrashAt> {};

TEST_P(FileSinkCrashTest, RecoverShowsExactlyTheCommittedEpochsAndContinues) {
  TempDir dir;
  constexpr int kPer = 4;
  int64_t restored = 0;
  {
    auto sinks = StartSinks(dir.path(), 0);
    for (int64_t e = 1; e <= 2; ++e) {
      for (uint32_t s = 0; s < kParallelism; ++s) WriteEpoch(*sinks[s], s, e, kPer);
      Barrier(sinks, e);
      for (auto& sink : sinks) ASSERT_TRUE(sink->Commit(e).ok());
    }
    restored = 2;
    for (uint32_t s = 0; s < kParallelism; ++s) WriteEpoch(*sinks[s], s, 3, kPer);
    if (GetParam() != CrashAt::kAfterWrite) {
      Barrier(sinks, 3);
      // Records of epoch 4 that will never be committed.
      for (uint32_t s = 0; s < kParallelism; ++s) WriteEpoch(*sinks[s], s, 4, kPer);
      if (GetParam() != CrashAt::kAfterPreCommit) restored = 3;
      if (GetParam() == CrashAt::kBetweenSubtaskCommits) {
        ASSERT_TRUE(sinks[0]->Commit(3).ok());
      }
      if (GetParam() == CrashAt::kAfterCommitBeforeCleanup) {
        for (auto& sink : sinks) ASSERT_TRUE(sink->Commit(3).ok());
      }
    }
    // The crash: objects dropped, nothing closed or cleaned up.
  }
  auto sinks = StartSinks(dir.path(), restored);
  EXPECT_EQ(VisibleLines(dir.path()), Expected(restored, kPer));
  EXPECT_TRUE(HiddenFiles(dir.path()).empty())
      << "orphans left: " << HiddenFiles(dir.path()).size();
  // The job replays from the restored checkpoint: the next epochs appear once each.
  for (int64_t e = restored + 1; e <= 4; ++e) {
    for (uint32_t s = 0; s < kParallelism; ++s) WriteEpoch(*sinks[s], s, e, kPer);
    Barrier(sinks, e);
    for (auto& sink : sinks) ASSERT_TRUE(sink->Commit(e).ok());
  }
  EXPECT_EQ(VisibleLines(dir.path()), Expected(4, kPer));
}

INSTANTIATE_TEST_SUITE_P(EveryStep, FileSinkCrashTest,
                         ::testing::Values(CrashAt::kAfterWrite, CrashAt::kAfterPreCommit,
                                           CrashAt::kAfterCheckpointComplete,
                                           CrashAt::kBetweenSubtaskCommits,
                                           CrashAt::kAfterCommitBeforeCleanup));

TEST(ExactlyOnceFileSinkTest, RecoverIsIdempotent) {
  TempDir dir;
  {
    auto sinks = StartSinks(dir.path(), 0);
    for (uint32_t s = 0; s < kParallelism; ++s) WriteEpoch(*sinks[s], s, 1, 3);
    Barrier(sinks, 1);
  }
  { auto sinks = StartSinks(dir.path(), 1); }
  auto sinks = StartSinks(dir.path(), 1);
  EXPECT_EQ(VisibleLines(dir.path()), Expected(1, 3));
}

TEST(ExactlyOnceFileSinkTest, RescaleFromTwoToOneRecoversBothOldSubtasks) {
  TempDir dir;
  {
    auto sinks = StartSinks(dir.path(), 0);
    for (uint32_t s = 0; s < kParallelism; ++s) WriteEpoch(*sinks[s], s, 1, 3);
    Barrier(sinks, 1);
    for (uint32_t s = 0; s < kParallelism; ++s) WriteEpoch(*sinks[s], s, 2, 3);
  }
  ExactlyOnceFileSink sink(Options(dir.path()));
  ASSERT_TRUE(sink.Open(0, 1).ok());
  Status r = sink.Recover(1);
  ASSERT_TRUE(r.ok()) << r.ToString();
  EXPECT_EQ(VisibleLines(dir.path()), Expected(1, 3));
  EXPECT_TRUE(HiddenFiles(dir.path()).empty());
}

TEST(ExactlyOnceFileSinkTest, CallsOutOfOrderAreInternalErrors) {
  TempDir dir;
  ExactlyOnceFileSink sink(Options(dir.path()));
  EXPECT_EQ(sink.Recover(0).code(), StatusCode::kInternal);
  ASSERT_TRUE(sink.Open(0, 1).ok());
  EXPECT_EQ(sink.Write("", "x", kNoTimestamp).code(), StatusCode::kInternal);
  ASSERT_TRUE(sink.Recover(0).ok());
  EXPECT_EQ(sink.PreCommit(1).code(), StatusCode::kInternal);
  ASSERT_TRUE(sink.BeginTransaction().ok());
  ASSERT_TRUE(sink.PreCommit(2).ok());
  ASSERT_TRUE(sink.BeginTransaction().ok());
  EXPECT_EQ(sink.PreCommit(2).code(), StatusCode::kInternal);
}

// ---- Real crashes: a forked child runs three checkpoints with FLOW_FAULT-style faults armed.
// It writes `chk-<N>` (temp file + rename: the metadata) between the pre-commits and the
// commits, like the coordinator does.

void ChildRun(const std::string& dir, const std::string& fault) {
  if (!ConfigureFaults(fault).ok()) ::_exit(2);
  std::string out = dir + "/out";
  auto sinks = StartSinks(out, 0);
  for (int64_t e = 1; e <= 3; ++e) {
    for (uint32_t s = 0; s < kParallelism; ++s) WriteEpoch(*sinks[s], s, e, 4);
    Barrier(sinks, e);
    std::string tmp = dir + "/chk.tmp";
    { std::ofstream f(tmp, std::ios::binary); }
    fs::rename(tmp, dir + "/chk-" + std::to_string(e));
    for (auto& sink : sinks) {
      if (!sink->Commit(e).ok()) ::_exit(3);
    }
  }
  ::_exit(0);
}

int64_t NewestCheckpoint(const std::string& dir) {
  for (int64_t e = 3; e >= 1; --e) {
    if (fs::exists(dir + "/chk-" + std::to_string(e))) return e;
  }
  return 0;
}

struct KillCase {
  const char* fault;
  int64_t expected_restored;
};
std::string KillCaseName(const ::testing::TestParamInfo<KillCase>& info) {
  std::string name = info.param.fault;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

class FileSinkKillTest : public ::testing::TestWithParam<KillCase> {};

TEST_P(FileSinkKillTest, SigkillAtFaultPointThenRecoverGivesCommittedEpochsOnly) {
  TempDir dir;
  fs::create_directories(dir.path() + "/out");
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) ChildRun(dir.path(), GetParam().fault);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
      << "child did not die at " << GetParam().fault << " (status " << status << ")";
  const int64_t restored = NewestCheckpoint(dir.path());
  ASSERT_EQ(restored, GetParam().expected_restored);
  auto sinks = StartSinks(dir.path() + "/out", restored);
  EXPECT_EQ(VisibleLines(dir.path() + "/out"), Expected(restored, 4));
  EXPECT_TRUE(HiddenFiles(dir.path() + "/out").empty());
}

// after-precommit hits twice per epoch (two subtasks); during-commit and
// after-commit-before-cleanup once per subtask commit.
INSTANTIATE_TEST_SUITE_P(FaultPoints, FileSinkKillTest,
                         ::testing::Values(KillCase{"after-precommit:1", 0},
                                           KillCase{"after-precommit:4", 1},
                                           KillCase{"during-commit:1", 1},
                                           KillCase{"during-commit:4", 2},
                                           KillCase{"after-commit-before-cleanup:3", 2},
                                           KillCase{"after-commit-before-cleanup:6", 3}),
                         KillCaseName);

}  // namespace
}  // namespace flow::rt
