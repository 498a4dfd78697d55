// A built job (file source -> select -> stdout) whose stdout is a pipe read very slowly: the
// bounded channels must push back to the source, so the job's memory stays below a bound that
// does not depend on the input size and its reading of the input stalls. Behaviour, not speed:
// the bounds are far from what buffering the input would need (the input is larger than the RSS
// bound, and the source may read only a quarter of it).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "codegen_test_util.h"

namespace flow::codegen_test {
namespace {

constexpr int64_t kRecords = 1500000;       // ~150 MB of JSON lines
constexpr int64_t kRssLimitKb = 96 * 1024;  // far below the input size
constexpr int64_t kRssGrowthKb = 8 * 1024;  // between 5 s and 10 s of slow reading

// A field of /proc/<pid>/<file> ("VmRSS:" in status, "rchar:" in io), in its unit; -1 if absent.
int64_t ProcField(pid_t pid, const std::string& file, const std::string& key) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/" + file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) return std::stoll(line.substr(key.size()));
  }
  return -1;
}

// Reads from `fd` for `seconds`, about 4 KiB every 50 ms (~80 KiB/s); returns the bytes read.
int64_t ReadSlowly(int fd, double seconds) {
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int64_t total = 0;
  char buf[4096];
  while (std::chrono::steady_clock::now() < end) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    total += n;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return total;
}

TEST(SlowSinkMemory, BackpressureBoundsMemoryAndStallsTheSource) {
  std::string dir = ScratchDir("slow_sink");
  WriteText(dir + "/job.flow", R"(param input: string = "none.jsonl"
schema Ev { id: int, user: string, amount: float, note: string }
stream evs = from file(path: input) format json as Ev
evs | select id, upper(user) as user, amount * 2.0 as doubled, note | into stdout format json
)");
  {
    std::ofstream out(dir + "/in.jsonl", std::ios::binary);
    std::string pad(48, 'x');
    for (int64_t i = 0; i < kRecords; ++i) {
      out << "{\"id\":" << i << ",\"user\":\"user" << (i % 977) << "\",\"amount\":" << (i % 1000)
          << ".5,\"note\":\"" << pad << "\"}\n";
    }
  }
  const int64_t input_bytes = static_cast<int64_t>(
      std::ifstream(dir + "/in.jsonl", std::ios::binary | std::ios::ate).tellg());
  ASSERT_GT(input_bytes, kRssLimitKb * 1024);

  Ran built = BuildJob(dir + "/job.flow", dir + "/job");
  ASSERT_EQ(built.exit_code, 0) << built.err;

  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(fds[1], 1);
    int null_fd = open("/dev/null", O_WRONLY);
    dup2(null_fd, 2);
    close(fds[0]);
    close(fds[1]);
    std::string bin = dir + "/job", arg = "input=" + dir + "/in.jsonl";
    execl(bin.c_str(), bin.c_str(), "--parallelism", "2", "--set", arg.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);

  int64_t read_bytes = ReadSlowly(fds[0], 5.0);
  const int64_t rss5 = ProcField(pid, "status", "VmRSS:");
  const int64_t rchar5 = ProcField(pid, "io", "rchar:");
  read_bytes += ReadSlowly(fds[0], 5.0);
  const int64_t rss10 = ProcField(pid, "status", "VmRSS:");
  const int64_t rchar10 = ProcField(pid, "io", "rchar:");
  int status = 0;
  const bool still_running = waitpid(pid, &status, WNOHANG) == 0;
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  close(fds[0]);

  ASSERT_TRUE(still_running) << "the job finished although its output was read slowly";
  ASSERT_GT(rss5, 0);
  ASSERT_GT(rchar5, 0);
  std::printf(
      "input %lld bytes; read from the pipe %lld bytes; RSS %lld kB at 5 s, %lld kB at 10 s; "
      "job read %lld bytes by 5 s, %lld by 10 s\n",
      static_cast<long long>(input_bytes), static_cast<long long>(read_bytes),
      static_cast<long long>(rss5), static_cast<long long>(rss10), static_cast<long long>(rchar5),
      static_cast<long long>(rchar10));
  EXPECT_GT(read_bytes, 0);
  // Memory: bounded, and flat while the reader stays slow.
  EXPECT_LT(rss10, kRssLimitKb);
  EXPECT_LT(rss10 - rss5, kRssGrowthKb);
  // Backpressure: the source has read only a small part of the input, and little more between
  // 5 s and 10 s than the slow reader took out (plus what fills the bounded buffers once).
  EXPECT_LT(rchar10, input_bytes / 4);
  EXPECT_LT(rchar10 - rchar5, input_bytes / 20);
}

}  // namespace
}  // namespace flow::codegen_test
