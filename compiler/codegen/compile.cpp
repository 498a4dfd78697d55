#include "codegen/compile.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "codegen/toolchain.h"

extern char** environ;

namespace flow::codegen {
namespace fs = std::filesystem;
namespace {

constexpr const char* kPchHeader = "flow_pch.h";

uint64_t Fnv(std::string_view data, uint64_t h = 1469598103934665603ULL) {
  for (unsigned char c : data) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::string Hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

bool ReadFile(const fs::path& p, std::string* out) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return true;
}

bool WriteFile(const fs::path& p, std::string_view data) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  return static_cast<bool>(out);
}

// The checksum stored next to a precompiled header: size and FNV-1a of its bytes.
std::string Checksum(const fs::path& gch) {
  std::string data;
  if (!ReadFile(gch, &data)) return "";
  return std::to_string(data.size()) + " " + Hex(Fnv(data)) + "\n";
}

// What invalidates a precompiled header: compiler and its version, flags, flow version, and every
// runtime header's path, size and modification time.
std::string CacheKey(const std::vector<std::string>& flags) {
  const Toolchain& tc = BuiltToolchain();
  std::string key = tc.cxx + "\n" + tc.version + "\n";
  std::string version;
  RunProcess({tc.cxx, "--version"}, &version);
  key += version;
  for (const std::string& f : flags) key += f + "\n";
  for (const std::string& dir : tc.include_dirs) {
    std::error_code ec;
    std::vector<std::string> entries;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (!it->is_regular_file(ec)) continue;
      auto mtime = fs::last_write_time(it->path(), ec).time_since_epoch().count();
      entries.push_back(it->path().string() + " " + std::to_string(it->file_size(ec)) + " " + std::to_string(mtime));
    }
    std::sort(entries.begin(), entries.end());
    for (const std::string& e : entries) key += e + "\n";
  }
  return Hex(Fnv(key));
}

// Returns the directory holding a valid flow_pch.h(.gch), building it when needed; "" when no
// cache can be used. On success *held_lock is a descriptor holding a shared lock on the entry:
// the caller keeps it until its compile is done, so another flowc cannot rebuild the entry (which
// takes the lock exclusively) while this compile reads it.
std::string EnsurePch(const CompileOptions& options, const std::vector<std::string>& flags,
                      CompileResult* result, int* held_lock) {
  *held_lock = -1;
  std::string root = options.cache_dir.empty() ? DefaultCacheDir() : options.cache_dir;
  if (root.empty()) return "";
  fs::path dir = fs::path(root) / ("pch-" + CacheKey(flags));
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return "";
  int lock = ::open((dir / "lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (lock < 0) return "";
  ::flock(lock, LOCK_EX);
  fs::path header = dir / kPchHeader;
  fs::path gch = dir / (std::string(kPchHeader) + ".gch");
  fs::path sum = dir / "checksum";
  std::string want;
  bool valid = ReadFile(sum, &want) && !want.empty() && fs::exists(header, ec) && Checksum(gch) == want;
  if (valid) {
    result->cache_hit = true;
  } else {
    WriteFile(header, "// Precompiled runtime headers for flow jobs.\n#include \"flow/runtime/exec/exec.h\"\n");
    fs::remove(sum, ec);
    fs::path tmp = dir / "flow_pch.h.gch.tmp";
    std::vector<std::string> argv = {BuiltToolchain().cxx};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.insert(argv.end(), {"-x", "c++-header", header.string(), "-o", tmp.string()});
    std::string out;
    if (RunProcess(argv, &out) != 0) {
      fs::remove(tmp, ec);
      ::close(lock);
      return "";  // compile without it; the job's own compile will show any real problem
    }
    fs::rename(tmp, gch, ec);
    if (ec || !WriteFile(sum, Checksum(gch))) {
      ::close(lock);
      return "";
    }
    result->cache_rebuilt = true;
  }
  ::flock(lock, LOCK_SH);
  *held_lock = lock;
  result->cache_entry = dir.string();
  return dir.string();
}

std::string FirstError(const std::string& log) {
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find(": error: ") != std::string::npos || line.find(": fatal error: ") != std::string::npos) return line;
  }
  std::istringstream again(log);
  while (std::getline(again, line)) {
    if (!line.empty()) return line;
  }
  return "the C++ compiler failed without output";
}

}  // namespace

std::string DefaultCacheDir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/flow";
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] != '\0') return std::string(home) + "/.cache/flow";
  return "";
}

std::vector<std::string> JobCompileFlags(bool debug) {
  // -pthread also defines _REENTRANT; the precompiled header must see the same macros.
  std::vector<std::string> flags = {"-std=c++20", "-pthread"};
  if (debug) {
    flags.insert(flags.end(), {"-O0", "-g"});
  } else {
    flags.insert(flags.end(), {"-O2", "-DNDEBUG"});
  }
  for (const std::string& dir : BuiltToolchain().include_dirs) flags.push_back("-I" + dir);
  return flags;
}

int RunProcess(const std::vector<std::string>& argv, std::string* output) {
  char tmpl[] = "/tmp/flowc-out-XXXXXX";
  int fd = ::mkstemp(tmpl);
  if (fd < 0) return -1;
  ::unlink(tmpl);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fd, 1);
  posix_spawn_file_actions_adddup2(&actions, fd, 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    ::close(fd);
    if (output) *output = "cannot start " + argv[0] + ": " + std::strerror(rc);
    return -1;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (output) {
    output->clear();
    ::lseek(fd, 0, SEEK_SET);
    char buf[65536];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) > 0) output->append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

CompileResult CompileJob(const std::string& cpp_path, const std::string& binary, const CompileOptions& options) {
  CompileResult result;
  const Toolchain& tc = BuiltToolchain();
  std::vector<std::string> flags = JobCompileFlags(options.debug);
  int pch_lock = -1;
  std::string pch = options.use_cache ? EnsurePch(options, flags, &result, &pch_lock) : "";
  std::vector<std::string> argv = {tc.cxx};
  argv.insert(argv.end(), flags.begin(), flags.end());
  if (!pch.empty()) argv.insert(argv.end(), {"-I" + pch, "-include", kPchHeader, "-Winvalid-pch"});
  argv.insert(argv.end(), {cpp_path, "-o", binary, "-Wl,--start-group"});
  argv.insert(argv.end(), tc.libraries.begin(), tc.libraries.end());
  argv.push_back("-Wl,--end-group");
  argv.insert(argv.end(), tc.link_deps.begin(), tc.link_deps.end());
  int rc = RunProcess(argv, &result.log);
  if (pch_lock >= 0) ::close(pch_lock);
  result.ok = rc == 0;
  if (!result.ok) result.first_error = FirstError(result.log);
  return result;
}

}  // namespace flow::codegen
