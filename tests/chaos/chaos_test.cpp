// Chaos test of end-to-end exactly-once (docs/exactly-once.md, "Chaos test"). Against its OWN
// broker (scripts/kafka on FLOW_CHAOS_KAFKA_PORT, default 19392; started if not running, stopped
// at the end if this test started it), never the shared one:
//   1. a 4-partition input topic is filled with FLOW_CHAOS_RECORDS (default 200,000) keyed
//      records "<i>,<event time>", in chunks while the rounds below run;
//   2. chaos_job (tests/chaos/jobs) runs at parallelism 4 and is killed with SIGKILL at
//      FLOW_CHAOS_KILLS (default 20) random moments (start-up and recovery included), and dies at
//      every protocol fault point (FLOW_FAULT: after-precommit, after-metadata, during-commit,
//      after-commit-before-cleanup, during-restore); the broker is hard-killed and restarted twice
//      while the job runs, and the copier also sees FLOW_CHAOS_LONG_OUTAGES (default 2) outages
//      longer than its sink's retry bound (2 s there), so writes and commits fail past it; the
//      job is restarted after each;
//   3. a last clean run until the output is complete; then the read_committed output is checked
//      against a reference computed here from the input: the copier's output must equal the
//      input multiset, and every window result must appear exactly once with the right count
//      and sum.
// The same harness with the at-least-once sink must make the checker report duplicates.

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "chaos_support.h"
#include "flow/runtime/checkpoint/checkpoint_storage.h"
#include "kafka/kafka_test_env.h"

namespace flow::test {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int64_t kKeys = 16;
constexpr int64_t kWindowMs = 5000;
constexpr int kPartitions = 4;

class ChaosTest : public OwnBrokerTest {
 protected:
  void SetUp() override {
    env_ = KafkaTestEnv(fmt::format("127.0.0.1:{}", port_));
    ASSERT_TRUE(env_.CheckReachable().ok());
    records_ = EnvInt("FLOW_CHAOS_RECORDS", 200000);
    kills_ = EnvInt("FLOW_CHAOS_KILLS", 20);
    seed_ = static_cast<uint64_t>(
        EnvInt("FLOW_CHAOS_SEED", static_cast<int64_t>(std::random_device{}())));
    rng_.seed(seed_);
    // Event time starts now: the sinks write it as the Kafka timestamp, and records older than
    // the broker's retention (7 days) would be deleted as soon as their log segment rolls.
    t0_ = std::chrono::duration_cast<std::chrono::milliseconds>(
              std::chrono::system_clock::now().time_since_epoch())
              .count() /
          kWindowMs * kWindowMs;
    work_ = fs::temp_directory_path() / UniqueName("flow-chaos");
    fs::create_directories(work_);
    std::printf("chaos: seed %llu, records %lld, random kills %lld, work dir %s\n",
                static_cast<unsigned long long>(seed_), static_cast<long long>(records_),
                static_cast<long long>(kills_), work_.c_str());
  }

  // The input record i: key, value, and the window it belongs to.
  static std::string Key(int64_t i) { return fmt::format("k{}", i % kKeys); }
  int64_t Ts(int64_t i) const { return t0_ + i; }

  // Produces records [from, to).
  void ProduceRange(const std::string& topic, int64_t from, int64_t to) {
    std::vector<KafkaRecord> batch;
    for (int64_t i = from; i < to; ++i)
      batch.push_back(KafkaRecord{-1, Key(i), fmt::format("{},{}", i, Ts(i))});
    rt::Status s = env_.Produce(topic, batch, Millis(120000));
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  // One record per partition far ahead in event time, so the last windows fire.
  void ProduceFlush(const std::string& topic) {
    std::vector<KafkaRecord> batch;
    for (int p = 0; p < kPartitions; ++p) {
      batch.push_back(KafkaRecord{p, fmt::format("flush{}", p),
                                  fmt::format("-1,{}", Ts(records_) + 10 * kWindowMs)});
    }
    ASSERT_TRUE(env_.Produce(topic, batch).ok());
  }

  pid_t Spawn(const std::vector<std::string>& args, const std::string& fault,
              const std::string& log) {
    return SpawnJob(FLOW_CHAOS_JOB, args, fault, log);
  }
  static int WaitFor(pid_t pid, int64_t timeout_ms) { return WaitForChild(pid, timeout_ms); }
  static void Kill(pid_t pid) { KillChild(pid); }
  int64_t Uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }

