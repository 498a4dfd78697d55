#pragma once
// The fixture of the scale-out tests (scale_out_test.cpp: the copier; scale_out_keyed_test.cpp:
// the keyed window job through a repartition topic): instances of chaos_job as separate processes
// on the chaos tests' own broker, started, killed and restarted by name, and readers of their logs.

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "chaos_support.h"
#include "kafka/kafka_test_env.h"

namespace flow::test {
namespace scale_out {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

inline constexpr int kPartitions =
    12;  // more than the 8 source subtasks of 4 instances: each gets some

class ScaleOutTest : public OwnBrokerTest {
 protected:
  void SetUp() override {
    env_ = KafkaTestEnv(fmt::format("127.0.0.1:{}", port_));
    ASSERT_TRUE(env_.CheckReachable().ok());
    records_ = EnvInt("FLOW_SCALE_RECORDS", 60000);
    kills_ = EnvInt("FLOW_SCALE_KILLS", 8);
    seed_ = static_cast<uint64_t>(
        EnvInt("FLOW_CHAOS_SEED", static_cast<int64_t>(std::random_device{}())));
    rng_.seed(seed_);
    // Near now: records older than the broker's retention would be deleted.
    t0_ = std::chrono::duration_cast<std::chrono::milliseconds>(
              std::chrono::system_clock::now().time_since_epoch())
              .count();
    work_ = fs::temp_directory_path() / UniqueName("flow-scale");
    fs::create_directories(work_);
    std::printf("scale-out: seed %llu, records %lld, kills %lld, work dir %s\n",
                static_cast<unsigned long long>(seed_), static_cast<long long>(records_),
                static_cast<long long>(kills_), work_.c_str());
  }
  // No instance outlives its test, whatever the test stopped itself (one that ends early, or an
  // ASSERT that returns, would leave its instances running against the next tests' broker).
  void TearDown() override { StopAll(); }

  std::string Value(int64_t i) const { return fmt::format("{},{}", i, t0_ + i); }
  static std::string Key(int64_t i) { return fmt::format("k{}", i % 97); }

  std::map<std::string, int64_t> Reference() const {
    std::map<std::string, int64_t> m;
    for (int64_t i = 0; i < records_; ++i) ++m[Key(i) + "=" + Value(i)];
    return m;
  }

  // The instances of one job: started, killed and restarted by name; each has its own state dir
  // and log. Instances that exit on their own are restarted by Supervise (unless retired).
  struct Instance {
    pid_t pid = -1;
    bool retired = false;
    std::string log;
  };

