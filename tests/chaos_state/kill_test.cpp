// The kill test (issue #5): a stateful job built with `flowc build` — keyed running counts and a
// keyed tumbling-window aggregate over out-of-order JSON records read from files at parallelism 4,
// written to at-least-once file sinks — is SIGKILLed at random moments and at every checkpoint
// fault point, restarted on the same state dir each time, and finally run to the end. The output
// must match a reference computed here: every window result exact (duplicates allowed, nothing
// missing, nothing extra) and, per key, running counts 1..n all present with the final count and
// sum exact. A mid-run checkpoint is also restored at parallelism 2 and 8 and must give the same.
// An uninterrupted run comes first and must be exact; its length scales the random kill times.
// The fault-point kills and the random kills each run in their own state dirs from the start.
//
// The `exactly_once` variant (heap backend) builds the same script with `exactly_once` file sinks,
// runs with two concurrent checkpoints and checks strictly: every result exactly once, no
// duplicate. Its fault-point kills include the
// two-phase-commit points and hit each point at a random checkpoint (not only the first); one
// more run is killed right after its final checkpoint became durable (bounded sources all
// finished). The at-least-once variants are the control: the same strict check must find
// duplicates there, which shows that it can fail.
//
// Knobs (environment): FLOW_CHAOS_RECORDS (default 600000), FLOW_CHAOS_KILLS (default 20),
// FLOW_CHAOS_SEED (default fixed), FLOW_CHAOS_BACKENDS (comma list, default
// "heap,rocksdb,exactly_once"; other names are passed as --state-backend NAME).

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "codegen_test_util.h"
#include "flow/runtime/checkpoint/fault_injection.h"

extern char** environ;

namespace flow::chaos_test {
namespace {

namespace fs = std::filesystem;
using codegen_test::BuildJob;
using codegen_test::ProcessScratchDir;
using codegen_test::Ran;
using codegen_test::ScratchDir;

// Event times span 100 s; the watermark bound (200 s) is larger, so no record is ever late, also
// when a restore at another parallelism makes one subtask read several files one after another.
constexpr char kScript[] = R"(
param input: string = ""
param counts_out: string = ""
param windows_out: string = ""

schema Ev { k: string, v: int, ts: timestamp }

stream evs = from file(path: input) format json as Ev
  event time ts watermark 200s

stream running = evs
  | key by k
  | aggregate count() as n, sum(v) as total
  | select k, n, total

stream windows = evs
  | key by k
  | window tumbling 10s
  | aggregate count() as c, sum(v) as s
  | select k, window_start, c, s

running | into file(path: counts_out) format csv DELIVERY
windows | into file(path: windows_out) format csv DELIVERY
)";

// The script with `delivery` ("" or " exactly_once") on both sinks.
std::string Script(const std::string& delivery) {
  std::string s = kScript;
  for (size_t at; (at = s.find(" DELIVERY")) != std::string::npos;) s.replace(at, 9, delivery);
  return s;
}

constexpr int64_t kBaseMs = 1767225600000;  // 2026-01-01T00:00:00Z
constexpr int64_t kSpanMs = 100000;
constexpr int64_t kWindowMs = 10000;
constexpr int kKeys = 300;
constexpr int kFiles = 4;

int64_t EnvInt(const char* name, int64_t dflt) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoll(v, nullptr, 10) : dflt;
}

struct Reference {
  std::map<std::string, std::pair<int64_t, int64_t>> per_key;  // count, sum
  std::map<std::pair<std::string, std::string>, std::pair<int64_t, int64_t>>
      windows;  // (k, start) -> count, sum
};

struct Shared {
  std::string dir;
  std::string binary;
  std::string binary_eo;  // the same script with exactly_once sinks
  std::string input;
  Reference ref;
  bool built = false;
  std::string build_log;
};

Shared& Suite() {
  static Shared s;
  return s;
}

std::string KeyName(int k) {
  return "key-" + std::to_string(k) + (k % 7 == 0 ? " \"q\"" : "");
}

// The key as the CSV encoder writes it: quoted when it holds a quote, quotes doubled.
std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

