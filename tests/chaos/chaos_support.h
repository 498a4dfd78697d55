#pragma once
// What the chaos tests share (chaos_test.cpp, tests/scale_out): starting job processes with their
// stderr in a log, waiting for and killing them, and comparing output with a reference.

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

extern char** environ;

namespace flow::test {

inline int64_t EnvInt(const char* name, int64_t def) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atoll(v) : def;
}

// What the checker found in the output compared with the reference.
struct Verdict {
  int64_t missing = 0;     // expected, absent
  int64_t duplicates = 0;  // present more often than expected (extra copies)
  int64_t wrong = 0;       // present, not expected (e.g. a window with a wrong count)
  std::string example;
  bool exact() const { return missing == 0 && duplicates == 0 && wrong == 0; }
};

inline Verdict Compare(const std::map<std::string, int64_t>& expected,
                       const std::vector<std::string>& actual) {
  std::map<std::string, int64_t> seen;
  for (const std::string& a : actual) ++seen[a];
  Verdict v;
  for (const auto& [item, n] : expected) {
    int64_t got = seen.count(item) ? seen[item] : 0;
    if (got < n) {
      v.missing += n - got;
      if (v.example.empty()) v.example = "missing " + item;
    } else if (got > n) {
      v.duplicates += got - n;
      if (v.example.empty()) v.example = fmt::format("{} times {}", got, item);
    }
  }
  for (const auto& [item, n] : seen) {
    if (expected.count(item) == 0) {
      v.wrong += n;
      if (v.example.empty()) v.example = "unexpected " + item;
    }
  }
  return v;
}

// Starts `prog args...` with stdout to /dev/null and stderr appended to `log`; FLOW_FAULT is
// taken out of the environment and set to `fault` when that is not empty.
inline pid_t SpawnJob(const std::string& prog, const std::vector<std::string>& args,
                      const std::string& fault, const std::string& log) {
  std::vector<std::string> envs;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::string_view(*e).starts_with("FLOW_FAULT=")) continue;
    envs.emplace_back(*e);
  }
  if (!fault.empty()) envs.push_back("FLOW_FAULT=" + fault);
  std::vector<char*> argv, envp;
  std::string p = prog;
  argv.push_back(p.data());
  std::vector<std::string> a = args;
  for (std::string& s : a) argv.push_back(s.data());
  argv.push_back(nullptr);
  for (std::string& s : envs) envp.push_back(s.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 2, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, p.c_str(), &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  EXPECT_EQ(rc, 0) << "cannot start " << prog;
  return pid;
}

// Waits up to `timeout_ms` for the child; returns its wait status, or -1 if it still runs.
inline int WaitForChild(pid_t pid, int64_t timeout_ms) {
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    int status = 0;
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    if (std::chrono::steady_clock::now() >= end) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

inline void KillChild(pid_t pid) {
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
}

// A suite on the chaos tests' own broker (scripts/kafka on FLOW_CHAOS_KAFKA_PORT, default 19392),
// never the shared one, since the tests kill it: started if not running, stopped at the end if the
// suite started it. A suite that starts it wipes its data first: after each SIGKILL the broker
// recovers every partition it holds, and the topics of earlier runs made a restart take ~30 s.
// Needs FLOW_SOURCE_DIR.
class OwnBrokerTest : public ::testing::Test {
 protected:
  static std::string KafkaScript(const std::string& cmd, int port) {
    return fmt::format("FLOW_KAFKA_PORT={} {}/scripts/kafka {} >> {}/chaos-kafka.log 2>&1", port,
                       FLOW_SOURCE_DIR, cmd, std::filesystem::temp_directory_path().string());
  }
  static void SetUpTestSuite() {
    port_ = static_cast<int>(EnvInt("FLOW_CHAOS_KAFKA_PORT", 19392));
    started_broker_ = std::system(KafkaScript("status", port_).c_str()) != 0;
    if (started_broker_) {
      ASSERT_EQ(std::system(KafkaScript("wipe", port_).c_str()), 0) << "cannot wipe own broker";
      ASSERT_EQ(std::system(KafkaScript("start", port_).c_str()), 0) << "cannot start own broker";
    }
  }
  static void TearDownTestSuite() {
    if (started_broker_) (void)std::system(KafkaScript("stop", port_).c_str());
  }

  static inline int port_ = 0;
  static inline bool started_broker_ = false;
};

}  // namespace flow::test