  std::vector<std::string> Args(const std::string& name) const {
    // With a shared root every instance's state dir is <root>/<name>, and state follows partitions.
    const bool shared = shared_state_;
    return {"--parallelism",
            "2",
            shared ? "--state-root" : "--state-dir",
            shared ? (work_ / "states").string() : (work_ / ("state-" + name)).string(),
            "--job-id",
            job_id_,
            "--instance",
            name,
            "--checkpoint-interval",
            "300ms",
            "--progress-interval",
            "0",
            "--log-level",
            "info",
            "--set",
            "job=" + job_kind_,
            "--set",
            "brokers=" + env_.brokers(),
            "--set",
            "input=" + input_,
            "--set",
            "output=" + output_,
            "--set",
            "guarantee=" + guarantee_,
            "--set",
            "retry_timeout_ms=20000",
            "--set",
            fmt::format("transaction_timeout_ms={}", transaction_timeout_ms_)};
  }
  std::vector<std::string> ArgsOf(const std::string& name) const {
    std::vector<std::string> args = Args(name);
    args.insert(args.end(), extra_args_.begin(), extra_args_.end());
    return args;
  }
  void Start(const std::string& name) {
    Instance& in = instances_[name];
    in.log = (work_ / (name + ".log")).string();
    in.pid = SpawnJob(FLOW_CHAOS_JOB, ArgsOf(name), "", in.log);
  }
  // Starts `name` and waits (at most `seconds`) until it has settled with its 2 subtasks and
  // reads partitions of the repartition source `shuffle`.
  void StartAndSettle(const std::string& name, const std::string& shuffle, int seconds) {
    Start(name);
    const auto until = Clock::now() + std::chrono::seconds(seconds);
    while (Clock::now() < until &&
           !(Settled(instances_[name].log, 2) && OwnedPartitions(instances_[name].log, shuffle))) {
      Pass(500);
    }
  }
  void Supervise() {
    for (auto& [name, in] : instances_) {
      if (in.retired || in.pid < 0) continue;
      if (WaitForChild(in.pid, 0) != -1) {
        std::ofstream(in.log, std::ios::app) << "=== exited; restarting\n";
        Start(name);
      }
    }
  }
  std::vector<std::string> Running() const {
    std::vector<std::string> names;
    for (const auto& [name, in] : instances_) {
      if (!in.retired) names.push_back(name);
    }
    return names;
  }
  // Sleeps `ms` while restarting instances that died.
  void Pass(int64_t ms) {
    const auto end = Clock::now() + std::chrono::milliseconds(ms);
    while (Clock::now() < end) {
      Supervise();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  int64_t Uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }

  // Runs the job as instances a, b, c through kills (and, when `membership`, d added, a stopped
  // for good, a broker restart) while the input is produced; returns the committed output.
  std::vector<std::string> Run(const std::string& guarantee, bool membership) {
    guarantee_ = guarantee;
    input_ = UniqueName("scale-in");
    output_ = UniqueName("scale-out");
    job_id_ = UniqueName("scale-" + guarantee);
    EXPECT_TRUE(env_.CreateTopic(input_, kPartitions).ok());
    EXPECT_TRUE(env_.CreateTopic(output_, 3).ok());
    for (const char* name : {"a", "b", "c"}) Start(name);
    std::vector<std::string> rounds;
    for (int64_t i = 0; i < kills_; ++i) rounds.push_back("kill");
    if (membership) {
      rounds.push_back("add");
      rounds.push_back("remove");
      rounds.push_back("broker");
    }
    std::shuffle(rounds.begin(), rounds.end(), rng_);
    // Input over about 3/4 of the rounds, so kills land while records arrive; no chunk is
    // produced while the broker is down (a retried chunk could duplicate input).
    std::mutex broker_mu;
    const int64_t chunk = 1000;
    const int64_t chunks = (records_ + chunk - 1) / chunk;
    const auto period = std::chrono::milliseconds(std::max<int64_t>(
        1, static_cast<int64_t>(rounds.size() + 2) * 1500 * 3 / 4 / std::max<int64_t>(1, chunks)));
    std::thread producer([&] {
      auto next = Clock::now();
      for (int64_t c = 0; c < chunks; ++c) {
        std::this_thread::sleep_until(next);
        next += period;
        std::vector<KafkaRecord> batch;
        for (int64_t i = c * chunk; i < std::min(records_, (c + 1) * chunk); ++i) {
          batch.push_back(KafkaRecord{-1, Key(i), Value(i)});
        }
        std::lock_guard<std::mutex> lock(broker_mu);
        rt::Status s = env_.Produce(input_, batch, Millis(120000));
        EXPECT_TRUE(s.ok()) << s.ToString();
      }
    });
    // The group forms: every first instance has its share before the first round, so a round that
    // stops one for good cannot come before it ever read (bounded: a coordinator still loading
    // after the broker started can hold an instance's first join back for seconds).
    const auto formed_until = Clock::now() + std::chrono::seconds(60);
    while (Clock::now() < formed_until &&
           !(OwnedPartitions(instances_["a"].log) && OwnedPartitions(instances_["b"].log) &&
             OwnedPartitions(instances_["c"].log))) {
      Pass(200);
    }
    for (const std::string& round : rounds) {
      std::vector<std::string> names = Running();
      const std::string& victim =
          names[static_cast<size_t>(Uniform(0, static_cast<int64_t>(names.size()) - 1))];
      if (round == "kill") {
        std::ofstream(instances_[victim].log, std::ios::app) << "=== SIGKILL\n";
        KillChild(instances_[victim].pid);
        Pass(Uniform(0, 1000));
        Start(victim);
      } else if (round == "add") {
        Start("d");
        // Its share arrives with the group's next rebalance: wait for it (bounded), so the check
        // below does not depend on how late in the run the instance came.
        const auto until = Clock::now() + std::chrono::seconds(30);
        while (!OwnedPartitions(instances_["d"].log) && Clock::now() < until) Pass(200);
      } else if (round == "remove") {
        // Stopped for good: SIGTERM, its partitions move to the others.
        Instance& in = instances_[victim];
        in.retired = true;
        ::kill(in.pid, SIGTERM);
        if (WaitForChild(in.pid, 30000) == -1) KillChild(in.pid);
      } else {
        std::lock_guard<std::mutex> lock(broker_mu);
        EXPECT_EQ(std::system(KafkaScript("kill", port_).c_str()), 0);
        std::this_thread::sleep_for(std::chrono::milliseconds(Uniform(1000, 3000)));
        EXPECT_EQ(std::system(KafkaScript("start", port_).c_str()), 0);
      }
      Pass(1500);
    }
    producer.join();
    // The test's own reader may meet the restarted broker still electing leaders: a second try
    // (the check on what the topic holds is as strict).
    auto in = env_.ConsumeToEnd(input_, Isolation::kReadUncommitted, Millis(60000));
    if (!in.ok()) {
      std::printf("scale-out: reading the input again after: %s\n", in.status().ToString().c_str());
      in = env_.ConsumeToEnd(input_, Isolation::kReadUncommitted, Millis(60000));
    }
    EXPECT_TRUE(in.ok()) << "reading the input topic: " << in.status().ToString();
    EXPECT_TRUE(in.ok() && static_cast<int64_t>(in->size()) == records_)
        << "input topic holds " << (in.ok() ? static_cast<int64_t>(in->size()) : -1)
        << " records, produced " << records_;
    // Until the whole output is committed, then a little longer so late duplicates would show.
    const auto deadline = Clock::now() + std::chrono::minutes(3);
    while (Clock::now() < deadline) {
      Pass(1000);
      auto got = env_.ConsumeToEnd(output_, Isolation::kReadCommitted, Millis(20000));
      if (got.ok() && static_cast<int64_t>(got->size()) >= records_) break;
    }
    Pass(1500);
    // Every instance still running gets its share once the group settles (bounded). Under load
    // an instance killed and restarted every round or two can miss every assignment while the
    // rounds last; the check of the test is that the group spreads the work to each instance,
    // not how fast a loaded machine restarts one.
    const auto settled_by = Clock::now() + std::chrono::seconds(60);
    auto all_assigned = [&] {
      for (const auto& [name, inst] : instances_) {
        if (!inst.retired && !OwnedPartitions(inst.log)) return false;
      }
      return true;
    };
    while (!all_assigned() && Clock::now() < settled_by) Pass(500);
    StopAll();
    std::vector<std::string> values;
    auto got = env_.ConsumeToEnd(output_, Isolation::kReadCommitted, Millis(60000));
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    if (got.ok()) {
      for (const KafkaRecord& rec : *got) values.push_back(rec.key + "=" + rec.value);
    }
    return values;
  }

  // The window job, exactly once, with 6 repartition partitions on the test's broker and
  // `args` after them; creates its input (12 partitions) and output topics.
  void PrepareKeyedJob(const std::string& job_prefix, std::vector<std::string> args) {
    guarantee_ = "exactly_once";
    job_kind_ = "window";
    input_ = UniqueName("scale-in");
    output_ = UniqueName("scale-out");
    job_id_ = UniqueName(job_prefix);
    // The input starts after the job: every partition has reported its (empty) end, and one
    // that has never had a record holds event time back no more (docs/runtime.md). A chunk's
    // records reach the partitions over a fetch or two, so without a bound a partition's first
    // records can fall behind another's and be dropped as late. 5 s covers a chunk's spread
    // (3 s of event time) and stays below the flush's lead (10 windows).
    extra_args_ = {"--shuffle-brokers", env_.brokers(), "--shuffle-partitions", "6"};
    extra_args_.insert(extra_args_.end(), {"--set", "out_of_orderness_ms=5000"});
    extra_args_.insert(extra_args_.end(), args.begin(), args.end());
    ASSERT_TRUE(env_.CreateTopic(input_, kPartitions).ok());
    ASSERT_TRUE(env_.CreateTopic(output_, 3).ok());
  }

  // The window job's committed output for records 0..n-1 (record i: key Key(i), value i, event
  // time t0 + 3 i) in tumbling windows of `window_ms`: "key|start=key,start,count,sum" once per
  // (key, window). Computed here, independently of the job.
  std::map<std::string, int64_t> WindowReference(int64_t n, int64_t window_ms) const {
    std::map<std::pair<std::string, int64_t>, std::pair<int64_t, int64_t>> windows;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t ts = t0_ + 3 * i;
      auto& [count, sum] = windows[{Key(i), ts - ts % window_ms}];
      ++count;
      sum += i;
    }
    std::map<std::string, int64_t> want;
    for (const auto& [k, v] : windows) {
      ++want[fmt::format("{}|{}={},{},{},{}", k.first, k.second, k.first, k.second, v.first,
                         v.second)];
    }
    return want;
  }
  // The join job's committed output for the same records: per (key, window) with even (left) and
  // odd (right) records, "key|start=key,start,left count,left sum,right count,right sum".
  std::map<std::string, int64_t> JoinReference(int64_t n, int64_t window_ms) const {
    struct Sides {
      int64_t count[2] = {0, 0};
      int64_t sum[2] = {0, 0};
    };
    std::map<std::pair<std::string, int64_t>, Sides> windows;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t ts = t0_ + 3 * i;
      Sides& w = windows[{Key(i), ts - ts % window_ms}];
      ++w.count[i % 2];
      w.sum[i % 2] += i;
    }
    std::map<std::string, int64_t> want;
    for (const auto& [k, w] : windows) {
      if (w.count[0] == 0 || w.count[1] == 0) continue;
      ++want[fmt::format("{}|{}={},{},{},{},{},{}", k.first, k.second, k.first, k.second,
                         w.count[0], w.sum[0], w.count[1], w.sum[1])];
    }
    return want;
  }
  // With chaos_job's stage2: `first` (WindowReference or JoinReference) and its (key, window) rows
  // summed per bucket ("b" + the key's last character) and window, "b|start=b,start,rows,sum", a
  // row's sum being its sum (a join's: both sides'). Both go to one output topic.
  static std::map<std::string, int64_t> WithSecondStage(std::map<std::string, int64_t> first) {
    std::map<std::pair<std::string, int64_t>, std::pair<int64_t, int64_t>> buckets;
    for (const auto& [row, n] : first) {
      std::vector<std::string> f;  // key, start, count, sum[, right count, right sum]
      std::stringstream value(row.substr(row.find('=') + 1));
      for (std::string field; std::getline(value, field, ',');) f.push_back(field);
      const int64_t sum = std::stoll(f.at(3)) + (f.size() > 5 ? std::stoll(f.at(5)) : 0);
      std::string bucket = "b";
      if (!f.at(0).empty()) bucket.push_back(f.at(0).back());
      auto& [rows, total] = buckets[{bucket, std::stoll(f.at(1))}];
      rows += n;
      total += sum * n;
    }
    for (const auto& [k, v] : buckets) {
      ++first[fmt::format("{}|{}={},{},{},{}", k.first, k.second, k.first, k.second, v.first,
                          v.second)];
    }
    return first;
  }
  // Produces records [from, to) of the window job's input (record i to partition i % 12).
  void ProduceWindowRecords(int64_t from, int64_t to) {
    std::vector<KafkaRecord> batch;
    for (int64_t i = from; i < to; ++i) {
      batch.push_back(KafkaRecord{static_cast<int32_t>(i % kPartitions), Key(i),
                                  fmt::format("{},{}", i, t0_ + 3 * i)});
    }
    ASSERT_TRUE(env_.Produce(input_, batch, Millis(60000)).ok());
  }
  // One late-stamped record per input partition after the n records: every partition's event
  // time passes the last window; the record's own window ("flush") never fires.
  void ProduceWindowFlush(int64_t n, int64_t window_ms) {
    std::vector<KafkaRecord> flush;
    for (int32_t p = 0; p < kPartitions; ++p) {
      flush.push_back(
          KafkaRecord{p, "flush", fmt::format("{},{}", n, t0_ + 3 * n + 10 * window_ms)});
    }
    ASSERT_TRUE(env_.Produce(input_, flush, Millis(60000)).ok());
  }
  // Waits (restarting instances that die) until the committed output has `expected` records or
  // two minutes passed, then a little longer, so that late duplicates would show.
  void AwaitWindowOutput(size_t expected) {
    const auto deadline = Clock::now() + std::chrono::minutes(2);
    while (Clock::now() < deadline) {
      Pass(1000);
      auto got = env_.ConsumeToEnd(output_, Isolation::kReadCommitted, Millis(20000));
      if (got.ok() && got->size() >= expected) break;
    }
    Pass(1500);
  }
  // Once the input is complete: waits for the window job's output (AwaitWindowOutput), stops
  // every instance and compares the committed output with `want`, printing the verdict as
  // "scale-out <what>: ..." and keeping both outputs in the work dir when they differ.
  Verdict CheckWindowOutput(const std::string& what, const std::map<std::string, int64_t>& want) {
    AwaitWindowOutput(want.size());
    StopAll();
    const std::vector<std::string> values = CommittedOutput();
    Verdict v = Compare(want, values);
    std::printf(
        "scale-out %s: %zu windows expected, %zu output records, missing %lld, duplicates %lld, "
        "wrong %lld%s%s\n",
        what.c_str(), want.size(), values.size(), static_cast<long long>(v.missing),
        static_cast<long long>(v.duplicates), static_cast<long long>(v.wrong),
        v.example.empty() ? "" : "; e.g. ", v.example.c_str());
    if (!v.exact()) KeepOutputs(want, values);
    return v;
  }
  // Stops every instance not retired yet (SIGTERM, then SIGKILL after 30 s). One that is no
  // longer running (exited, or already waited for) is only retired: its pid is not ours to signal.
  void StopAll() {
    std::vector<pid_t> stopping;
    for (auto& [name, in] : instances_) {
      if (in.retired || in.pid < 0) continue;
      in.retired = true;
      int status = 0;
      if (::waitpid(in.pid, &status, WNOHANG) != 0) continue;
      ::kill(in.pid, SIGTERM);
      stopping.push_back(in.pid);
    }
    for (pid_t pid : stopping) {
      if (WaitForChild(pid, 30000) == -1) KillChild(pid);
    }
  }
  // The committed output of the job as "key=value" strings.
  std::vector<std::string> CommittedOutput() {
    auto got = env_.ConsumeToEnd(output_, Isolation::kReadCommitted, Millis(60000));
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    std::vector<std::string> values;
    if (!got.ok()) return values;
    for (const KafkaRecord& rec : *got) values.push_back(rec.key + "=" + rec.value);
    return values;
  }

