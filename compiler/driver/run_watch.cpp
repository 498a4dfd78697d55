// `flowc run --watch FILE [job flags]`: the edit loop. Whenever FILE is saved it is checked (its
// diagnostics shown), and when valid the job is built through the cache and run again, its first
// output lines shown; the job still running is stopped first (SIGTERM, as a supervisor would:
// it drains and exits). Ends on SIGINT/SIGTERM, stopping the job.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "driver/run.h"

extern char** environ;

namespace flow::driver {
namespace {

volatile sig_atomic_t g_stop = 0;
void OnSignal(int) {
  g_stop = 1;
}

// The script's identity on disk: a save changes its modification time or size.
std::string Stamp(const std::string& file) {
  struct stat st;
  if (::stat(file.c_str(), &st) != 0) return "";
  return std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + ":" +
         std::to_string(st.st_size);
}

class Job {
 public:
  ~Job() { Stop(); }

  bool Start(const RunBinary& binary, const std::vector<std::string>& args) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return false;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    std::vector<std::string> argv_s = {binary.name};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    int rc = ::posix_spawn(&pid_, binary.path.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    if (rc != 0) {
      ::close(fds[0]);
      pid_ = -1;
      return false;
    }
    out_ = fds[0];
    shown_ = 0;
    partial_.clear();
    return true;
  }

  bool running() const { return pid_ > 0; }

  // Shows up to `rows` lines of output that arrived within `wait_ms`; reports the exit once the
  // job closed its output and ended.
  void Pump(size_t rows, int wait_ms) {
    if (out_ < 0) return;
    pollfd p{out_, POLLIN, 0};
    if (::poll(&p, 1, wait_ms) <= 0) return;
    char buf[65536];
    ssize_t n = ::read(out_, buf, sizeof buf);
    if (n > 0) {
      partial_.append(buf, static_cast<size_t>(n));
      size_t nl;
      while ((nl = partial_.find('\n')) != std::string::npos) {
        if (shown_ < rows) std::fwrite(partial_.data(), 1, nl + 1, stdout);
        if (++shown_ == rows + 1)
          std::fprintf(stderr, "flowc: run --watch: more rows not shown (--rows %zu)\n", rows);
        partial_.erase(0, nl + 1);
      }
      std::fflush(stdout);
      return;
    }
    if (n < 0 && errno == EINTR) return;
    ::close(out_);
    out_ = -1;
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    if (WIFEXITED(status)) {
      std::fprintf(
          stderr,
          "flowc: run --watch: the job exited with %d after %zu rows; waiting for a change\n",
          WEXITSTATUS(status), shown_);
    } else {
      std::fprintf(stderr, "flowc: run --watch: the job ended by signal %d; waiting for a change\n",
                   WTERMSIG(status));
    }
  }

  // SIGTERM (the job drains and exits), SIGKILL after 5 s.
  void Stop() {
    if (out_ >= 0) ::close(out_);
    out_ = -1;
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 500; ++i) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  size_t shown_ = 0;
  std::string partial_;
};

}  // namespace

int Watch(const std::string& file, const RunOptions& options, size_t rows,
          const std::vector<std::string>& job_args) {
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  Job job;
  std::string seen = "none";
  while (!g_stop) {
    const std::string stamp = Stamp(file);
    if (stamp != seen) {
      seen = stamp;
      job.Stop();
      if (stamp.empty()) {
        std::fprintf(stderr, "flowc: run --watch: cannot read `%s`; waiting for it\n",
                     file.c_str());
        continue;
      }
      std::fprintf(stderr, "flowc: run --watch: %s\n", file.c_str());
      RunBinary binary;
      if (EnsureBinary(file, options, &binary) != 0) {
        std::fprintf(stderr, "flowc: run --watch: waiting for a change\n");
      } else if (!job.Start(binary, job_args)) {
        std::fprintf(stderr, "flowc: run --watch: cannot start `%s`: %s\n", binary.path.c_str(),
                     std::strerror(errno));
      }
      continue;
    }
    if (job.running()) {
      job.Pump(rows, 200);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }
  job.Stop();
  return 0;
}

}  // namespace flow::driver