  struct Plan {
    std::string job;        // copy | window
    std::string guarantee;  // exactly_once | at_least_once
    int64_t kills = 0;
    std::vector<std::string> faults;
    int broker_restarts = 0;
    std::string files;  // copy: also an exactly-once file sink in this directory ("" = none)
    // Outages longer than the exactly-once sink's retry bound (`retry_timeout_ms`, short here):
    // writes and commits fail past it, the job restarts (in process, or by the next round) and
    // restores Kafka's last committed checkpoint.
    int long_outages = 0;
    int64_t retry_timeout_ms = 0;
    // 'k' rounds kill a run only once it has completed a checkpoint of its own, 100-600 ms into
    // the next interval, so that it has written output its source has not committed (the
    // at-least-once control: on a loaded machine a run can take longer to start than a kill at
    // a random 0.2-3 s allows, and a run killed before it wrote anything duplicates nothing).
    bool kill_after_checkpoint = false;
  };

  // Runs the rounds of `plan` while the input is produced; returns the read_committed output
  // values once `expected_count` of them are there (after a last clean run).
  std::vector<std::string> RunChaos(const Plan& plan, int64_t expected_count,
                                    int64_t* rounds_done) {
    const std::string input = UniqueName("chaos-in");
    const std::string output = UniqueName("chaos-out");
    EXPECT_TRUE(env_.CreateTopic(input, kPartitions).ok());
    EXPECT_TRUE(env_.CreateTopic(output, kPartitions).ok());
    const std::string job_id = UniqueName("chaos-" + plan.job);
    const std::string state = (work_ / (plan.job + "-" + plan.guarantee + "-state")).string();
    const std::string log = (work_ / (plan.job + "-" + plan.guarantee + ".log")).string();
    std::vector<std::string> args = {"--parallelism",
                                     "4",
                                     "--state-dir",
                                     state,
                                     "--job-id",
                                     job_id,
                                     "--checkpoint-interval",
                                     "200ms",
                                     "--progress-interval",
                                     "0",
                                     "--log-level",
                                     "warn",
                                     "--set",
                                     "job=" + plan.job,
                                     "--set",
                                     "brokers=" + env_.brokers(),
                                     "--set",
                                     "input=" + input,
                                     "--set",
                                     "output=" + output,
                                     "--set",
                                     "guarantee=" + plan.guarantee,
                                     "--set",
                                     fmt::format("window_ms={}", kWindowMs)};
    if (!plan.files.empty()) {
      args.push_back("--set");
      args.push_back("files=" + plan.files);
    }
    if (plan.retry_timeout_ms > 0) {
      args.push_back("--set");
      args.push_back(fmt::format("retry_timeout_ms={}", plan.retry_timeout_ms));
    }
    // Round kinds, shuffled: 'k' random kill, 'f' fault point, 'b' broker restart, 'B' an outage
    // past the retry bound.
    std::vector<std::string> rounds;
    for (int64_t i = 0; i < plan.kills; ++i) rounds.push_back("k");
    if (EnvInt("FLOW_CHAOS_FAULTS", 1) != 0) {
      for (const std::string& f : plan.faults) rounds.push_back("f" + f);
    }
    for (int i = 0; i < plan.broker_restarts; ++i) rounds.push_back("b");
    for (int i = 0; i < plan.long_outages; ++i) rounds.push_back("B");
    std::shuffle(rounds.begin(), rounds.end(), rng_);
    const int64_t n_rounds = static_cast<int64_t>(rounds.size());
    // Input arrives steadily over about 3/4 of the rounds (~1.7 s each), so kills land while
    // data flows; the broker rounds hold `broker_mu` so no chunk is produced while it is down
    // (a retried chunk could duplicate input).
    std::mutex broker_mu;
    const int64_t chunk = 2000;
    const int64_t chunks = (records_ + chunk - 1) / chunk;
    const auto period = std::chrono::milliseconds(
        std::max<int64_t>(1, n_rounds * 1700 * 3 / 4 / std::max<int64_t>(1, chunks)));
    std::thread producer([&] {
      auto next = Clock::now();
      for (int64_t c = 0; c < chunks; ++c) {
        std::this_thread::sleep_until(next);
        next += period;
        std::lock_guard<std::mutex> lock(broker_mu);
        ProduceRange(input, c * chunk, std::min(records_, (c + 1) * chunk));
      }
    });
    int64_t faults_hit = 0;
    int64_t gave_up = 0;  // failures past the retry bound the job logged in 'B' rounds
    const auto began = Clock::now();
    for (int64_t r = 0; r < n_rounds; ++r) {
      const std::string& kind = rounds[r];
      // Seconds since the first round: where a long run spends its time.
      std::ofstream(log, std::ios::app)
          << fmt::format("=== round {}: {} at {:.1f} s\n", r, kind,
                         std::chrono::duration<double>(Clock::now() - began).count());
      if (kind == "k") {
        const int64_t before = NewestCheckpoint(state);
        pid_t pid = Spawn(args, "", log);
        int status = -1;
        if (plan.kill_after_checkpoint) {
          status = WaitForOwnCheckpoint(pid, state, before);
          if (status == -1) status = WaitFor(pid, Uniform(100, 600));
        } else {
          status = WaitFor(pid, Uniform(200, 3000));
        }
        if (status == -1) Kill(pid);
      } else if (kind[0] == 'f') {
        pid_t pid = Spawn(args, kind.substr(1), log);
        int status = WaitFor(pid, 20000);
        if (status == -1) {
          // `during-restore` fires only when a checkpoint is restored: the run before may have
          // died before anything committed. That run committed; a second try restores it.
          Kill(pid);
          pid = Spawn(args, kind.substr(1), log);
          status = WaitFor(pid, 40000);
        }
        if (status == -1) {
          Kill(pid);
          ADD_FAILURE() << "fault point " << kind.substr(1) << " was not reached in two runs (see "
                        << log << ")";
        } else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
          ++faults_hit;
        } else {
          ADD_FAILURE() << "with fault " << kind.substr(1) << " the job exited with status "
                        << status << " (see " << log << ")";
        }
      } else if (kind == "B") {
        // The outage must meet a running job, one that completed a checkpoint of its own: a job
        // still restoring fails at its start-up bounds instead (reading the progress topic,
        // reaching the brokers), which the kills and 'b' rounds cover, and no commit is tried.
        const int64_t before = NewestCheckpoint(state);
        pid_t pid = Spawn(args, "", log);
        // Reaped already when it exited: never wait for or signal its pid again.
        const bool exited = WaitForOwnCheckpoint(pid, state, before) != -1;
        std::this_thread::sleep_for(std::chrono::milliseconds(Uniform(0, 500)));
        const auto from = static_cast<std::streamoff>(fs::file_size(log));
        {
          std::lock_guard<std::mutex> lock(broker_mu);
          EXPECT_EQ(std::system(KafkaScript("kill", port_).c_str()), 0);
          std::this_thread::sleep_for(
              std::chrono::milliseconds(plan.retry_timeout_ms + Uniform(2000, 4000)));
          EXPECT_EQ(std::system(KafkaScript("start", port_).c_str()), 0);
        }
        int status = exited ? 0 : WaitFor(pid, 4000);
        if (status == -1) Kill(pid);
        // Counted once the job is gone: a wait that began late in the outage (a loaded machine
        // starts the job slowly) reports reaching its bound only after the broker is back.
        gave_up += CountGaveUp(log, from);
      } else {
        pid_t pid = Spawn(args, "", log);
        std::this_thread::sleep_for(std::chrono::milliseconds(Uniform(500, 2000)));
        {
          std::lock_guard<std::mutex> lock(broker_mu);
          EXPECT_EQ(std::system(KafkaScript("kill", port_).c_str()), 0);
          std::this_thread::sleep_for(std::chrono::milliseconds(Uniform(1000, 4000)));
          EXPECT_EQ(std::system(KafkaScript("start", port_).c_str()), 0);
        }
        // The job either rode out the outage or failed (exit 1) to be restarted; both are fine.
        int status = WaitFor(pid, 4000);
        if (status == -1) Kill(pid);
      }
    }
    producer.join();
    ProduceFlush(input);
    if (EnvInt("FLOW_CHAOS_FAULTS", 1) != 0) {
      EXPECT_EQ(faults_hit, static_cast<int64_t>(plan.faults.size()));
    }
    if (plan.long_outages > 0) {
      EXPECT_GT(gave_up, 0) << "no write or commit failed past the retry bound in "
                            << plan.long_outages << " outages longer than it (see " << log << ")";
    }
    // The input itself must be complete, or a loss below would be the producer's, not the job's.
    auto in = env_.ConsumeToEnd(input, Isolation::kReadUncommitted, Millis(60000));
    EXPECT_TRUE(in.ok() && static_cast<int64_t>(in->size()) == records_ + kPartitions)
        << "input topic holds " << (in.ok() ? static_cast<int64_t>(in->size()) : -1)
        << " records, produced " << records_ + kPartitions;
    *rounds_done = n_rounds;
    std::ofstream(log, std::ios::app) << fmt::format(
        "=== last run at {:.1f} s\n", std::chrono::duration<double>(Clock::now() - began).count());
    // The last run: until the whole output is committed (restarted if it fails).
    std::vector<std::string> values;
    auto deadline = Clock::now() + std::chrono::minutes(3);
    pid_t pid = Spawn(args, "", log);
    while (Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1000));
      if (WaitFor(pid, 0) != -1) pid = Spawn(args, "", log);
      auto got = env_.ConsumeToEnd(output, Isolation::kReadCommitted, Millis(20000));
      if (!got.ok()) continue;
      if (static_cast<int64_t>(got->size()) < expected_count) continue;
      break;
    }
    // A bit longer, so duplicates a broken protocol would still add have time to show.
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    ::kill(pid, SIGTERM);
    if (WaitFor(pid, 30000) == -1) Kill(pid);
    // One more start. A stop does not commit: when it lands after a checkpoint's Kafka commit and
    // before its files are renamed, they stay pending until the next start commits them
    // (ExactlyOnceFileSink::Recover), as after any restart. It is also one more chance for a
    // broken protocol to write a record twice.
    pid = Spawn(args, "", log);
    const auto settle = Clock::now() + std::chrono::seconds(30);
    std::this_thread::sleep_for(std::chrono::milliseconds(2000));
    while (!plan.files.empty() && Clock::now() < settle &&
           static_cast<int64_t>(FileOutput(plan.files).size()) < expected_count) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    ::kill(pid, SIGTERM);
    if (WaitFor(pid, 30000) == -1) Kill(pid);
    auto got = env_.ConsumeToEnd(output, Isolation::kReadCommitted, Millis(60000));
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    if (got.ok()) {
      for (const KafkaRecord& rec : *got) values.push_back(rec.key + "=" + rec.value);
    }
    output_ = output;
    log_ = log;
    return values;
  }

  // Waits (at most 30 s) until run `pid` has completed a checkpoint newer than `before` in state
  // dir `state`, or has exited: its exit status then (it is reaped), -1 while it runs.
  static int WaitForOwnCheckpoint(pid_t pid, const std::string& state, int64_t before) {
    const auto by = Clock::now() + std::chrono::seconds(30);
    int status = -1;
    while (NewestCheckpoint(state) <= before && Clock::now() < by &&
           (status = WaitFor(pid, 0)) == -1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return status;
  }

  // The id of the newest complete checkpoint in state dir `dir` (chk-N with its _metadata), or 0.
  static int64_t NewestCheckpoint(const std::string& dir) {
    int64_t newest = 0;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const int64_t id = rt::ParseCheckpointDir(e.path().filename().string());
      if (id < 0 || !fs::exists(e.path() / "_metadata", ec)) continue;
      newest = std::max(newest, id);
    }
    return newest;
  }

  // Lines of `log` from byte `from` on that say an exactly-once wait ended at its bound
  // (kafka_transaction_group.cpp: a commit, a full producer queue, init_transactions).
  static int64_t CountGaveUp(const std::string& log, std::streamoff from) {
    std::ifstream in(log);
    in.seekg(from);
    int64_t n = 0;
    for (std::string line; std::getline(in, line);) {
      if (line.find("gave up after") != std::string::npos ||
          line.find("still full after") != std::string::npos ||
          line.find("init_transactions") != std::string::npos) {
        ++n;
      }
    }
    return n;
  }

  // The end of the last RunChaos's job log on stdout, so a failure on a machine whose work dir is
  // gone afterwards (CI) still shows what the job said.
  void PrintLogTail(size_t lines) const {
    std::ifstream in(log_);
    std::vector<std::string> all;
    for (std::string line; std::getline(in, line);) all.push_back(line);
    size_t from = all.size() > lines ? all.size() - lines : 0;
    std::printf("chaos: last %zu lines of %s:\n", all.size() - from, log_.c_str());
    for (size_t i = from; i < all.size(); ++i) std::printf("  %s\n", all[i].c_str());
  }

  // The committed lines of an exactly-once file sink's directory (hidden files are uncommitted).
  static std::vector<std::string> FileOutput(const std::string& dir) {
    std::vector<std::string> lines;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      if (e.path().filename().string()[0] == '.') continue;
      std::ifstream in(e.path());
      for (std::string line; std::getline(in, line);) lines.push_back(line);
    }
    return lines;
  }

  std::map<std::string, int64_t> CopyReference() const {
    std::map<std::string, int64_t> m;
    for (int64_t i = 0; i < records_; ++i) ++m[Key(i) + "=" + fmt::format("{},{}", i, Ts(i))];
    for (int p = 0; p < kPartitions; ++p)
      ++m[fmt::format("flush{}=-1,{}", p, Ts(records_) + 10 * kWindowMs)];
    return m;
  }
  // Tumbling windows computed directly: per (key, window start) the count and sum of i.
  std::map<std::string, int64_t> WindowReference() const {
    std::map<std::pair<std::string, int64_t>, std::pair<int64_t, int64_t>> w;
    for (int64_t i = 0; i < records_; ++i) {
      int64_t start = Ts(i) / kWindowMs * kWindowMs;
      auto& [c, s] = w[{Key(i), start}];
      ++c;
      s += i;
    }
    std::map<std::string, int64_t> m;
    for (const auto& [k, v] : w) {
      m[fmt::format("{}|{}={},{},{},{}", k.first, k.second, k.first, k.second, v.first, v.second)] =
          1;
    }
    return m;
  }
  void Report(const char* what, const Verdict& v, int64_t rounds, size_t n) {
    std::printf(
        "chaos %s: %lld rounds, %zu output records, missing %lld, duplicates %lld, wrong "
        "%lld%s%s\n",
        what, static_cast<long long>(rounds), n, static_cast<long long>(v.missing),
        static_cast<long long>(v.duplicates), static_cast<long long>(v.wrong),
        v.example.empty() ? "" : "; e.g. ", v.example.c_str());
  }

  KafkaTestEnv env_;
  int64_t records_ = 0;
  int64_t kills_ = 0;
  int64_t t0_ = 0;  // event time of record 0 (ms), a multiple of kWindowMs
  uint64_t seed_ = 0;
  std::mt19937_64 rng_;
  fs::path work_;
  std::string output_;  // the last RunChaos's output topic
  std::string log_;     // and its job log
};