void Generate(Shared* s, int64_t records) {
  fs::create_directories(s->input);
  std::mt19937_64 rng(static_cast<uint64_t>(EnvInt("FLOW_CHAOS_SEED", 20261129)));
  std::vector<std::ofstream> files;
  for (int f = 0; f < kFiles; ++f)
    files.emplace_back(s->input + "/part-" + std::to_string(f) + ".jsonl");
  for (int64_t i = 0; i < records; ++i) {
    int key = static_cast<int>(rng() % kKeys);
    int64_t v = static_cast<int64_t>(rng() % 1000) - 100;
    // Roughly increasing with the record index, up to 5 s out of order.
    int64_t ts = kBaseMs + (i * (kSpanMs - 5000)) / records + static_cast<int64_t>(rng() % 5000);
    std::string k = KeyName(key);
    files[static_cast<size_t>(i % kFiles)] << "{\"k\":" << codegen_test::JsonString(k)
                                           << ",\"v\":" << v << ",\"ts\":" << ts << "}\n";
    auto& pk = s->ref.per_key[CsvField(k)];
    pk.first += 1;
    pk.second += v;
    auto& w = s->ref.windows[{CsvField(k), codegen_test::Rfc3339(ts - ts % kWindowMs)}];
    w.first += 1;
    w.second += v;
  }
}

struct Child {
  bool killed = false;  // died by SIGKILL
  int exit_code = -1;
  std::string log;
};

// Runs the job; kills it `kill_after_ms` after the start (< 0: never) or, with `after_checkpoint`,
// that long after its log first reports a completed checkpoint. `fault`: FLOW_FAULT value.
Child RunJob(const std::vector<std::string>& args, const std::string& fault, int kill_after_ms,
             const std::string& log_path, bool after_checkpoint = false) {
  std::vector<std::string> env_store;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::string(*e).rfind("FLOW_FAULT=", 0) != 0) env_store.emplace_back(*e);
  }
  if (!fault.empty()) env_store.push_back("FLOW_FAULT=" + fault);
  std::vector<char*> env;
  for (std::string& e : env_store) env.push_back(e.data());
  env.push_back(nullptr);
  std::vector<std::string> argv_store = args;
  std::vector<char*> argv;
  for (std::string& a : argv_store) argv.push_back(a.data());
  argv.push_back(nullptr);
  int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, log_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, log_fd, 2);
  pid_t pid = 0;
  Child c;
  int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(log_fd);
  if (rc != 0) {
    c.log = "cannot spawn " + args[0];
    return c;
  }
  int status = 0;
  if (kill_after_ms >= 0) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kill_after_ms);
    bool armed = !after_checkpoint;
    while (true) {
      pid_t r = ::waitpid(pid, &status, WNOHANG);
      if (r == pid) break;
      if (!armed &&
          codegen_test::ReadText(log_path).find("result=completed") != std::string::npos) {
        armed = true;
        deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kill_after_ms);
      }
      if (armed && std::chrono::steady_clock::now() >= deadline) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  } else {
    ::waitpid(pid, &status, 0);
  }
  c.killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  c.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  c.log = codegen_test::ReadText(log_path);
  return c;
}

std::vector<std::string> ReadCsvLines(const std::string& dir) {
  std::vector<std::string> lines;
  if (!fs::exists(dir)) return lines;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    std::string text = codegen_test::ReadText(entry.path().string());
    // A SIGKILL in the middle of a write(2) may leave the last line of a part file cut short;
    // complete lines are what the sink promises.
    if (!text.empty() && text.back() != '\n') text.erase(text.find_last_of('\n') + 1);
    for (std::string& l : codegen_test::Lines(text)) {
      if (!l.empty()) lines.push_back(std::move(l));
    }
  }
  return lines;
}

// Splits "a,b,c" where the first field may be quoted (keys hold quotes); the rest are plain.
std::vector<std::string> SplitCsv(const std::string& line) {
  std::vector<std::string> out;
  size_t i = 0;
  std::string first;
  if (!line.empty() && line[0] == '"') {
    size_t j = 1;
    while (j < line.size()) {
      if (line[j] == '"' && j + 1 < line.size() && line[j + 1] == '"') {
        j += 2;
        continue;
      }
      if (line[j] == '"') break;
      ++j;
    }
    out.push_back(line.substr(0, j + 1));
    i = j + 2;
  } else {
    size_t c = line.find(',');
    out.push_back(line.substr(0, c));
    i = c == std::string::npos ? line.size() : c + 1;
  }
  while (i <= line.size()) {
    size_t c = line.find(',', i);
    if (c == std::string::npos) c = line.size();
    out.push_back(line.substr(i, c - i));
    i = c + 1;
  }
  return out;
}

