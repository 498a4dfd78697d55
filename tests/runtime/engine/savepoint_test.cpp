// Savepoints through the job's HTTP endpoint (Job::TakeSavepoint): taken while the job runs,
// self-contained (restorable after being moved), and stop-with-savepoint, after which nothing the
// sources read past the savepoint has reached a sink — so even an at-least-once sink sees every
// record exactly once across the stop and the restore.

#include <gtest/gtest.h>

#include <httplib.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "flow/runtime/engine/job.h"
#include "flow/runtime/engine/sink.h"
#include "flow/runtime/engine/source.h"
#include "flow/runtime/engine/txn_sink.h"
#include "test_util.h"

namespace flow::rt {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kRecords = 40000;

// Values 0..kRecords-1, slowly (a millisecond every 40), so the job is mid-input when asked.
SourceFactory<int64_t> Numbers() {
  return GeneratorSourceFactory<int64_t>([](uint64_t i, int64_t* out) {
    if (static_cast<int64_t>(i) >= kRecords) return false;
    if (i % 40 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    *out = static_cast<int64_t>(i);
    return true;
  });
}

class SavepointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("flow-savepoint-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  JobOptions Options(const std::string& restore = "") const {
    JobOptions o;
    o.parallelism = 2;
    o.metrics_port = 0;
    o.checkpoint.state_dir = (dir_ / "state").string();
    o.checkpoint.interval_ms = 200;
    o.checkpoint.options.interval_ms = 200;
    o.checkpoint.restore = restore;
    return o;
  }

  // Numbers -> at-least-once collecting sink.
  static void Build(Job& job, const std::shared_ptr<Collected<int64_t>>& out) {
    job.Source<int64_t>("numbers", Numbers(), WatermarkSpec{.mode = TimeMode::kNone})
        .Sink("sink", CollectingSinkFactory(out));
  }

  // Waits until the job serves HTTP and the sink holds at least `records`.
  static int WaitRunning(Job& job, const Collected<int64_t>& out, size_t records) {
    for (int i = 0; i < 1000; ++i) {
      if (job.metrics_port() > 0 && out.size() >= records) return job.metrics_port();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return 0;
  }

  static httplib::Result Post(int port, const std::string& path) {
    httplib::Client client("127.0.0.1", port);
    client.set_read_timeout(120, 0);
    return client.Post(path.c_str());
  }

  // The "path" of a savepoint answer.
  static std::string PathIn(const std::string& body) {
    const std::string key = "\"path\":\"";
    size_t at = body.find(key);
    if (at == std::string::npos) return "";
    at += key.size();
    return body.substr(at, body.find('"', at) - at);
  }

  fs::path dir_;
};

TEST_F(SavepointTest, StopWithSavepointThenRestoreSeesEveryRecordOnce) {
  auto first = std::make_shared<Collected<int64_t>>();
  std::string answer;
  int status = 0;
  {
    Job job(Options());
    Build(job, first);
    Status result;
    std::thread run([&] { result = job.Execute(); });
    const int port = WaitRunning(job, *first, 2000);
    ASSERT_GT(port, 0) << "the job did not start serving";
    auto res = Post(port, "/savepoint?stop=true&name=before-upgrade");
    ASSERT_TRUE(res) << "no answer: " << httplib::to_string(res.error());
    status = res->status;
    answer = res->body;
    run.join();
    ASSERT_TRUE(result.ok()) << result.ToString();
  }
  ASSERT_EQ(status, 200) << answer;
  const std::string path = PathIn(answer);
  ASSERT_EQ(fs::path(path).filename(), "sp-before-upgrade") << answer;
  EXPECT_NE(answer.find("\"stopping\":true"), std::string::npos) << answer;
  ASSERT_LT(first->size(), static_cast<size_t>(kRecords)) << "the job ended before the savepoint";

  // Self-contained: moved away from the state dir (which is then deleted), it still restores.
  const fs::path moved = dir_ / "elsewhere" / "sp-before-upgrade";
  fs::create_directories(moved.parent_path());
  fs::rename(path, moved);
  fs::remove_all(dir_ / "state");
  auto second = std::make_shared<Collected<int64_t>>();
  {
    Job job(Options(moved.string()));
    Build(job, second);
    Status s = testing::ExecuteWithWatchdog(job);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  std::map<int64_t, int> seen;
  for (int64_t v : first->Records()) ++seen[v];
  for (int64_t v : second->Records()) ++seen[v];
  ASSERT_EQ(seen.size(), static_cast<size_t>(kRecords));
  int64_t twice = 0;
  for (const auto& [v, n] : seen) twice += n > 1 ? 1 : 0;
  EXPECT_EQ(twice, 0) << "records read after the savepoint reached the sink before the stop";
  EXPECT_EQ(seen.begin()->first, 0);
  EXPECT_EQ(seen.rbegin()->first, kRecords - 1);
}

// With exactly-once sinks a restore must be the checkpoint they committed last: stopping with a
// savepoint pauses the periodic checkpoints, so none completes (and commits) after it, however
// short the interval.
TEST_F(SavepointTest, ExactlyOnceJobRestoresItsStopSavepoint) {
  const std::string out_dir = (dir_ / "out").string();
  auto build = [&](Job& job) {
    auto numbers =
        job.Source<int64_t>("numbers", Numbers(), WatermarkSpec{.mode = TimeMode::kNone});
    ExactlyOnceFileSinkOptions fo;
    fo.directory = out_dir;
    ExactlyOnceSink<int64_t>(
        numbers, job, "files", FileTxnSink(fo),
        [](const int64_t& v, std::string*, std::string* payload) { *payload = std::to_string(v); });
  };
  auto fast = [&](const std::string& restore) {
    JobOptions o = Options(restore);
    // Checkpoints back to back, several at once: without the pause one would complete after the
    // savepoint almost every time.
    o.checkpoint.interval_ms = 5;
    o.checkpoint.options.interval_ms = 5;
    o.checkpoint.options.max_concurrent = 3;
    return o;
  };
  std::string path;
  {
    Job job(fast(""));
    build(job);
    Status result;
    std::thread run([&] { result = job.Execute(); });
    int port = 0;
    for (int i = 0; i < 1000 && (port = job.metrics_port()) == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_GT(port, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // some checkpoints commit first
    auto res = Post(port, "/savepoint?stop=true");
    ASSERT_TRUE(res);
    run.join();
    ASSERT_TRUE(result.ok()) << result.ToString();
    ASSERT_EQ(res->status, 200) << res->body;
    path = PathIn(res->body);
  }
  {
    Job job(fast(path));
    build(job);
    Status s = testing::ExecuteWithWatchdog(job);
    ASSERT_TRUE(s.ok()) << "the stop savepoint was not restorable: " << s.ToString();
  }
  std::map<int64_t, int> seen;
  for (const auto& e : fs::directory_iterator(out_dir)) {
    if (e.path().filename().string()[0] == '.') continue;
    std::ifstream in(e.path());
    for (std::string line; std::getline(in, line);) ++seen[std::stoll(line)];
  }
  ASSERT_EQ(seen.size(), static_cast<size_t>(kRecords));
  for (const auto& [v, n] : seen) ASSERT_EQ(n, 1) << v;
}

TEST_F(SavepointTest, SavepointWhileRunningAndBadRequests) {
  auto out = std::make_shared<Collected<int64_t>>();
  Job job(Options());
  Build(job, out);
  Status result;
  std::thread run([&] { result = job.Execute(); });
  const int port = WaitRunning(job, *out, 1000);
  ASSERT_GT(port, 0);
  auto taken = Post(port, "/savepoint");
  ASSERT_TRUE(taken);
  EXPECT_EQ(taken->status, 200) << taken->body;
  const std::string path = PathIn(taken->body);
  EXPECT_TRUE(fs::exists(fs::path(path) / "_metadata")) << taken->body;
  for (const auto& e : fs::recursive_directory_iterator(path)) {
    EXPECT_FALSE(e.is_symlink()) << e.path() << ": a savepoint holds copies, not links";
  }
  auto again = Post(port, "/savepoint?name=" + fs::path(path).filename().string().substr(3));
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 400) << again->body;
  EXPECT_NE(again->body.find("already exists"), std::string::npos) << again->body;
  auto bad_name = Post(port, "/savepoint?name=..%2Fescape");
  ASSERT_TRUE(bad_name);
  EXPECT_EQ(bad_name->status, 400) << bad_name->body;
  auto bad_stop = Post(port, "/savepoint?stop=maybe");
  ASSERT_TRUE(bad_stop);
  EXPECT_EQ(bad_stop->status, 400) << bad_stop->body;
  httplib::Client client("127.0.0.1", port);
  auto health = client.Get("/healthz");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  job.RequestStop();
  run.join();
  EXPECT_TRUE(result.ok()) << result.ToString();
  EXPECT_EQ(out->size(), out->size());  // the job went on after the savepoint until stopped
}

TEST_F(SavepointTest, WithoutAStateDirTheAnswerSaysWhatIsMissing) {
  auto out = std::make_shared<Collected<int64_t>>();
  JobOptions o;
  o.parallelism = 1;
  o.metrics_port = 0;
  Job job(o);
  Build(job, out);
  Status result;
  std::thread run([&] { result = job.Execute(); });
  const int port = WaitRunning(job, *out, 100);
  ASSERT_GT(port, 0);
  auto res = Post(port, "/savepoint");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_NE(res->body.find("--state-dir"), std::string::npos) << res->body;
  job.RequestStop();
  run.join();
  EXPECT_TRUE(result.ok()) << result.ToString();
}

}  // namespace
}  // namespace flow::rt
