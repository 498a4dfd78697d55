#pragma once
// Helpers for the io code generation tests: jobs run with a time limit (a hang fails the test
// instead of blocking it), jobs started in the background for unbounded (Kafka) sources, the Java
// client's key partitioner as an independent reference, and a line splitter.

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "codegen/codegen_test_util.h"

namespace flow::codegen_io_test {

using codegen_test::Ran;

// Runs argv with a limit of `seconds`; exit code 124 means it was killed at the limit.
Ran RunLimited(const std::vector<std::string>& argv, int seconds);

// A job binary running in the background with stdout/stderr in files.
class Background {
 public:
  Background(const std::vector<std::string>& argv, const std::string& dir);
  ~Background();  // kills the process if it still runs
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;

  // Sends SIGTERM, waits up to `seconds` (then SIGKILL); returns the exit code (-1 if killed).
  int Stop(int seconds);
  // SIGKILL (no graceful stop, as a crash) and waits for the process.
  void Kill();
  bool Running();
  std::string Err() const;
  // Polls stderr until `done(stderr)` holds, the process ends or `seconds` pass; returns the last
  // stderr read. Log lines trail output: one partition's line may come after another partition's
  // records were consumed.
  std::string WaitForErr(const std::function<bool(const std::string&)>& done, int seconds);
  // WaitForErr until stderr contains `needle`.
  std::string ErrOnceContains(const std::string& needle, int seconds);

 private:
  pid_t pid_ = -1;
  std::string out_path_;
  std::string err_path_;
};

// The start of the current hour (epoch ms), computed once per process: the origin of event time
// in tests whose jobs write to Kafka. Sinks send event time as the record's CreateTime, and a
// broker's time retention (7 days by default) deletes records stamped months ago at its next
// check (every 5 minutes), possibly while the test still reads them.
int64_t RecentEventTimeOrigin();

// Lines of every regular file in `dir` (sorted by file name), without line ends.
std::vector<std::string> DirLines(const std::string& dir);

}  // namespace flow::codegen_io_test
