// Instances of chaos_job's keyed window job (--instance with --shuffle-brokers, docs/deploy.md,
// "Keyed jobs"): its key-by crosses between instances through a repartition topic. Two instances
// commit exactly the test's own windows; without --shuffle-brokers the job is refused (exit 2); an
// instance that joins a running one is refused the partitions whose state is elsewhere (exit 1),
// since state does not move between instances yet.

#include <signal.h>

#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "scale_out_fixture.h"

namespace flow::test::scale_out {
namespace {

// A keyed job under --instance needs the cluster of its repartition topic: without
// --shuffle-brokers it is refused with exit code 2 and a message naming the operator and the flag.
TEST_F(ScaleOutTest, KeyedJobWithoutShuffleBrokersIsRefusedAsInstances) {
  input_ = UniqueName("scale-in");
  output_ = UniqueName("scale-out");
  job_id_ = UniqueName("scale-window");
  guarantee_ = "exactly_once";
  job_kind_ = "window";
  ASSERT_TRUE(env_.CreateTopic(input_, kPartitions).ok());
  const std::string log = (work_ / "window.log").string();
  pid_t pid = SpawnJob(FLOW_CHAOS_JOB, ArgsOf("a"), "", log);
  int status = WaitForChild(pid, 60000);
  ASSERT_NE(status, -1) << "still running";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2) << "status " << status;
  EXPECT_TRUE(LogHas(log, "operator 'window' (key by key)")) << "see " << log;
  EXPECT_TRUE(LogHas(log, "give --shuffle-brokers")) << "see " << log;
}

// Two instances of the window job share its keys through a repartition topic: each reads a part of
// the input, writes every record to the partition of its key group, and counts the keys of the
// repartition partitions it reads. Event time crosses with the records: a window fires only when
// every input partition, read by either instance, has passed it. The committed output is exactly
// the test's own per-(key, window) counts and sums. No kills: state does not follow a partition
// to another instance yet, so the input starts only once the group has settled.
TEST_F(ScaleOutTest, TwoInstancesOfAKeyedWindowJobShareItsKeysThroughARepartitionTopic) {
  constexpr int64_t kWindowMs = 1000;
  ASSERT_NO_FATAL_FAILURE(
      PrepareKeyedJob("scale-window", {"--set", fmt::format("window_ms={}", kWindowMs)}));
  Start("a");
  Start("b");
  const auto ready_until = Clock::now() + std::chrono::seconds(90);
  while (Clock::now() < ready_until &&
         !(Settled(instances_["a"].log, 2) && Settled(instances_["b"].log, 2) &&
           OwnedPartitions(instances_["a"].log, "window.shuffle") &&
           OwnedPartitions(instances_["b"].log, "window.shuffle"))) {
    Pass(500);
  }
  ASSERT_TRUE(OwnedPartitions(instances_["a"].log, "window.shuffle") &&
              OwnedPartitions(instances_["b"].log, "window.shuffle"))
      << "the two instances did not share the repartition topic within 90 s";
  Pass(2000);
  // Record i goes to input partition i % 12 with event time t0 + 3 i: windows of 1 s hold about
  // 333 records of up to 97 keys. Chunks arrive over a few seconds, so windows fire while input
  // still arrives. Then one late-stamped record per partition moves every partition's event time
  // past the last window; its own window ("flush") never fires.
  const int64_t n = std::min<int64_t>(records_, 12000);
  std::map<std::string, int64_t> want;
  std::map<std::pair<std::string, int64_t>, std::pair<int64_t, int64_t>> windows;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t ts = t0_ + 3 * i;
    const int64_t start = ts - ts % kWindowMs;
    auto& [count, sum] = windows[{Key(i), start}];
    ++count;
    sum += i;
  }
  for (const auto& [k, v] : windows) {
    ++want[fmt::format("{}|{}={},{},{},{}", k.first, k.second, k.first, k.second, v.first,
                       v.second)];
  }
  for (int64_t from = 0; from < n; from += 1000) {
    std::vector<KafkaRecord> batch;
    for (int64_t i = from; i < std::min(n, from + 1000); ++i) {
      batch.push_back(KafkaRecord{static_cast<int32_t>(i % kPartitions), Key(i),
                                  fmt::format("{},{}", i, t0_ + 3 * i)});
    }
    ASSERT_TRUE(env_.Produce(input_, batch, Millis(60000)).ok());
    Pass(300);
  }
  std::vector<KafkaRecord> flush;
  for (int32_t p = 0; p < kPartitions; ++p) {
    flush.push_back(KafkaRecord{p, "flush", fmt::format("{},{}", n, t0_ + 3 * n + 10 * kWindowMs)});
  }
  ASSERT_TRUE(env_.Produce(input_, flush, Millis(60000)).ok());
  const auto deadline = Clock::now() + std::chrono::minutes(2);
  while (Clock::now() < deadline) {
    Pass(1000);
    auto got = env_.ConsumeToEnd(output_, Isolation::kReadCommitted, Millis(20000));
    if (got.ok() && got->size() >= windows.size()) break;
  }
  Pass(1500);  // late duplicates would show
  for (const char* name : {"a", "b"}) {
    instances_[name].retired = true;
    ::kill(instances_[name].pid, SIGTERM);
  }
  for (const char* name : {"a", "b"}) {
    if (WaitForChild(instances_[name].pid, 30000) == -1) KillChild(instances_[name].pid);
  }
  auto got = env_.ConsumeToEnd(output_, Isolation::kReadCommitted, Millis(60000));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  std::vector<std::string> values;
  for (const KafkaRecord& rec : *got) values.push_back(rec.key + "=" + rec.value);
  Verdict v = Compare(want, values);
  std::printf(
      "scale-out window: %zu windows expected, %zu output records, missing %lld, "
      "duplicates %lld, wrong %lld%s%s\n",
      windows.size(), values.size(), static_cast<long long>(v.missing),
      static_cast<long long>(v.duplicates), static_cast<long long>(v.wrong),
      v.example.empty() ? "" : "; e.g. ", v.example.c_str());
  // Both instances counted windows: each read some repartition partitions.
  for (const char* name : {"a", "b"}) {
    EXPECT_TRUE(LogHas(instances_[name].log, "source=window.shuffle"))
        << "see " << instances_[name].log;
  }
  if (!v.exact() || HasFailure()) PrintLogTails(60);
  EXPECT_TRUE(v.exact()) << "missing " << v.missing << ", duplicates " << v.duplicates << ", wrong "
                         << v.wrong << "; " << v.example;
}

