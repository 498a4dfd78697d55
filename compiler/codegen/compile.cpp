#include "codegen/compile.h"

#include <fcntl.h>
#include <sched.h>
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
#include <memory>
#include <sstream>

#include <xxhash.h>

#include "codegen/toolchain.h"

extern char** environ;

namespace flow::codegen {
namespace fs = std::filesystem;
namespace {

constexpr const char* kPchHeader = "flow_pch.h";

// Cache keys and checksums: XXH3's 128-bit hash (Debian's libxxhash), as 32 hex digits.
std::string Hex(XXH128_hash_t h) {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return buf;
}

std::string HashHex(std::string_view data) {
  return Hex(XXH3_128bits(data.data(), data.size()));
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

// The checksum stored next to a precompiled header: its size and a hash of every byte. The file
// is ~200 MB and checked on every build, so it is read in blocks into XXH3's streaming state.
std::string Checksum(const fs::path& gch) {
  std::FILE* f = std::fopen(gch.c_str(), "rb");
  if (f == nullptr) return "";
  std::unique_ptr<XXH3_state_t, XXH_errorcode (*)(XXH3_state_t*)> state(XXH3_createState(),
                                                                        XXH3_freeState);
  if (state == nullptr || XXH3_128bits_reset(state.get()) != XXH_OK) {
    std::fclose(f);
    return "";
  }
  std::vector<char> buf(1 << 20);
  uint64_t size = 0;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) {
    size += n;
    XXH3_128bits_update(state.get(), buf.data(), n);
  }
  bool ok = !std::ferror(f);
  std::fclose(f);
  if (!ok) return "";
  return std::to_string(size) + " v3 " + Hex(XXH3_128bits_digest(state.get())) + "\n";
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
    for (auto it = fs::recursive_directory_iterator(dir, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (!it->is_regular_file(ec)) continue;
      auto mtime = fs::last_write_time(it->path(), ec).time_since_epoch().count();
      entries.push_back(it->path().string() + " " + std::to_string(it->file_size(ec)) + " " +
                        std::to_string(mtime));
    }
    std::sort(entries.begin(), entries.end());
    for (const std::string& e : entries) key += e + "\n";
  }
  return HashHex(key);
}

// Precompiled-header entries kept: the ones used last. Each is ~250 MB, and every runtime,
// compiler or flag change makes a new one.
constexpr size_t kKeptPchEntries = 4;

// Removes the `pch-*` entries of `root` beyond the kKeptPchEntries used last (`in_use` is one of
// those). An entry whose lock another flowc holds (building or compiling with it) is skipped.
void PrunePch(const fs::path& root, const fs::path& in_use) {
  std::error_code ec;
  std::vector<std::pair<fs::file_time_type, fs::path>> entries;
  for (auto it = fs::directory_iterator(root, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    if (!it->is_directory(ec) || it->path().filename().string().rfind("pch-", 0) != 0) continue;
    if (it->path() == in_use) continue;
    entries.emplace_back(fs::last_write_time(it->path(), ec), it->path());
  }
  // `in_use` is one of the kept entries.
  for (const fs::path& dir : EntriesBeyondNewest(std::move(entries), kKeptPchEntries - 1)) {
    int fd = ::open((dir / "lock").c_str(), O_RDWR | O_CLOEXEC);
    if (fd >= 0 && ::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      ::close(fd);
      continue;  // in use
    }
    fs::remove_all(dir, ec);
    if (fd >= 0) ::close(fd);
  }
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
  bool valid =
      ReadFile(sum, &want) && !want.empty() && fs::exists(header, ec) && Checksum(gch) == want;
  if (valid) {
    result->cache_hit = true;
  } else {
    WriteFile(
        header,
        "// Precompiled runtime headers for flow jobs.\n#include \"flow/runtime/exec/exec.h\"\n");
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
  fs::last_write_time(dir, fs::file_time_type::clock::now(), ec);  // used last: kept longest
  PrunePch(root, dir);
  return dir.string();
}

std::string FirstError(const std::string& log) {
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find(": error: ") != std::string::npos ||
        line.find(": fatal error: ") != std::string::npos)
      return line;
  }
  std::istringstream again(log);
  while (std::getline(again, line)) {
    if (!line.empty()) return line;
  }
  return "the C++ compiler failed without output";
}

}  // namespace

std::vector<fs::path> EntriesBeyondNewest(
    std::vector<std::pair<fs::file_time_type, fs::path>> entries, size_t keep) {
  std::vector<fs::path> out;
  if (entries.size() <= keep) return out;
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t i = keep; i < entries.size(); ++i) out.push_back(std::move(entries[i].second));
  return out;
}

std::string DefaultCacheDir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && xdg[0] == '/') return std::string(xdg) + "/flow";
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] != '\0') return std::string(home) + "/.cache/flow";
  return "";
}

