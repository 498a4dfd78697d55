#include "codegen_test_util.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "flow/runtime/common/json_escape.h"
#include "flow/runtime/common/time.h"

extern char** environ;

namespace flow::codegen_test {
namespace fs = std::filesystem;

std::string Flowc() {
  return FLOWC_PATH;
}
std::string SharedCache() {
  return std::string(FLOW_TEST_DIR) + "/cache";
}

std::string ScratchDir(const std::string& name) {
  fs::path p = fs::path(FLOW_TEST_DIR) / name;
  fs::remove_all(p);
  fs::create_directories(p);
  return p.string();
}

std::string ProcessScratchDir(const std::string& name) {
  return ScratchDir(name + "-" + std::to_string(::getpid()));
}

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Ran RunCmd(const std::vector<std::string>& argv, const std::string& cache_home) {
  Ran ran;
  char out_tmpl[] = "/tmp/flow-cg-out-XXXXXX";
  char err_tmpl[] = "/tmp/flow-cg-err-XXXXXX";
  int out_fd = mkstemp(out_tmpl);
  int err_fd = mkstemp(err_tmpl);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
  std::vector<std::string> env_store;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::string(*e).rfind("XDG_CACHE_HOME=", 0) != 0) env_store.emplace_back(*e);
  }
  if (!cache_home.empty()) env_store.push_back("XDG_CACHE_HOME=" + cache_home);
  std::vector<char*> env;
  for (std::string& s : env_store) env.push_back(s.data());
  env.push_back(nullptr);
  std::vector<char*> args;
  std::vector<std::string> argv_copy = argv;
  for (std::string& a : argv_copy) args.push_back(a.data());
  args.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, args[0], &actions, nullptr, args.data(), env.data()) == 0) {
    int status = 0;
    waitpid(pid, &status, 0);
    ran.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  posix_spawn_file_actions_destroy(&actions);
  close(out_fd);
  close(err_fd);
  ran.out = ReadText(out_tmpl);
  ran.err = ReadText(err_tmpl);
  unlink(out_tmpl);
  unlink(err_tmpl);
  return ran;
}

Ran BuildJob(const std::string& script, const std::string& binary,
             const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {Flowc(), "build", script, "-o", binary};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return RunCmd(argv, SharedCache());
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::string JsonString(const std::string& bytes) {
  return rt::JsonQuoted(bytes);
}

std::string Rfc3339(int64_t ms) {
  return rt::FormatTimestamp(ms);
}

}  // namespace flow::codegen_test
