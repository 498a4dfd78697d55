#pragma once
// Helpers for the end-to-end code generation tests: scratch directories, running flowc and the
// built binaries, and independent reference encoders (JSON strings, RFC 3339 timestamps).

#include <cstdint>
#include <string>
#include <vector>

namespace flow::codegen_test {

struct Ran {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// A fresh directory for one test under FLOW_TEST_DIR.
std::string ScratchDir(const std::string& name);
// ScratchDir(name + "-<pid>"), for what a suite sets up once and its tests share: CTest runs
// every test as its own process, two at a time, so a fixed name would be wiped and rewritten by
// another test's set-up while this one uses it.
std::string ProcessScratchDir(const std::string& name);
void WriteText(const std::string& path, const std::string& text);
std::string ReadText(const std::string& path);
// Runs argv (no shell) with XDG_CACHE_HOME=cache_home when not empty.
Ran RunCmd(const std::vector<std::string>& argv, const std::string& cache_home = "");
// flowc build SCRIPT -o BINARY [extra...] with the shared test cache.
Ran BuildJob(const std::string& script, const std::string& binary,
             const std::vector<std::string>& extra = {});
std::string SharedCache();
std::string Flowc();

std::vector<std::string> Lines(const std::string& text);
std::vector<std::string> Sorted(std::vector<std::string> v);

// JSON string as the runtime's encoder must write it (rt::JsonQuoted: `"` and `\` escaped, \b \f
// \n \r \t by name, other control bytes as \u00XX, valid UTF-8 unchanged).
std::string JsonString(const std::string& bytes);
// RFC 3339 UTC with milliseconds: 2026-03-01T09:00:00.000Z (rt::FormatTimestamp).
std::string Rfc3339(int64_t ms);

}  // namespace flow::codegen_test
