// A flowc-built job with a processing-time window over stdin: the test writes records into a pipe
// it keeps open and reads the job's stdout while the job runs. Every record must show up in a
// window result before stdin is closed (the window fires on the clock and the stdout sink writes
// out once its input is quiet), counted exactly once per key against a reference computed here.
// The waits are watchdogs (60 s), not timing assertions.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "codegen_test_util.h"

extern char** environ;

namespace flow::codegen_test {
namespace {

using Totals = std::map<std::string, std::pair<int64_t, int64_t>>;  // key -> (count, sum of ids)

// A running job binary with a pipe on stdin and one on stdout; stderr goes to a file.
class RunningJob {
 public:
  RunningJob(const std::vector<std::string>& argv, const std::string& err_path) {
    int in[2], out[2];
    EXPECT_EQ(pipe(in), 0);
    EXPECT_EQ(pipe(out), 0);
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_adddup2(&actions, err, 2);
    posix_spawn_file_actions_addclose(&actions, in[1]);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    std::vector<std::string> copy = argv;
    std::vector<char*> args;
    for (std::string& a : copy) args.push_back(a.data());
    args.push_back(nullptr);
    spawned_ = posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ) == 0;
    EXPECT_TRUE(spawned_) << "cannot start " << argv[0];
    posix_spawn_file_actions_destroy(&actions);
    close(in[0]);
    close(out[1]);
    close(err);
    stdin_ = in[1];
    stdout_ = out[0];
    signal(SIGPIPE, SIG_IGN);  // a job that died must fail the test, not kill it
  }
  ~RunningJob() {
    CloseStdin();
    if (spawned_ && !waited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (stdout_ >= 0) close(stdout_);
  }

  bool Write(const std::string& text) {
    size_t done = 0;
    while (done < text.size()) {
      ssize_t n = write(stdin_, text.data() + done, text.size() - done);
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  }
  void CloseStdin() {
    if (stdin_ >= 0) close(stdin_);
    stdin_ = -1;
  }
  // Reads stdout until `done(lines so far)` holds, EOF, or the 60 s watchdog; false unless done.
  template <typename Pred>
  bool ReadUntil(Pred done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!done(lines_)) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd p{stdout_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char buf[4096];
      ssize_t n = read(stdout_, buf, sizeof buf);
      if (n <= 0) return done(lines_);  // EOF: the job ended
      partial_.append(buf, static_cast<size_t>(n));
      for (size_t nl; (nl = partial_.find('\n')) != std::string::npos;) {
        lines_.push_back(partial_.substr(0, nl));
        partial_.erase(0, nl + 1);
      }
    }
    return true;
  }
  // The exit code; -1 when killed, also by the 60 s watchdog.
  int Wait() {
    int status = 0;
    for (int i = 0; i < 6000; ++i) {
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        waited_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      usleep(10000);
    }
    ADD_FAILURE() << "the job did not exit within 60 s";
    return -1;  // the destructor kills it
  }
  const std::vector<std::string>& lines() const { return lines_; }

 private:
  pid_t pid_ = 0;
  bool spawned_ = false;
  bool waited_ = false;
  int stdin_ = -1;
  int stdout_ = -1;
  std::string partial_;
  std::vector<std::string> lines_;
};

// {"k":"k3","window_start":"...","window_end":"...","n":12,"ids":345}
Totals Sum(const std::vector<std::string>& lines) {
  Totals got;
  for (const std::string& line : lines) {
    auto field = [&](const std::string& name) {
      size_t at = line.find("\"" + name + "\":");
      EXPECT_NE(at, std::string::npos) << line;
      return at == std::string::npos ? std::string("0") : line.substr(at + name.size() + 3);
    };
    std::string k = field("k");
    k = k.substr(1, k.find('"', 1) - 1);
    got[k].first += std::stoll(field("n"));
    got[k].second += std::stoll(field("ids"));
  }
  return got;
}

int64_t Count(const Totals& t) {
  int64_t n = 0;
  for (const auto& [_, v] : t) n += v.first;
  return n;
}

// `n` records with ids from `first_id`; adds them to `want`.
std::string Records(std::mt19937& rng, int n, int64_t first_id, Totals* want) {
  std::string text;
  for (int i = 0; i < n; ++i) {
    std::string k = "k" + std::to_string(rng() % 9);
    int64_t id = first_id + i;
    text += "{\"k\":\"" + k + "\",\"id\":" + std::to_string(id) + "}\n";
    (*want)[k].first += 1;
    (*want)[k].second += id;
  }
  return text;
}

TEST(CodegenProcessingTime, StdinWindowsEmitWhileTheInputStaysOpen) {
  std::string dir = ScratchDir("proctime_stdin");
  WriteText(dir + "/job.flow", R"(schema Item { k: string, id: int }
from stdin() format json as Item
  | key by k
  | window tumbling 200ms processing time
  | aggregate count() as n, sum(id) as ids
  | into stdout format json
)");
  Ran built = BuildJob(dir + "/job.flow", dir + "/job");
  ASSERT_EQ(built.exit_code, 0) << built.err;
  for (const char* p : {"1", "4"}) {
    SCOPED_TRACE(std::string("parallelism ") + p);
    std::mt19937 rng(static_cast<uint32_t>(std::stoi(p)));
    Totals want;
    RunningJob job({dir + "/job", "--parallelism", p, "--progress-interval", "0"},
                   dir + "/err.txt");
    ASSERT_TRUE(job.Write(Records(rng, 3000, 0, &want)));
    // stdin stays open: the windows must fire on the clock alone.
    ASSERT_TRUE(job.ReadUntil([](const auto& lines) { return Count(Sum(lines)) >= 3000; }))
        << "no complete results while stdin is open; got " << job.lines().size()
        << " lines; stderr:\n"
        << ReadText(dir + "/err.txt");
    EXPECT_EQ(Sum(job.lines()), want);
    // More input later, still without closing stdin.
    ASSERT_TRUE(job.Write(Records(rng, 2000, 100000, &want)));
    ASSERT_TRUE(job.ReadUntil([](const auto& lines) { return Count(Sum(lines)) >= 5000; }))
        << "the second batch of records did not show up; stderr:\n"
        << ReadText(dir + "/err.txt");
    EXPECT_EQ(Sum(job.lines()), want);
    job.CloseStdin();
    job.ReadUntil([](const auto&) { return false; });  // to EOF
    EXPECT_EQ(job.Wait(), 0) << ReadText(dir + "/err.txt");
    EXPECT_EQ(Sum(job.lines()), want) << "every record counted once";
  }
}

}  // namespace
}  // namespace flow::codegen_test
