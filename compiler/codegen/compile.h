#pragma once
// Compiling a generated job into a binary with the system C++ compiler, against the runtime of this
// build (toolchain.h).
//
// Build cache: the runtime headers every job includes (flow/runtime/exec/exec.h) are precompiled
// once per (compiler, compiler version, flags, flow version, header set and mtimes) into
// `${XDG_CACHE_HOME:-~/.cache}/flow/pch-<key>/`. An entry is used only when its checksum file
// matches the precompiled header's bytes; anything else (missing, truncated, corrupt) is rebuilt,
// under a lock file so concurrent builds do not race. If the cache directory cannot be written,
// the job compiles without a precompiled header (slower, same result).
//
// Parts: when the generated file has parts (codegen.h) and more than one job is allowed, the
// parts are packed into at most `jobs` translation units of about equal weight, compiled in
// parallel (each with -DFLOW_SPLIT and its FLOW_PART_* macros, all with the same precompiled
// header) and linked; otherwise the file is compiled and linked by one compiler call.
// The link uses gold when CMake found it working (toolchain.h), else the compiler's default.
//
// Errors: a compiler failure returns the first error line, mapped to the .flow file when the
// #line directives put it there, and keeps the full compiler output in a log file.
// Threading: one call at a time per process is assumed (it spawns the compiler and waits).

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "codegen/codegen.h"

namespace flow::codegen {

struct CompileOptions {
  bool debug = false;     // -O0 -g instead of -O2
  std::string cache_dir;  // default: ${XDG_CACHE_HOME:-$HOME/.cache}/flow; "" + no HOME: no cache
  bool use_cache = true;
  std::vector<CodePart> parts;  // from GenerateResult; empty: one translation unit
  int jobs = 0;  // translation units compiled at once; 0: the CPUs this process may use
};

struct CompileResult {
  bool ok = false;
  std::string first_error;  // "job.flow:12:5: error: ..." (the compiler's first error line)
  std::string log;          // the compiler's complete output
  bool cache_hit = false;   // the precompiled header was reused
  bool cache_rebuilt = false;
  std::string cache_entry;  // the cache directory used ("" when none)
  int units = 1;            // translation units compiled
};

// Packs parts into at most `units` groups of about equal total weight (largest first, each to
// the lightest group); empty groups are dropped. Deterministic.
std::vector<std::vector<std::string>> PackParts(const std::vector<CodePart>& parts, int units);

// The CPUs this process may run on (at least 1).
int AvailableCpus();

// A key for the binary CompileJob makes of `cpp`: the same key means the same binary. It covers
// the C++ text, the extern fn headers it includes (by content), the compiler and its flags, the
// flow version, the runtime's headers and its libraries (path, size, modification time).
std::string BinaryKey(const std::string& cpp, bool debug);

// The flags used for a job (and its precompiled header).
std::vector<std::string> JobCompileFlags(bool debug);

// Compiles `cpp_path` into `binary`.
CompileResult CompileJob(const std::string& cpp_path, const std::string& binary,
                         const CompileOptions& options);

// The default cache directory (${XDG_CACHE_HOME:-$HOME/.cache}/flow), or "" when neither is set.
std::string DefaultCacheDir();

// Entries of a cache directory as (last use, path): the ones beyond the `keep` used last. Both
// caches (precompiled headers, flowc run's binaries) prune with it.
std::vector<std::filesystem::path> EntriesBeyondNewest(
    std::vector<std::pair<std::filesystem::file_time_type, std::filesystem::path>> entries,
    size_t keep);

// Runs argv[0] with arguments, stdout+stderr into *output; returns the exit status (-1 when it
// could not be started or was killed by a signal).
int RunProcess(const std::vector<std::string>& argv, std::string* output);

}  // namespace flow::codegen
