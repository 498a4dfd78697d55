// Instances of one job sharing the work through Kafka (--instance, docs/deploy.md), against the
// chaos tests' own broker (FLOW_CHAOS_KAFKA_PORT, started here if not running):
//   1. a 12-partition input topic is filled with FLOW_SCALE_RECORDS (default 60,000) keyed records
//      while the rounds below run;
//   2. three instances of chaos_job's copier (parallelism 2, one state dir each, one job id) run
//      as separate processes under a supervisor that restarts those that die; every ~1.5 s a
//      round SIGKILLs a random instance (FLOW_SCALE_KILLS, default 8), and the run also adds a
//      fourth instance, stops one for good with SIGTERM and restarts the broker once;
//   3. the read_committed output is compared with the input: nothing lost, nothing twice,
//      nothing else. The same with the at-least-once sink must show duplicates.
// Each first instance must have been assigned partitions (the work was shared).
// The keyed window job's tests are in scale_out_keyed_test.cpp; the fixture in scale_out_fixture.h.

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "scale_out_fixture.h"

namespace flow::test::scale_out {
namespace {

TEST_F(ScaleOutTest, InstancesCopyExactlyOnceThroughKillsMembershipChangesAndABrokerRestart) {
  auto out = Run("exactly_once", /*membership=*/true);
  Verdict v = Compare(Reference(), out);
  std::printf(
      "scale-out exactly_once: %zu output records, missing %lld, duplicates %lld, wrong %lld%s%s\n",
      out.size(), static_cast<long long>(v.missing), static_cast<long long>(v.duplicates),
      static_cast<long long>(v.wrong), v.example.empty() ? "" : "; e.g. ", v.example.c_str());
  for (const char* name : {"a", "b", "c", "d"}) {
    EXPECT_TRUE(OwnedPartitions(instances_[name].log))
        << "instance " << name << " was never assigned a partition (see " << instances_[name].log
        << ")";
  }
  // Each committed offset names the snapshot of the state as of it, "<instance>/chk-<N>": whoever
  // reads the partition next finds that partition's state there.
  const std::regex owner("(a|b|c|d)/chk-[1-9][0-9]*");
  const std::map<int32_t, std::string> metadata = CommittedOffsetMetadata();
  EXPECT_EQ(metadata.size(), static_cast<size_t>(kPartitions));
  for (const auto& [partition, m] : metadata) {
    EXPECT_TRUE(std::regex_match(m, owner)) << "partition " << partition << ": `" << m << "`";
  }
  if (!v.exact() || HasFailure()) PrintLogTails(40);
  EXPECT_TRUE(v.exact()) << "missing " << v.missing << ", duplicates " << v.duplicates << ", wrong "
                         << v.wrong << "; " << v.example << " (seed " << seed_ << ")";
}

// The checker is not blind: the same kills with at-least-once sinks leave duplicates.
TEST_F(ScaleOutTest, CheckerDetectsAtLeastOnceDuplicates) {
  auto out = Run("at_least_once", /*membership=*/false);
  Verdict v = Compare(Reference(), out);
  std::printf(
      "scale-out at_least_once: %zu output records, missing %lld, duplicates %lld, wrong %lld\n",
      out.size(), static_cast<long long>(v.missing), static_cast<long long>(v.duplicates),
      static_cast<long long>(v.wrong));
  EXPECT_GT(v.duplicates, 0) << "no duplicates after " << kills_ << " kills (seed " << seed_ << ")";
  EXPECT_EQ(v.missing, 0) << v.example;
  if (v.missing > 0) PrintLogTails(40);
}

// An instance SIGKILLed for good leaves a transaction open: output and the offsets of its
// partitions. The instance that gets them aborts it (the takeover), long before the broker would:
// the transaction timeout is 5 minutes here, yet everything produced before the kill must be
// visible to a read_committed reader within 2, and the whole output exactly once. Input keeps
// arriving throughout.
TEST_F(ScaleOutTest, InstanceKilledForGoodIsTakenOverBeforeItsTransactionTimesOut) {
  guarantee_ = "exactly_once";
  input_ = UniqueName("scale-in");
  output_ = UniqueName("scale-out");
  job_id_ = UniqueName("scale-takeover");
  transaction_timeout_ms_ = 300000;
  ASSERT_TRUE(env_.CreateTopic(input_, kPartitions).ok());
  ASSERT_TRUE(env_.CreateTopic(output_, 3).ok());
  std::atomic<int64_t> produced{0};
  std::atomic<bool> stop{false};
  std::thread producer([&] {
    while (!stop.load()) {
      std::vector<KafkaRecord> batch;
      const int64_t from = produced.load();
      for (int64_t i = from; i < from + 50; ++i) batch.push_back(KafkaRecord{-1, Key(i), Value(i)});
      rt::Status s = env_.Produce(input_, batch, Millis(60000));
      EXPECT_TRUE(s.ok()) << s.ToString();
      if (!s.ok()) return;
      produced.store(from + 50);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  // All of `count` first records visible to a read_committed reader. Why the last try failed
  // (the read itself, or the first record missing) goes into the failure messages.
  std::string not_visible;
  auto visible = [&](int64_t count) {
    auto got = env_.ConsumeToEnd(output_, Isolation::kReadCommitted, Millis(5000));
    if (!got.ok()) {
      not_visible = got.status().ToString();
      return false;
    }
    std::set<std::string> seen;
    for (const KafkaRecord& rec : *got) seen.insert(rec.key + "=" + rec.value);
    for (int64_t i = 0; i < count; ++i) {
      if (seen.count(Key(i) + "=" + Value(i)) == 0) {
        not_visible = "the read got " + std::to_string(got->size()) + " records; record " +
                      std::to_string(i) + " of the first " + std::to_string(count) +
                      " was not among them";
        return false;
      }
    }
    return true;
  };
  Start("a");
  Start("b");
  const auto ready_until = Clock::now() + std::chrono::seconds(60);
  while (Clock::now() < ready_until &&
         !(OwnedPartitions(instances_["a"].log) && OwnedPartitions(instances_["b"].log) &&
           visible(produced.load()))) {
    Pass(500);
  }
  ASSERT_TRUE(OwnedPartitions(instances_["a"].log) && OwnedPartitions(instances_["b"].log))
      << "the two instances did not share the input within 60 s";
  Pass(2000);
  Instance& a = instances_["a"];
  a.retired = true;
  KillChild(a.pid);
  const auto killed = Clock::now();
  const int64_t before_kill = produced.load();
  bool all = false;
  while (!all && Clock::now() < killed + std::chrono::minutes(2)) {
    Pass(1000);
    all = visible(before_kill);
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - killed).count();
  std::printf(
      "scale-out takeover: the %lld records produced before the SIGKILL were visible "
      "after %.1f s (transaction timeout %lld s)\n",
      static_cast<long long>(before_kill), seconds,
      static_cast<long long>(transaction_timeout_ms_ / 1000));
  EXPECT_TRUE(all) << "records produced before the SIGKILL still not visible after " << seconds
                   << " s; last try: " << not_visible;
  // The kill may land between two of a's transactions, when none holds records back: then the
  // records are visible before b has even been given a's partitions. The takeover must still
  // come (within a session timeout and two confirmation passes), so wait for it rather than
  // read the log at once.
  const auto takeover_until = Clock::now() + std::chrono::seconds(60);
  while (Clock::now() < takeover_until &&
         !LogHas(instances_["b"].log, "took over a stopped instance")) {
    Pass(500);
  }
  EXPECT_TRUE(LogHas(instances_["b"].log, "took over a stopped instance"))
      << "no takeover within 60 s after the records were visible; see " << instances_["b"].log;
  stop.store(true);
  producer.join();
  records_ = produced.load();
  const auto until = Clock::now() + std::chrono::minutes(2);
  while (Clock::now() < until && !visible(records_)) Pass(1000);
  ::kill(instances_["b"].pid, SIGTERM);
  if (WaitForChild(instances_["b"].pid, 30000) == -1) KillChild(instances_["b"].pid);
  auto got = env_.ConsumeToEnd(output_, Isolation::kReadCommitted, Millis(60000));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  std::vector<std::string> values;
  for (const KafkaRecord& rec : *got) values.push_back(rec.key + "=" + rec.value);
  Verdict v = Compare(Reference(), values);
  if (!v.exact() || HasFailure()) PrintLogTails(40);
  EXPECT_TRUE(v.exact()) << "missing " << v.missing << ", duplicates " << v.duplicates << ", wrong "
                         << v.wrong << "; " << v.example;
}

// A second process under a running instance's name (another machine: another state dir) fences
// its producer. With no takeover marker in its progress topic the first process knows it was not
// taken for stopped by another instance: it exits with code 3 saying why, instead of restarting
// and fencing the second in turn, forever. (The second cannot restore the first's checkpoint from
// its own state dir and stops too, exit 1.)
TEST_F(ScaleOutTest, SecondProcessUnderOneInstanceNameStopsTheFirstWithExitCode3) {
  guarantee_ = "exactly_once";
  input_ = UniqueName("scale-in");
  output_ = UniqueName("scale-out");
  job_id_ = UniqueName("scale-twin");
  ASSERT_TRUE(env_.CreateTopic(input_, kPartitions).ok());
  ASSERT_TRUE(env_.CreateTopic(output_, 3).ok());
  Start("a");
  // Fenced while it restarts from its own first rebalance, the first would fence the second in
  // turn with its restart's init_transactions: what is tested is a running instance.
  const auto ready_until = Clock::now() + std::chrono::seconds(60);
  while (Clock::now() < ready_until && !Settled(instances_["a"].log, 2)) Pass(500);
  ASSERT_TRUE(Settled(instances_["a"].log, 2)) << "see " << instances_["a"].log;
  std::vector<std::string> args = Args("a");
  const std::string dir = (work_ / "state-a").string();
  std::replace(args.begin(), args.end(), dir, (work_ / "state-a-twin").string());
  const std::string twin_log = (work_ / "a-twin.log").string();
  pid_t twin = SpawnJob(FLOW_CHAOS_JOB, args, "", twin_log);
  instances_["a"].retired = true;  // not restarted: its exit code is the point
  const int status = WaitForChild(instances_["a"].pid, 120000);
  if (status == -1) KillChild(instances_["a"].pid);
  if (WaitForChild(twin, 30000) == -1) KillChild(twin);
  // EXPECT, not ASSERT: the logs below are all a CI run leaves behind.
  EXPECT_NE(status, -1) << "still running 120 s after a second process took its name (see "
                        << instances_["a"].log << ")";
  EXPECT_TRUE(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 3)
      << "status " << status << "; see " << instances_["a"].log;
  EXPECT_TRUE(LogHas(instances_["a"].log, "needs its own --instance name"))
      << "see " << instances_["a"].log;
  if (HasFailure()) {
    PrintLogTails(40);
    std::ifstream f(twin_log);
    std::printf("scale-out: the second process's log %s:\n", twin_log.c_str());
    for (std::string line; std::getline(f, line);) std::printf("  %s\n", line.c_str());
  }
}

}  // namespace
}  // namespace flow::test::scale_out