const std::vector<std::string> kAllFaults = {"after-precommit:2", "after-metadata:2",
                                             "during-commit:2", "after-commit-before-cleanup:2",
                                             "during-restore"};

TEST_F(ChaosTest, CopierExactlyOnceUnderKillsAndBrokerRestarts) {
  // The copier has no operator state files, so `during-restore` cannot fire for it.
  // The same job also writes every record to an exactly-once file sink: its Kafka commit goes
  // first, the files' after; both outputs must be exact after every kind of crash.
  Plan plan{"copy",
            "exactly_once",
            kills_,
            {"after-precommit:2", "after-metadata:2", "during-commit:2",
             "after-commit-before-cleanup:2", "after-precommit:5"},
            static_cast<int>(EnvInt("FLOW_CHAOS_BROKER_RESTARTS", 2)),
            (work_ / "copy-files").string(),
            static_cast<int>(EnvInt("FLOW_CHAOS_LONG_OUTAGES", 2)),
            2000};
  auto expected = CopyReference();
  int64_t rounds = 0;
  auto out = RunChaos(plan, records_ + kPartitions, &rounds);
  Verdict v = Compare(expected, out);
  Report("copy exactly_once", v, rounds, out.size());
  if (!v.exact() || HasFailure()) PrintLogTail(80);
  if (v.missing > 0) {
    // Were the missing records written and aborted, or never written at all?
    auto all = env_.ConsumeToEnd(output_, Isolation::kReadUncommitted, Millis(60000));
    std::vector<std::string> raw;
    if (all.ok()) {
      for (const KafkaRecord& rec : *all) raw.push_back(rec.key + "=" + rec.value);
    }
    Verdict u = Compare(expected, raw);
    std::printf("chaos diagnosis: read_uncommitted output misses %lld of the input\n",
                static_cast<long long>(u.missing));
  }
  EXPECT_TRUE(v.exact()) << "missing " << v.missing << ", duplicates " << v.duplicates << ", wrong "
                         << v.wrong << "; " << v.example << " (seed " << seed_ << ")";
  auto files = FileOutput(plan.files);
  Verdict f = Compare(expected, files);
  Report("copy exactly_once, file sink of the same job", f, rounds, files.size());
  EXPECT_TRUE(f.exact()) << "file sink: missing " << f.missing << ", duplicates " << f.duplicates
                         << ", wrong " << f.wrong << "; " << f.example << " (seed " << seed_ << ")";
}