// Compares the sinks' output with the reference; returns "" when it matches. Duplicates (a window
// result or a running count of a key seen more than once) are allowed here and counted in
// *duplicates; exactly-once output must have none.
std::string CheckOutput(const std::string& out_dir, const Reference& ref,
                        int64_t* duplicates = nullptr) {
  int64_t dupes = 0;
  std::ostringstream err;
  int problems = 0;
  auto fail = [&](const std::string& what) {
    if (++problems <= 10) err << what << "\n";
  };
  // Windows: every result exact, each reference window present, nothing else.
  std::set<std::pair<std::string, std::string>> seen_windows;
  for (const std::string& line : ReadCsvLines(out_dir + "/windows")) {
    auto f = SplitCsv(line);
    if (f.size() != 4) {
      fail("malformed window line: " + line);
      continue;
    }
    auto it = ref.windows.find({f[0], f[1]});
    if (it == ref.windows.end()) {
      fail("window not in the reference: " + line);
      continue;
    }
    std::string want = std::to_string(it->second.first) + "," + std::to_string(it->second.second);
    if (f[2] + "," + f[3] != want)
      fail("wrong window result: " + line + " (expected count,sum " + want + ")");
    if (!seen_windows.insert(it->first).second) ++dupes;
  }
  for (const auto& [w, v] : ref.windows) {
    if (!seen_windows.count(w)) fail("missing window: " + w.first + " " + w.second);
  }
  // Running counts: per key every count 1..n appears, nothing above n, and the final line is exact.
  std::map<std::string, std::set<int64_t>> counts;
  std::map<std::string, std::set<int64_t>> final_sums;
  for (const std::string& line : ReadCsvLines(out_dir + "/counts")) {
    auto f = SplitCsv(line);
    if (f.size() != 3) {
      fail("malformed count line: " + line);
      continue;
    }
    auto it = ref.per_key.find(f[0]);
    if (it == ref.per_key.end()) {
      fail("key not in the reference: " + line);
      continue;
    }
    int64_t n = std::strtoll(f[1].c_str(), nullptr, 10);
    if (n < 1 || n > it->second.first) fail("count out of range: " + line);
    if (!counts[f[0]].insert(n).second) ++dupes;
    if (n == it->second.first) final_sums[f[0]].insert(std::strtoll(f[2].c_str(), nullptr, 10));
  }
  for (const auto& [k, v] : ref.per_key) {
    const auto& got = counts[k];
    if (static_cast<int64_t>(got.size()) != v.first) {
      fail("key " + k + ": " + std::to_string(got.size()) + " distinct counts, expected 1.." +
           std::to_string(v.first));
    }
    if (final_sums[k] != std::set<int64_t>{v.second}) {
      fail("key " + k + ": final sum wrong, expected " + std::to_string(v.second));
    }
  }
  if (problems > 10) err << "... " << problems - 10 << " more\n";
  if (duplicates != nullptr) *duplicates += dupes;
  return err.str();
}

class KillTest : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() {
    Shared& s = Suite();
    if (s.built) return;
    s.dir = ProcessScratchDir("chaos_state");
    s.input = s.dir + "/input";
    Generate(&s, EnvInt("FLOW_CHAOS_RECORDS", 600000));
    codegen_test::WriteText(s.dir + "/job.flow", Script(""));
    s.binary = s.dir + "/job";
    Ran r = BuildJob(s.dir + "/job.flow", s.binary);
    s.build_log = r.err + r.out;
    s.built = r.exit_code == 0;
    if (!s.built) return;
    codegen_test::WriteText(s.dir + "/job_eo.flow", Script(" exactly_once"));
    s.binary_eo = s.dir + "/job_eo";
    r = BuildJob(s.dir + "/job_eo.flow", s.binary_eo);
    s.build_log = r.err + r.out;
    s.built = r.exit_code == 0;
  }

  bool exactly_once() const { return GetParam() == "exactly_once"; }

  std::vector<std::string> Args(const std::string& run_dir, const std::string& parallelism,
                                int interval_ms) {
    std::vector<std::string> a = {exactly_once() ? Suite().binary_eo : Suite().binary,
                                  "--parallelism",
                                  parallelism,
                                  "--state-dir",
                                  run_dir + "/state",
                                  "--checkpoint-interval",
                                  std::to_string(interval_ms) + "ms",
                                  "--progress-interval",
                                  "0",
                                  "--set",
                                  "input=" + Suite().input,
                                  "--set",
                                  "counts_out=" + run_dir + "/out/counts",
                                  "--set",
                                  "windows_out=" + run_dir + "/out/windows"};
    if (GetParam() != "heap" && !exactly_once()) {
      a.push_back("--state-backend");
      a.push_back(GetParam());
    }
    if (exactly_once()) {
      // Two checkpoints in flight at once: several pending epochs per sink subtask.
      a.push_back("--max-concurrent-checkpoints");
      a.push_back("2");
    }
    return a;
  }
};

