// `flowc run FILE [job flags]`: check, build through a cache of binaries, and run the job in one
// command. The job is exec'd, so it is the process: its flags, stdin/stdout, signals (Ctrl-C,
// SIGTERM stop it as they stop a built binary) and exit code are the built binary's own.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "codegen/compile.h"
#include "driver/build_command.h"
#include "driver/commands.h"
#include "plan/passes.h"

namespace flow::driver {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kHelp =
    "Usage: flowc run [options] FILE [job flags...]\n"
    "\n"
    "Checks FILE, builds it (or takes the binary built before from the same script, runtime\n"
    "and compiler) and runs it. Everything after FILE goes to the job unchanged: `--set k=v`,\n"
    "`--parallelism N`, `--checkpoint-dir DIR`, `--help` for the job's own flags, ...\n"
    "\n"
    "Options (before FILE):\n"
    "  --debug         build with -O0 -g instead of -O2\n"
    "  --no-pass NAME  switch off a plan pass; repeatable\n"
    "  --rebuild       build even when a cached binary matches\n"
    "  --verbose       say whether the binary was cached or built, and where it is\n"
    "\n"
    "Binaries are kept under ${XDG_CACHE_HOME:-~/.cache}/flow/run/ (the 16 used last).\n"
    "Exit codes: the job's own (see the job's --help), or 1 when the script has errors or does\n"
    "not build, 2 usage error.\n";

constexpr size_t kKeptBinaries = 16;

bool Is(const std::string& arg, const std::string& name) {
  return arg == name || arg.rfind(name + "=", 0) == 0;
}

// Removes all but the `keep` entries used last (a run touches its entry).
void Prune(const fs::path& root, size_t keep) {
  std::error_code ec;
  std::vector<std::pair<fs::file_time_type, fs::path>> entries;
  for (auto it = fs::directory_iterator(root, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    if (it->is_directory(ec) && it->path().filename().string().find(".tmp") == std::string::npos)
      entries.emplace_back(fs::last_write_time(it->path(), ec), it->path());
  }
  if (entries.size() <= keep) return;
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t i = keep; i < entries.size(); ++i) fs::remove_all(entries[i].second, ec);
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

int Run(const std::vector<std::string>& args) {
  bool debug = false, rebuild = false, verbose = false;
  std::set<std::string> disabled;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--debug") {
      debug = true;
    } else if (a == "--rebuild") {
      rebuild = true;
    } else if (a == "--verbose") {
      verbose = true;
    } else if (Is(a, "--no-pass")) {
      std::string name = a.size() > 9 ? a.substr(10) : (i + 1 < args.size() ? args[++i] : "");
      bool known = false;
      for (const plan::PassInfo& p : plan::AllPasses()) known = known || name == p.name;
      if (!known) return UsageError("unknown pass `" + name + "` for `--no-pass`", "run");
      disabled.insert(name);
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

  std::string name = fs::path(file).stem().string();
  if (name.empty() ||
      name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
          std::string::npos)
    name = "job";
  GeneratedJob job = GenerateJob(file, disabled, name + ".cpp");
  if (job.exit_code != 0) return job.exit_code;

  const std::string cache = codegen::DefaultCacheDir();
  if (cache.empty()) {
    std::fprintf(stderr,
                 "flowc: error: `run` keeps its binaries under $XDG_CACHE_HOME or $HOME, and "
                 "neither is set\n");
    return 1;
  }
  const fs::path root = fs::path(cache) / "run";
  const fs::path entry = root / (codegen::BinaryKey(job.cpp, debug) + (debug ? "-debug" : ""));
  const fs::path binary = entry / name;
  std::error_code ec;
  fs::create_directories(root, ec);
  const bool cached = !rebuild && ::access(binary.c_str(), X_OK) == 0;
  if (!cached) {
    if (rebuild) fs::remove_all(entry, ec);
    if (int rc = Build(file, job, debug, entry, name); rc != 0) return rc;
  }
  fs::last_write_time(entry, fs::file_time_type::clock::now(), ec);  // used last: kept longest
  Prune(root, kKeptBinaries);
  if (verbose)
    std::fprintf(stderr, "flowc: run: %s %s\n", cached ? "cached" : "built", binary.c_str());

  std::vector<char*> argv;
  argv.push_back(name.data());
  for (const std::string& a : job_args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::fflush(nullptr);
  ::execv(binary.c_str(), argv.data());
  std::fprintf(stderr, "flowc: error: cannot start `%s`: %s\n", binary.c_str(),
               std::strerror(errno));
  return 1;
}

}  // namespace

const Command kRunCommand = {"run", "check, build (cached) and run a script", kHelp, &Run};

}  // namespace flow::driver
