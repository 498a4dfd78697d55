#pragma once
// `flowc run`'s pieces shared by its one-shot form (run_command.cpp: exec the job) and --watch
// (run_watch.cpp: run the job again whenever the script is saved).

#include <set>
#include <string>
#include <vector>

namespace flow::driver {

struct RunOptions {
  bool debug = false;
  bool rebuild = false;
  bool verbose = false;
  std::set<std::string> disabled_passes;
};

struct RunBinary {
  std::string path;  // the job binary in the cache
  std::string name;  // its name (the script's stem), also the job's argv[0]
  bool cached = false;
};

// Checks `file` (printing its diagnostics) and finds or builds its binary in the cache of
// `flowc run`. Returns 0, or the exit code: 1 (script errors, build failure).
int EnsureBinary(const std::string& file, const RunOptions& options, RunBinary* out);

// The --watch loop: runs until SIGINT or SIGTERM, then stops the job and returns 0.
int Watch(const std::string& file, const RunOptions& options, size_t rows,
          const std::vector<std::string>& job_args);

}  // namespace flow::driver