  // For a failure's analysis: the expected and the committed output, one per line, in the work dir
  // (expected.txt, committed.txt).
  void KeepOutputs(const std::map<std::string, int64_t>& want,
                   const std::vector<std::string>& got) const {
    std::ofstream expected(work_ / "expected.txt");
    for (const auto& [item, n] : want) {
      for (int64_t i = 0; i < n; ++i) expected << item << "\n";
    }
    std::ofstream committed(work_ / "committed.txt");
    for (const std::string& item : got) committed << item << "\n";
    std::printf("scale-out: expected and committed output kept in %s\n", work_.c_str());
  }

  // The instance was assigned at least one partition at some point (not only "partitions=none"),
  // of the source named `source` when one is given.
  static bool OwnedPartitions(const std::string& log, const std::string& source = "") {
    std::ifstream in(log);
    for (std::string line; std::getline(in, line);) {
      if (line.find("partitions assigned") != std::string::npos &&
          line.find("partitions=none") == std::string::npos &&
          (source.empty() || line.find(" source=" + source + " ") != std::string::npos)) {
        return true;
      }
    }
    return false;
  }
  // The instance's current run (after its last "job running") has partitions in every source
  // subtask and a completed checkpoint: its own subtasks' first rebalance, which restarts the
  // run, is behind it.
  static bool Settled(const std::string& log, int subtasks) {
    std::ifstream in(log);
    std::set<std::string> owning;
    bool checkpointed = false;
    for (std::string line; std::getline(in, line);) {
      if (line.find("job running") != std::string::npos) {
        owning.clear();
        checkpointed = false;
      } else if (line.find("partitions assigned") != std::string::npos &&
                 line.find("partitions=none") == std::string::npos) {
        const size_t at = line.find(" subtask=");
        if (at != std::string::npos) owning.insert(line.substr(at, line.find(' ', at + 1) - at));
      } else if (line.find("partitions revoked") != std::string::npos ||
                 line.find("partitions lost") != std::string::npos) {
        checkpointed = false;
      } else if (!owning.empty() && line.find("result=completed") != std::string::npos) {
        checkpointed = true;
      }
    }
    return static_cast<int>(owning.size()) == subtasks && checkpointed;
  }
  // How many repartition partitions the window job's reader holds in the instance's current run
  // (after its last "job running"), from its assignment log lines.
  static size_t ShufflePartitionsOfCurrentRun(const std::string& log) {
    std::ifstream in(log);
    std::set<std::string> owned;
    for (std::string line; std::getline(in, line);) {
      if (line.find("job running") != std::string::npos) {
        owned.clear();
        continue;
      }
      const size_t at = line.find(" partitions=");
      if (line.find(" source=window.shuffle ") == std::string::npos || at == std::string::npos)
        continue;
      const size_t from = at + std::strlen(" partitions=");
      std::stringstream list(line.substr(from, line.find(' ', from) - from));
      const bool assigned = line.find("partitions assigned") != std::string::npos;
      for (std::string p; std::getline(list, p, ',');) {
        if (p == "none") continue;
        if (assigned) {
          owned.insert(p);
        } else {
          owned.erase(p);
        }
      }
    }
    return owned.size();
  }
  static bool LogHas(const std::string& log, const std::string& text) {
    std::ifstream in(log);
    for (std::string line; std::getline(in, line);) {
      if (line.find(text) != std::string::npos) return true;
    }
    return false;
  }
  // Per input partition, the metadata of the offset the job's consumer group committed last (""
  // when none was committed); an error reads as an empty map.
  std::map<int32_t, std::string> CommittedOffsetMetadata() const {
    std::map<int32_t, std::string> out;
    auto consumer = env_.MakeConsumer({{"group.id", "flow-" + job_id_ + ".input"}});
    EXPECT_TRUE(consumer.ok()) << consumer.status().ToString();
    if (!consumer.ok()) return out;
    rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(kPartitions);
    for (int32_t p = 0; p < kPartitions; ++p) {
      rd_kafka_topic_partition_list_add(list, input_.c_str(), p);
    }
    rd_kafka_resp_err_t err = rd_kafka_committed(consumer->get(), list, 30000);
    EXPECT_EQ(err, RD_KAFKA_RESP_ERR_NO_ERROR) << rd_kafka_err2str(err);
    for (int i = 0; err == RD_KAFKA_RESP_ERR_NO_ERROR && i < list->cnt; ++i) {
      const rd_kafka_topic_partition_t& tp = list->elems[i];
      out[tp.partition] =
          tp.offset < 0 || tp.metadata == nullptr
              ? ""
              : std::string(static_cast<const char*>(tp.metadata), tp.metadata_size);
    }
    rd_kafka_topic_partition_list_destroy(list);
    return out;
  }

