#include "io_test_util.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <thread>

extern char** environ;

namespace flow::codegen_io_test {
namespace fs = std::filesystem;

Ran RunLimited(const std::vector<std::string>& argv, int seconds) {
  std::vector<std::string> limited = {"/usr/bin/timeout", "-k", "5", std::to_string(seconds)};
  limited.insert(limited.end(), argv.begin(), argv.end());
  return codegen_test::RunCmd(limited);
}

Background::Background(const std::vector<std::string>& argv, const std::string& dir)
    : out_path_(dir + "/bg.out"), err_path_(dir + "/bg.err") {
  int out_fd = ::open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  int err_fd = ::open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
  std::vector<std::string> copy = argv;
  std::vector<char*> args;
  for (std::string& a : copy) args.push_back(a.data());
  args.push_back(nullptr);
  if (posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ) != 0) pid_ = -1;
  posix_spawn_file_actions_destroy(&actions);
  ::close(out_fd);
  ::close(err_fd);
}

Background::~Background() {
  if (pid_ > 0) Stop(10);
}

bool Background::Running() {
  if (pid_ <= 0) return false;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    pid_ = -1;
    return false;
  }
  return true;
}

int Background::Stop(int seconds) {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return -1;
}

void Background::Kill() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
}

std::string Background::Err() const {
  return codegen_test::ReadText(err_path_);
}

std::string Background::WaitForErr(const std::function<bool(const std::string&)>& done,
                                   int seconds) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    std::string err = Err();
    if (done(err) || !Running()) return err;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return Err();
}

std::string Background::ErrOnceContains(const std::string& needle, int seconds) {
  return WaitForErr([&](const std::string& err) { return err.find(needle) != std::string::npos; },
                    seconds);
}

int64_t RecentEventTimeOrigin() {
  static const int64_t origin = [] {
    constexpr int64_t kHourMs = 3600000;
    int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
    return now / kHourMs * kHourMs;
  }();
  return origin;
}

std::vector<std::string> DirLines(const std::string& dir) {
  std::vector<std::string> files;
  if (!fs::is_directory(dir)) return {};
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file()) files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> lines;
  for (const std::string& f : files) {
    for (std::string& l : codegen_test::Lines(codegen_test::ReadText(f)))
      lines.push_back(std::move(l));
  }
  return lines;
}

}  // namespace flow::codegen_io_test