TEST_P(KillTest, SurvivesKillsAndRescales) {
  Shared& s = Suite();
  ASSERT_TRUE(s.built) << s.build_log;
  const std::string base = ScratchDir("chaos_state_run_" + GetParam());
  std::mt19937 rng(static_cast<uint32_t>(EnvInt("FLOW_CHAOS_SEED", 20261129)));
  const int kills = static_cast<int>(EnvInt("FLOW_CHAOS_KILLS", 20));
  int runs = 0;
  auto log = [&](const std::string& dir) { return dir + "/log-" + std::to_string(runs++); };

  // 0. One uninterrupted run: its output must be exact too, and its length scales the random kill
  // times below, so a faster machine does not finish the job before the first kill.
  const std::string clean = base + "/clean";
  fs::create_directories(clean);
  auto t0 = std::chrono::steady_clock::now();
  Child c0 = RunJob(Args(clean, "4", 150), "", -1, log(clean));
  const int64_t full_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
          .count();
  ASSERT_EQ(c0.exit_code, 0) << c0.log;

  // 1. SIGKILL at each checkpoint fault point (the two-phase-commit ones need an exactly-once
  // sink), each run restoring what the previous ones checkpointed, then run to the end.
  // `after-metadata` comes before `during-restore` in the list, so there is a checkpoint to
  // restore.
  const std::string faults = base + "/faults";
  fs::create_directories(faults);
  int fault_kills = 0;
  std::string hit;  // the fault specs that killed a run
  bool finished = false;
  for (const auto& p : rt::KnownFaultPoints()) {
    std::string name(p.name);
    const bool two_phase = name == "after-precommit" || name == "during-commit" ||
                           name == "after-commit-before-cleanup";
    if (finished || (two_phase && !exactly_once())) continue;
    std::string spec = name;
    for (int a = 0; a < p.args; ++a) spec += ":*";
    // Exactly once: at a random checkpoint (hit), not only the first; checkpoints often enough
    // that a later hit still comes before the job's end.
    if (exactly_once()) spec += ":" + std::to_string(1 + rng() % 3);
    const int every_ms =
        exactly_once() ? static_cast<int>(std::max<int64_t>(10, full_ms / 40)) : 100;
    Child c = RunJob(Args(faults, "4", every_ms), spec, -1, log(faults));
    if (c.killed) {
      ++fault_kills;
      hit += (hit.empty() ? "" : " ") + spec;
      EXPECT_NE(c.log.find("fault injection armed"), std::string::npos) << c.log;
    } else {
      ASSERT_EQ(c.exit_code, 0) << "fault " << spec << ": " << c.log;
      finished = true;
    }
  }
  if (!finished) {
    Child c = RunJob(Args(faults, "4", 150), "", -1, log(faults));
    ASSERT_EQ(c.exit_code, 0) << c.log;
  }

  // 1b. Killed right after the final checkpoint's metadata is durable: an hour between
  // checkpoints makes the final one the first; every source has finished when it is taken, so the
  // rerun replays nothing and only the restore can make the last epoch visible.
  const std::string final_dir = base + "/final";
  if (exactly_once()) {
    fs::create_directories(final_dir);
    Child c = RunJob(Args(final_dir, "4", 3600000), "after-metadata:1", -1, log(final_dir));
    ASSERT_TRUE(c.killed) << "after-metadata:1 was not reached: " << c.log;
    c = RunJob(Args(final_dir, "4", 3600000), "", -1, log(final_dir));
    ASSERT_EQ(c.exit_code, 0) << c.log;
  }

  // 2. SIGKILL at `kills` random moments: each run is killed a random time (up to a twentieth of
  // an uninterrupted run) after its first completed checkpoint, so it always makes progress, and
  // restores what the previous ones checkpointed. Checkpoint intervals are a fortieth to a
  // twentieth of an uninterrupted run (at least 10 ms). When a job finishes before all kills are
  // spent (a fast machine), it is checked and the kills go on in a new round from the start.
  auto interval_ms = [&] {
    int64_t lo = std::max<int64_t>(10, full_ms / 40), hi = std::max<int64_t>(lo, full_ms / 20);
    return static_cast<int>(lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1)));
  };
  int killed = 0, rounds = 0;
  int64_t duplicates = 0;  // over the randomly killed and the rescaled runs
  std::vector<std::string> rescaled;
  while (killed < kills) {
    const std::string run = base + "/random-" + std::to_string(rounds++);
    fs::create_directories(run);
    int killed_this_round = 0;
    finished = false;
    while (killed < kills && !finished) {
      int kill_at = static_cast<int>(rng() % static_cast<uint64_t>(full_ms / 20 + 1));
      Child c =
          RunJob(Args(run, "4", interval_ms()), "", kill_at, log(run), /*after_checkpoint=*/true);
      if (c.killed) {
        ++killed;
        ++killed_this_round;
        if (rescaled.empty()) {
          // 3. The state after the first kill (mid-run, with a checkpoint) goes to copies that are
          // restored at parallelism 2 and 8 below.
          for (const char* p : {"2", "8"}) {
            std::string copy = base + "/rescaled-p" + p;
            fs::create_directories(copy);
            fs::copy(run + "/state", copy + "/state", fs::copy_options::recursive);
            if (fs::exists(run + "/out"))
              fs::copy(run + "/out", copy + "/out", fs::copy_options::recursive);
            rescaled.push_back(copy);
          }
        }
      } else {
        ASSERT_EQ(c.exit_code, 0) << c.log;
        finished = true;
      }
    }
    ASSERT_GE(killed_this_round, 1) << "the job finished before the first kill of round " << rounds;
    // 4. Run this round's job to the end.
    if (!finished) {
      Child c = RunJob(Args(run, "4", 150), "", -1, log(run));
      ASSERT_EQ(c.exit_code, 0) << c.log;
    }
    EXPECT_EQ(CheckOutput(run + "/out", s.ref, &duplicates), "")
        << "parallelism 4, round " << rounds;
  }
  for (size_t i = 0; i < rescaled.size(); ++i) {
    const std::string p = i == 0 ? "2" : "8";
    Child c = RunJob(Args(rescaled[i], p, 150), "", -1, rescaled[i] + "/log");
    ASSERT_EQ(c.exit_code, 0) << "parallelism " << p << ": " << c.log;
    EXPECT_NE(c.log.find("->" + p), std::string::npos) << "not rescaled: " << c.log;
    EXPECT_EQ(CheckOutput(rescaled[i] + "/out", s.ref, &duplicates), "")
        << "restored at parallelism " << p;
  }
  std::cout << "records: " << EnvInt("FLOW_CHAOS_RECORDS", 600000)
            << ", uninterrupted run: " << full_ms << " ms, random kills: " << killed << " in "
            << rounds << " round(s), fault-point kills: " << fault_kills << " (" << hit << ")"
            << ", runs: " << runs << ", duplicates after random kills: " << duplicates << std::endl;
  EXPECT_GE(fault_kills, 1) << "no fault point was hit";
  int64_t clean_dupes = 0, fault_dupes = 0;
  EXPECT_EQ(CheckOutput(clean + "/out", s.ref, &clean_dupes), "") << "uninterrupted";
  EXPECT_EQ(clean_dupes, 0) << "an uninterrupted run writes every result once";
  EXPECT_EQ(CheckOutput(faults + "/out", s.ref, &fault_dupes), "") << "killed at fault points";
  if (exactly_once()) {
    int64_t final_dupes = 0;
    EXPECT_EQ(CheckOutput(final_dir + "/out", s.ref, &final_dupes), "")
        << "killed after the final checkpoint";
    EXPECT_EQ(final_dupes, 0) << "killed after the final checkpoint";
    EXPECT_EQ(fault_dupes, 0) << "killed at fault points";
    EXPECT_EQ(duplicates, 0) << "exactly-once output after random kills and rescaled restores";
  } else {
    // The control: at-least-once output after kills has duplicates, and the check sees them.
    EXPECT_GT(duplicates, 0) << "the strict check found no duplicate in at-least-once output";
  }
}

std::vector<std::string> Backends() {
  std::vector<std::string> out;
  std::string list = std::getenv("FLOW_CHAOS_BACKENDS") ? std::getenv("FLOW_CHAOS_BACKENDS")
                                                        : "heap,rocksdb,exactly_once";
  std::stringstream in(list);
  std::string b;
  while (std::getline(in, b, ',')) {
    if (!b.empty()) out.push_back(b);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Backends, KillTest, ::testing::ValuesIn(Backends()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace flow::chaos_test
