// `flowc run FILE [job flags]`: check, build through a cache of binaries, and run the job in one
// command. The job is exec'd, so it is the process: its flags, stdin/stdout, signals (Ctrl-C,
// SIGTERM stop it as they stop a built binary) and exit code are the built binary's own.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "codegen/compile.h"
#include "driver/build_command.h"
#include "driver/commands.h"
#include "driver/run.h"
#include "plan/passes.h"

namespace flow::driver {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kHelp =
    "Usage: flowc run [options] FILE [job flags...]\n"
    "\n"
    "Checks FILE, builds it (or takes the binary built before from the same script, runtime\n"
    "and compiler) and runs it. Everything after FILE goes to the job unchanged: `--set k=v`,\n"
    "`--parallelism N`, `--state-dir DIR`, `--help` for the job's own flags, ...\n"
    "\n"
    "Options (before FILE):\n"
    "  --debug         build with -O0 -g instead of -O2\n"
    "  --no-pass NAME  switch off a plan pass; repeatable\n"
    "  --rebuild       build even when a cached binary matches\n"
    "  --verbose       say whether the binary was cached or built, and where it is\n"
    "  --watch         run again whenever FILE is saved: check it, show its diagnostics, and\n"
    "                  restart the job when it is valid (stop with Ctrl-C)\n"
    "  --rows N        with --watch: show the first N output lines of each run (default 100)\n"
    "\n"
    "Binaries are kept under ${XDG_CACHE_HOME:-~/.cache}/flow/run/ (the 16 used last; the\n"
    "directory of a failed build, named in its error, for a day).\n"
    "Exit codes: the job's own (see the job's --help), or 1 when the script has errors or does\n"
    "not build, 2 usage error.\n";

constexpr size_t kKeptBinaries = 16;

bool Is(const std::string& arg, const std::string& name) {
  return arg == name || arg.rfind(name + "=", 0) == 0;
}

// A build's private directory (`<entry>.tmp<pid>`) is left behind when the build failed (its
// error points at the C++ and the compiler's log there) or flowc was killed mid-build; after a
// day it is removed.
constexpr auto kTmpKept = std::chrono::hours(24);

// Removes all but the `keep` entries used last (a run touches its entry), and build directories
// older than kTmpKept.
void Prune(const fs::path& root, size_t keep) {
  std::error_code ec;
  std::vector<std::pair<fs::file_time_type, fs::path>> entries;
  std::vector<fs::path> stale;
  const fs::file_time_type now = fs::file_time_type::clock::now();
  for (auto it = fs::directory_iterator(root, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    if (!it->is_directory(ec)) continue;
    const fs::file_time_type used = fs::last_write_time(it->path(), ec);
    if (it->path().filename().string().find(".tmp") == std::string::npos) {
      entries.emplace_back(used, it->path());
    } else if (!ec && now - used > kTmpKept) {
      stale.push_back(it->path());
    }
  }
  for (const fs::path& p : stale) fs::remove_all(p, ec);
  for (const fs::path& p : codegen::EntriesBeyondNewest(std::move(entries), keep)) {
    fs::remove_all(p, ec);
  }
}

// Builds `job` into `entry`/`name` through a private directory renamed into place, so concurrent
// runs of one script never see a half-written binary. Returns 0 or the exit code.
int Build(const std::string& file, const GeneratedJob& job, bool debug, const fs::path& entry,
          const std::string& name) {
  std::error_code ec;
  const fs::path tmp = entry.string() + ".tmp" + std::to_string(::getpid());
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp, ec);
  if (ec) {
    std::fprintf(stderr, "flowc: error: cannot create `%s`: %s\n", tmp.c_str(),
                 ec.message().c_str());
    return 1;
  }
  const fs::path cpp = tmp / (name + ".cpp");
  std::ofstream(cpp, std::ios::binary) << job.cpp;
  codegen::CompileOptions options;
  options.debug = debug;
  options.parts = job.parts;
  codegen::CompileResult r = codegen::CompileJob(cpp.string(), (tmp / name).string(), options);
  if (!r.ok) return ReportCompileFailure(file, job, r, cpp.string());
  fs::rename(tmp, entry, ec);
  if (ec) fs::remove_all(tmp, ec);  // another run put the same binary in place first
  return 0;
}

}  // namespace

