// A job and its state directory: a second instance on the same directory fails fast and harms
// nothing; a directory of another job id is refused, never wiped; a job whose exactly-once file
// output is committed refuses to restore an older checkpoint (its epochs would be written again).

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "../engine/test_util.h"
#include "flow/runtime/engine/job.h"
#include "flow/runtime/engine/txn_sink.h"

namespace flow::rt {
namespace {

namespace fs = std::filesystem;

struct Rec {
  int64_t i = 0;
};

class TxnStateDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("flow-txn-statedir-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Generator 0..n-1 (a pause of `pause_ms` every 100 records) -> exactly-once file sink, at
  // parallelism 2, checkpoints every 20 ms, 3 kept.
  Status RunJob(int64_t n, const std::string& job_id, const std::string& restore = "",
                int pause_ms = 2) {
    JobOptions o;
    o.parallelism = 2;
    o.job_id = job_id;
    o.checkpoint.state_dir = (dir_ / "state").string();
    o.checkpoint.interval_ms = 20;
    o.checkpoint.options.interval_ms = 20;
    o.checkpoint.restore = restore;
    Job job(o);
    auto gen = [n, pause_ms](uint64_t index, Rec* r) {
      if (static_cast<int64_t>(index) >= n) return false;
      if (index % 100 < 2) std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
      r->i = static_cast<int64_t>(index);
      return true;
    };
    auto s = job.Source<Rec>("gen", GeneratorSourceFactory<Rec>(gen),
                             WatermarkSpec{.mode = TimeMode::kNone});
    ExactlyOnceFileSinkOptions fo;
    fo.directory = (dir_ / "out").string();
    ExactlyOnceSink<Rec>(
        s.Rebalance(), job, "files", FileTxnSink(fo),
        [](const Rec& r, std::string*, std::string* payload) { *payload = std::to_string(r.i); });
    return job.Execute();
  }

  // Visible (committed) records and how often each is there.
  std::map<int64_t, int> Visible() const {
    std::map<int64_t, int> lines;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir_ / "out", ec)) {
      if (e.path().filename().string()[0] == '.') continue;
      std::ifstream in(e.path());
      std::string line;
      while (std::getline(in, line)) ++lines[std::stoll(line)];
    }
    return lines;
  }
  static ::testing::AssertionResult ExactlyOnce(const std::map<int64_t, int>& lines, int64_t n) {
    if (static_cast<int64_t>(lines.size()) != n) {
      return ::testing::AssertionFailure()
             << lines.size() << " distinct records visible, expected " << n;
    }
    for (const auto& [i, c] : lines) {
      if (i < 0 || i >= n || c != 1)
        return ::testing::AssertionFailure() << "record " << i << " visible " << c << " times";
    }
    return ::testing::AssertionSuccess();
  }
  std::set<std::string> Checkpoints() const {
    std::set<std::string> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir_ / "state", ec)) {
      std::string name = e.path().filename().string();
      if (ParseCheckpointDir(name) >= 0) out.insert(name);
    }
    return out;
  }

  fs::path dir_;
};

TEST_F(TxnStateDirTest, SecondInstanceOnTheSameStateDirFailsFastAndHarmsNothing) {
  const int64_t n = 40000;  // about 1.6 s with the pauses
  Status first;
  std::atomic<bool> done{false};
  std::thread t([&] {
    first = RunJob(n, "copier", "", 8);
    done = true;
  });
  // Wait until the first instance has completed a checkpoint (it holds the directory then).
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!done && std::chrono::steady_clock::now() < until &&
         testing::NewestCompleteCheckpoint(dir_ / "state") == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_FALSE(done.load()) << "the first instance ended before the second could start";
  const auto start = std::chrono::steady_clock::now();
  Status second = RunJob(n, "copier");
  const auto took = std::chrono::steady_clock::now() - start;
  t.join();
  EXPECT_EQ(second.code(), StatusCode::kFenced) << second.ToString();
  EXPECT_NE(second.message().find("in use by another running instance"), std::string::npos)
      << second.message();
  EXPECT_LT(took, std::chrono::seconds(2));
  ASSERT_TRUE(first.ok()) << first.ToString();
  EXPECT_TRUE(ExactlyOnce(Visible(), n));
}

TEST_F(TxnStateDirTest, StateDirOfAnotherJobIsRefusedAndLeftAsItWas) {
  ASSERT_TRUE(RunJob(3000, "clicks").ok());
  const auto before = Checkpoints();
  ASSERT_FALSE(before.empty());
  Status s = RunJob(3000, "clicks-renamed");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("belongs to job `clicks`"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("--job-id clicks"), std::string::npos) << s.message();
  EXPECT_EQ(Checkpoints(), before);
  EXPECT_TRUE(ExactlyOnce(Visible(), 3000));
  // The same job id goes on: the finished job adds nothing.
  ASSERT_TRUE(RunJob(3000, "clicks").ok());
  EXPECT_TRUE(ExactlyOnce(Visible(), 3000));
}

TEST_F(TxnStateDirTest, FileOnlyJobRefusesToRestoreBeforeWhatItCommitted) {
  const int64_t n = 20000;
  ASSERT_TRUE(RunJob(n, "files").ok());
  ASSERT_TRUE(ExactlyOnce(Visible(), n));
  auto chks = Checkpoints();
  ASSERT_GE(chks.size(), 2u) << "retention keeps 3; the run needs at least 2 checkpoints";
  std::set<int64_t> ids;
  for (const std::string& c : chks) ids.insert(std::stoll(c.substr(4)));
  const int64_t older = *ids.begin();
  const int64_t newest = *ids.rbegin();
  Status s = RunJob(n, "files", (dir_ / "state" / ("chk-" + std::to_string(older))).string());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("already committed"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("chk-" + std::to_string(newest)), std::string::npos) << s.message();
  s = RunJob(n, "files", "none");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_TRUE(ExactlyOnce(Visible(), n)) << "nothing was written again";
  // The committed one itself restores (and adds nothing: every source had finished).
  ASSERT_TRUE(
      RunJob(n, "files", (dir_ / "state" / ("chk-" + std::to_string(newest))).string()).ok());
  EXPECT_TRUE(ExactlyOnce(Visible(), n));
}

}  // namespace
}  // namespace flow::rt