// State does not follow a repartition partition to another instance yet, so an instance that
// joins a running keyed job is refused the partitions whose state is elsewhere: it stops with
// exit code 1 and FailedPrecondition naming the partition and its owner, instead of counting a
// part of a window. The instance that lost them restarts from its last commit and, once the
// refused one's session has expired, gets every partition back. What takes the refusal's place
// is the restore of a partition's state where it moves.
TEST_F(ScaleOutTest, AnInstanceDoesNotTakeOverARepartitionPartitionWhoseStateIsElsewhere) {
  ASSERT_NO_FATAL_FAILURE(PrepareKeyedJob("scale-join", {}));
  std::vector<KafkaRecord> records;
  for (int64_t i = 0; i < 600; ++i) {
    records.push_back(KafkaRecord{static_cast<int32_t>(i % kPartitions), Key(i), Value(i)});
  }
  ASSERT_TRUE(env_.Produce(input_, records, Millis(60000)).ok());
  Start("a");
  const auto ready_until = Clock::now() + std::chrono::seconds(60);
  while (Clock::now() < ready_until && !(Settled(instances_["a"].log, 2) &&
                                         OwnedPartitions(instances_["a"].log, "window.shuffle"))) {
    Pass(500);
  }
  ASSERT_TRUE(Settled(instances_["a"].log, 2)) << "see " << instances_["a"].log;
  Pass(3000);  // several commits: every repartition partition's offset names a
  Start("b");
  instances_["b"].retired = true;  // its exit is checked
  const int b_status = WaitForChild(instances_["b"].pid, 120000);
  if (b_status == -1) KillChild(instances_["b"].pid);
  // a runs on, and gets every repartition partition back in a run after the move.
  const auto back_until = Clock::now() + std::chrono::seconds(60);
  auto a_whole = [&] {
    return LogHas(instances_["a"].log, "work moved between instances") &&
           ShufflePartitionsOfCurrentRun(instances_["a"].log) == 6;
  };
  while (Clock::now() < back_until && !a_whole()) Pass(500);
  const bool a_back = a_whole();
  const bool a_failed = LogHas(instances_["a"].log, "FailedPrecondition");
  instances_["a"].retired = true;
  ::kill(instances_["a"].pid, SIGTERM);
  if (WaitForChild(instances_["a"].pid, 30000) == -1) KillChild(instances_["a"].pid);
  const std::string refused = "state does not move between instances yet";
  EXPECT_TRUE(b_status != -1 && WIFEXITED(b_status) && WEXITSTATUS(b_status) == 1)
      << "status " << b_status << "; see " << instances_["b"].log;
  EXPECT_TRUE(LogHas(instances_["b"].log, "FailedPrecondition")) << "see " << instances_["b"].log;
  EXPECT_TRUE(LogHas(instances_["b"].log, "instance a committed it last"))
      << "see " << instances_["b"].log;
  EXPECT_TRUE(LogHas(instances_["b"].log, refused)) << "see " << instances_["b"].log;
  EXPECT_TRUE(a_back) << "a did not get its partitions back within 60 s; see "
                      << instances_["a"].log;
  EXPECT_FALSE(a_failed) << "see " << instances_["a"].log;
  if (HasFailure()) PrintLogTails(40);
}

}  // namespace
}  // namespace flow::test::scale_out