std::string BinaryKey(const std::string& cpp, bool debug) {
  const Toolchain& tc = BuiltToolchain();
  std::string key = CacheKey(JobCompileFlags(debug));  // compiler, flags, runtime headers
  for (const std::string& lib : tc.libraries) {
    std::error_code ec;
    auto mtime = fs::last_write_time(lib, ec).time_since_epoch().count();
    key += lib + " " + std::to_string(fs::file_size(lib, ec)) + " " + std::to_string(mtime) + "\n";
  }
  for (const std::string& f : tc.link_flags) key += f + "\n";
  key += cpp;
  // The headers of extern fns, by content: `#include "path"` lines of the generated file.
  constexpr std::string_view kInclude = "#include \"";
  for (size_t at = cpp.find(kInclude); at != std::string::npos; at = cpp.find(kInclude, at + 1)) {
    if (at != 0 && cpp[at - 1] != '\n') continue;
    size_t begin = at + kInclude.size();
    size_t end = cpp.find('"', begin);
    if (end == std::string::npos) break;
    std::string header;
    if (ReadFile(cpp.substr(begin, end - begin), &header)) key += "\n" + header;
  }
  return HashHex(key);
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

namespace {

// A started child process whose stdout+stderr go to an unlinked temporary file.
struct Child {
  pid_t pid = -1;
  int fd = -1;
  std::string start_error;  // set when it could not be started
};

Child StartProcess(const std::vector<std::string>& argv) {
  Child c;
  char tmpl[] = "/tmp/flowc-out-XXXXXX";
  int fd = ::mkstemp(tmpl);
  if (fd < 0) {
    c.start_error = std::string("cannot create a temporary file: ") + std::strerror(errno);
    return c;
  }
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
    c.start_error = "cannot start " + argv[0] + ": " + std::strerror(rc);
    return c;
  }
  c.pid = pid;
  c.fd = fd;
  return c;
}

// Waits for the child; its output into *output. Returns the exit status (-1: not started/killed).
int FinishProcess(Child& c, std::string* output) {
  if (c.pid < 0) {
    if (output) *output = c.start_error;
    return -1;
  }
  int status = 0;
  while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (output) {
    output->clear();
    ::lseek(c.fd, 0, SEEK_SET);
    char buf[65536];
    ssize_t n;
    while ((n = ::read(c.fd, buf, sizeof buf)) > 0) output->append(buf, static_cast<size_t>(n));
  }
  ::close(c.fd);
  c.pid = -1;
  c.fd = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

int RunProcess(const std::vector<std::string>& argv, std::string* output) {
  Child c = StartProcess(argv);
  return FinishProcess(c, output);
}

int AvailableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

std::vector<std::vector<std::string>> PackParts(const std::vector<CodePart>& parts, int units) {
  units = std::max(1, std::min<int>(units, static_cast<int>(parts.size())));
  std::vector<size_t> order(parts.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return parts[a].weight > parts[b].weight; });
  std::vector<std::vector<std::string>> groups(static_cast<size_t>(units));
  std::vector<int> load(static_cast<size_t>(units), 0);
  for (size_t i : order) {
    size_t lightest =
        static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    groups[lightest].push_back(parts[i].macro);
    load[lightest] += std::max(0, parts[i].weight);
  }
  std::vector<std::vector<std::string>> used;
  for (auto& g : groups) {
    if (!g.empty()) used.push_back(std::move(g));
  }
  return used;
}

CompileResult CompileJob(const std::string& cpp_path, const std::string& binary,
                         const CompileOptions& options) {
  CompileResult result;
  const Toolchain& tc = BuiltToolchain();
  std::vector<std::string> flags = JobCompileFlags(options.debug);
  int pch_lock = -1;
  std::string pch = options.use_cache ? EnsurePch(options, flags, &result, &pch_lock) : "";
  std::vector<std::string> compile = {tc.cxx};
  compile.insert(compile.end(), flags.begin(), flags.end());
  if (!pch.empty())
    compile.insert(compile.end(), {"-I" + pch, "-include", kPchHeader, "-Winvalid-pch"});
  std::vector<std::string> link_tail = tc.link_flags;
  link_tail.insert(link_tail.end(), {"-o", binary, "-Wl,--start-group"});
  link_tail.insert(link_tail.end(), tc.libraries.begin(), tc.libraries.end());
  link_tail.push_back("-Wl,--end-group");
  link_tail.insert(link_tail.end(), tc.link_deps.begin(), tc.link_deps.end());

  int jobs = options.jobs > 0 ? options.jobs : AvailableCpus();
  std::vector<std::vector<std::string>> units = PackParts(options.parts, jobs);
  if (units.size() <= 1) {
    // One translation unit: compile and link in one call.
    std::vector<std::string> argv = compile;
    argv.push_back(cpp_path);
    argv.insert(argv.end(), link_tail.begin(), link_tail.end());
    int rc = RunProcess(argv, &result.log);
    if (pch_lock >= 0) ::close(pch_lock);
    result.ok = rc == 0;
    if (!result.ok) result.first_error = FirstError(result.log);
    return result;
  }

  // Several units at once, each its own object next to the generated file; then one link.
  result.units = static_cast<int>(units.size());
  std::vector<std::string> objects;
  std::vector<Child> children;
  for (size_t u = 0; u < units.size(); ++u) {
    objects.push_back(cpp_path + ".part" + std::to_string(u) + ".o");
    std::vector<std::string> argv = compile;
    argv.push_back("-DFLOW_SPLIT");
    for (const std::string& macro : units[u]) argv.push_back("-D" + macro);
    argv.insert(argv.end(), {"-c", cpp_path, "-o", objects.back()});
    children.push_back(StartProcess(argv));
  }
  bool compiled = true;
  for (Child& c : children) {
    std::string out;
    int rc = FinishProcess(c, &out);
    // The first failing unit's output first: it holds the error reported.
    if (rc != 0 && compiled) {
      result.log.insert(0, out);
      compiled = false;
    } else {
      result.log += out;
    }
  }
  if (pch_lock >= 0) ::close(pch_lock);
  if (compiled) {
    std::vector<std::string> argv = {tc.cxx, "-pthread"};
    argv.insert(argv.end(), objects.begin(), objects.end());
    argv.insert(argv.end(), link_tail.begin(), link_tail.end());
    std::string out;
    compiled = RunProcess(argv, &out) == 0;
    result.log += out;
  }
  std::error_code ec;
  for (const std::string& o : objects) fs::remove(o, ec);
  result.ok = compiled;
  if (!result.ok) result.first_error = FirstError(result.log);
  return result;
}

}  // namespace flow::codegen