  // The last `lines` lines of each instance's log but its completed checkpoints, which an idle
  // instance logs three times a second and would fill the tail with.
  void PrintLogTails(size_t lines) const {
    for (const auto& [name, in] : instances_) {
      std::ifstream f(in.log);
      std::vector<std::string> all;
      for (std::string line; std::getline(f, line);) {
        if (line.find(" checkpoint id=") == std::string::npos ||
            line.find("result=completed") == std::string::npos) {
          all.push_back(line);
        }
      }
      const size_t from = all.size() > lines ? all.size() - lines : 0;
      std::printf(
          "scale-out: instance %s, last %zu lines of %s (completed checkpoints left out):\n",
          name.c_str(), all.size() - from, in.log.c_str());
      for (size_t i = from; i < all.size(); ++i) std::printf("  %s\n", all[i].c_str());
    }
  }

  KafkaTestEnv env_;
  int64_t records_ = 0;
  int64_t kills_ = 0;
  int64_t t0_ = 0;
  uint64_t seed_ = 0;
  std::mt19937_64 rng_;
  fs::path work_;
  std::string guarantee_, input_, output_, job_id_;
  int64_t transaction_timeout_ms_ = 0;   // 0: the runtime's default for instances
  std::string job_kind_ = "copy";        // chaos_job's `job`
  std::vector<std::string> extra_args_;  // after Args()
  bool shared_state_ = false;            // --state-root <work>/states instead of own state dirs
  std::map<std::string, Instance> instances_;
};

}  // namespace scale_out
}  // namespace flow::test