TEST_F(ChaosTest, WindowExactlyOnceUnderKills) {
  Plan plan{"window", "exactly_once", kills_, kAllFaults, 0, ""};
  auto expected = WindowReference();
  int64_t rounds = 0;
  auto out = RunChaos(plan, static_cast<int64_t>(expected.size()), &rounds);
  Verdict v = Compare(expected, out);
  Report("window exactly_once", v, rounds, out.size());
  if (!v.exact() || HasFailure()) PrintLogTail(80);
  EXPECT_TRUE(v.exact()) << "missing " << v.missing << ", duplicates " << v.duplicates << ", wrong "
                         << v.wrong << "; " << v.example << " (seed " << seed_ << ")";
}

// The checker is not blind: the same kills with the at-least-once sink must show duplicates
// (and still nothing missing).
TEST_F(ChaosTest, CheckerDetectsAtLeastOnceDuplicates) {
  Plan plan{"copy", "at_least_once", std::max<int64_t>(8, kills_ / 2), {}, 0, ""};
  plan.kill_after_checkpoint = true;
  auto expected = CopyReference();
  int64_t rounds = 0;
  auto out = RunChaos(plan, records_ + kPartitions, &rounds);
  Verdict v = Compare(expected, out);
  Report("copy at_least_once", v, rounds, out.size());
  EXPECT_GT(v.duplicates, 0) << "the checker found no duplicates in at-least-once output after "
                             << rounds << " kills (seed " << seed_ << ")";
  EXPECT_EQ(v.missing, 0) << v.example;
}

}  // namespace
}  // namespace flow::test