int EnsureBinary(const std::string& file, const RunOptions& options, RunBinary* out) {
  out->name = fs::path(file).stem().string();
  if (out->name.empty() ||
      out->name.find_first_not_of(
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != std::string::npos)
    out->name = "job";
  GeneratedJob job = GenerateJob(file, options.disabled_passes, out->name + ".cpp");
  if (job.exit_code != 0) return job.exit_code;

  const std::string cache = codegen::DefaultCacheDir();
  if (cache.empty()) {
    std::fprintf(stderr,
                 "flowc: error: `run` keeps its binaries under $XDG_CACHE_HOME or $HOME, and "
                 "neither is set\n");
    return 1;
  }
  const fs::path root = fs::path(cache) / "run";
  const fs::path entry =
      root / (codegen::BinaryKey(job.cpp, options.debug) + (options.debug ? "-debug" : ""));
  out->path = (entry / out->name).string();
  std::error_code ec;
  fs::create_directories(root, ec);
  out->cached = !options.rebuild && ::access(out->path.c_str(), X_OK) == 0;
  if (!out->cached) {
    if (options.rebuild) fs::remove_all(entry, ec);
    if (int rc = Build(file, job, options.debug, entry, out->name); rc != 0) return rc;
  }
  fs::last_write_time(entry, fs::file_time_type::clock::now(), ec);  // used last: kept longest
  Prune(root, kKeptBinaries);
  if (options.verbose)
    std::fprintf(stderr, "flowc: run: %s %s\n", out->cached ? "cached" : "built",
                 out->path.c_str());
  return 0;
}

namespace {

int Run(const std::vector<std::string>& args) {
  RunOptions options;
  bool watch = false;
  size_t rows = 100;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--debug") {
      options.debug = true;
    } else if (a == "--rebuild") {
      options.rebuild = true;
    } else if (a == "--verbose") {
      options.verbose = true;
    } else if (a == "--watch") {
      watch = true;
    } else if (Is(a, "--rows")) {
      std::string n = a.size() > 6 ? a.substr(7) : (i + 1 < args.size() ? args[++i] : "");
      if (n.empty() || n.size() > 9 || n.find_first_not_of("0123456789") != std::string::npos)
        return UsageError("`--rows` needs a number", "run");
      rows = std::stoul(n);
    } else if (Is(a, "--no-pass")) {
      std::string name = a.size() > 9 ? a.substr(10) : (i + 1 < args.size() ? args[++i] : "");
      bool known = false;
      for (const plan::PassInfo& p : plan::AllPasses()) known = known || name == p.name;
      if (!known) return UsageError("unknown pass `" + name + "` for `--no-pass`", "run");
      options.disabled_passes.insert(name);
    } else if (a == "--") {
      ++i;
      break;
    } else if (!a.empty() && a[0] == '-') {
      return UsageError("unknown option `" + a + "` for `run` (job flags go after the script)",
                        "run");
    } else {
      break;
    }
  }
  if (i >= args.size()) return UsageError("`run` needs a file", "run");
  const std::string file = args[i];
  const std::vector<std::string> job_args(args.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                                          args.end());
  if (watch) return Watch(file, options, rows, job_args);

  RunBinary binary;
  if (int rc = EnsureBinary(file, options, &binary); rc != 0) return rc;
  std::vector<char*> argv;
  argv.push_back(binary.name.data());
  for (const std::string& a : job_args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::fflush(nullptr);
  ::execv(binary.path.c_str(), argv.data());
  std::fprintf(stderr, "flowc: error: cannot start `%s`: %s\n", binary.path.c_str(),
               std::strerror(errno));
  return 1;
}

}  // namespace

const Command kRunCommand = {"run", "check, build (cached) and run a script", kHelp, &Run,
                             /*args_after_file=*/true};

}  // namespace flow::driver
