// Instances of chaos_job's keyed window job (--instance with --shuffle-brokers, docs/deploy.md,
// "Keyed jobs"): its key-by crosses between instances through a repartition topic. Two instances
// commit exactly the test's own windows; without --shuffle-brokers the job is refused (exit 2);
// without --state-root an instance that joins a running one is refused the partitions whose state
// is elsewhere (exit 1); with it, the state of a partition's keys follows the partition while
// instances join, die and leave and the broker restarts, and the output stays exact; an instance
// stopped for good is forgotten (--forget-instance); one stopped as its run starts exits 0 at once.

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
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
// the test's own per-(key, window) counts and sums. Own state dirs, no --state-root: state cannot
// follow a partition to another instance, so the input starts only once the group has settled.
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
  // still arrives.
  const int64_t n = std::min<int64_t>(records_, 12000);
  const std::map<std::string, int64_t> want = WindowReference(n, kWindowMs);
  for (int64_t from = 0; from < n; from += 1000) {
    ASSERT_NO_FATAL_FAILURE(ProduceWindowRecords(from, std::min(n, from + 1000)));
    Pass(300);
  }
  ASSERT_NO_FATAL_FAILURE(ProduceWindowFlush(n, kWindowMs));
  const Verdict v = CheckWindowOutput("window", want);
  // Both instances counted windows: each read some repartition partitions.
  for (const char* name : {"a", "b"}) {
    EXPECT_TRUE(LogHas(instances_[name].log, "source=window.shuffle"))
        << "see " << instances_[name].log;
  }
  if (!v.exact() || HasFailure()) PrintLogTails(60);
  EXPECT_TRUE(v.exact()) << "missing " << v.missing << ", duplicates " << v.duplicates << ", wrong "
                         << v.wrong << "; " << v.example;
}

// Without --state-root an instance cannot read another's checkpoints, so one that joins a running
// keyed job is refused the partitions whose state is elsewhere: it stops with exit code 1 and
// FailedPrecondition naming the partition and its owner, instead of counting a part of a window.
// The instance that lost them restarts from its last commit and, once the refused one's session
// has expired, gets every partition back.
TEST_F(ScaleOutTest, AnInstanceDoesNotTakeOverARepartitionPartitionWhoseStateIsElsewhere) {
  ASSERT_NO_FATAL_FAILURE(PrepareKeyedJob("scale-join", {}));
  std::vector<KafkaRecord> records;
  for (int64_t i = 0; i < 600; ++i) {
    records.push_back(KafkaRecord{static_cast<int32_t>(i % kPartitions), Key(i), Value(i)});
  }
  ASSERT_TRUE(env_.Produce(input_, records, Millis(60000)).ok());
  StartAndSettle("a", "window.shuffle", 60);
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
  const std::string refused = "give every instance --state-root";
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

// With --state-root a run's keyed operators wait, before they restore, for the repartition
// source to learn its first assignment. An instance stopped (SIGTERM) at the start of a run, before
// that assignment, stops cleanly at once: its sources end and the waiting operators restore
// nothing (they waited until the 30 s checkpoint timeout failed the run: exit 1).
TEST_F(ScaleOutTest, AnInstanceStoppedBeforeItsFirstAssignmentStopsAtOnce) {
  shared_state_ = true;
  ASSERT_NO_FATAL_FAILURE(PrepareKeyedJob("scale-early-stop", {"--set", "window_ms=1000"}));
  StartAndSettle("a", "window.shuffle", 60);
  ASSERT_TRUE(Settled(instances_["a"].log, 2)) << "see " << instances_["a"].log;
  Start("b");
  instances_["b"].retired = true;  // its exit is checked
  // Stopped as its run starts: joining the groups (a rebalance with a) takes far longer.
  const auto running_until = Clock::now() + std::chrono::seconds(30);
  while (Clock::now() < running_until && !LogHas(instances_["b"].log, "job running")) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ::kill(instances_["b"].pid, SIGTERM);
  const auto stopped_at = Clock::now();
  const int status = WaitForChild(instances_["b"].pid, 20000);
  if (status == -1) KillChild(instances_["b"].pid);
  const double seconds = std::chrono::duration<double>(Clock::now() - stopped_at).count();
  const bool assigned_first = LogHas(instances_["b"].log, "source=window.shuffle subtask=0 topic");
  EXPECT_TRUE(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "status " << status << " after " << seconds << " s; see " << instances_["b"].log;
  EXPECT_LT(seconds, 15.0) << "see " << instances_["b"].log;
  std::printf("scale-out: b stopped %.1f s after its SIGTERM (assigned before: %s)\n", seconds,
              assigned_first ? "yes" : "no");
  if (HasFailure()) PrintLogTails(40);
}

class StateMovesTest : public ScaleOutTest {
 protected:
  // The forgetting of b in RunWithMoves: refused while b ran, done once it had stopped.
  void ExpectForgotten(int early_forget, pid_t forget_pid, const std::string& forget_log) {
    EXPECT_TRUE(early_forget != -1 && WIFEXITED(early_forget) && WEXITSTATUS(early_forget) == 1)
        << "--forget-instance b while b ran: status " << early_forget;
    EXPECT_TRUE(LogHas((work_ / "forget-b-early.log").string(), "instance `b` is running"));
    const int forgot = forget_pid == -1 ? -1 : WaitForChild(forget_pid, 120000);
    if (forgot == -1 && forget_pid != -1) KillChild(forget_pid);
    EXPECT_TRUE(forgot != -1 && WIFEXITED(forgot) && WEXITSTATUS(forgot) == 0)
        << "--forget-instance b: status " << forgot << "; see " << forget_log;
    EXPECT_TRUE(LogHas(forget_log, "forgot the instance")) << "see " << forget_log;
    EXPECT_FALSE(fs::exists(work_ / "states" / "b")) << "b's checkpoints were not deleted";
    EXPECT_TRUE(fs::exists(work_ / "states" / "a"));
    // The topic is gone once the broker has finished deleting it.
    const std::string progress = "__flow_progress_" + job_id_ + ".b";
    bool topic_gone = false;
    for (int i = 0; i < 50 && !topic_gone; ++i) {
      topic_gone = !env_.PartitionCount(progress).ok();
      if (!topic_gone) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    EXPECT_TRUE(topic_gone) << progress << " was not deleted";
    ExpectForgettingKeepsNamedCheckpoints("a");
  }

  // Every instance is stopped: the repartition offsets `name` committed last still name its
  // checkpoints, and nobody commits them again. A dry run lists them; forgetting it keeps exactly
  // those (its retention kept them too), deletes its other checkpoints and fails after its wait.
  void ExpectForgettingKeepsNamedCheckpoints(const std::string& name) {
    const fs::path dir = work_ / "states" / name;
    std::vector<std::string> args = ArgsOf(name);
    args.insert(args.end(), {"--forget-instance", name, "--dry-run"});
    const std::string dry_log = (work_ / ("forget-" + name + "-dry.log")).string();
    const int dry = WaitForChild(SpawnJob(FLOW_CHAOS_JOB, args, "", dry_log), 90000);
    EXPECT_TRUE(dry != -1 && WIFEXITED(dry) && WEXITSTATUS(dry) == 0) << "see " << dry_log;
    // "<topic> partition <p>: chk-<N>" for each partition whose last commit was `name`'s.
    std::set<std::string> named;
    {
      std::ifstream in(dry_log);
      for (std::string line; std::getline(in, line);) {
        if (line.find("dry run: committed offsets name") == std::string::npos) continue;
        for (size_t at = line.find(": chk-"); at != std::string::npos;
             at = line.find(": chk-", at + 1)) {
          const size_t end = line.find_first_not_of("0123456789", at + 6);
          named.insert(line.substr(at + 2, end - at - 2));
        }
      }
    }
    ASSERT_FALSE(named.empty()) << name << " committed no repartition partition last; see "
                                << dry_log;
    for (const std::string& chk : named) EXPECT_TRUE(fs::exists(dir / chk / "_metadata")) << chk;
    size_t before = 0;
    for (const auto& e : fs::directory_iterator(dir)) {
      before += e.path().filename().string().starts_with("chk-") ? 1 : 0;
    }
    args.back() = "--forget-wait";
    args.push_back("1s");
    const std::string log = (work_ / ("forget-" + name + ".log")).string();
    const int status = WaitForChild(SpawnJob(FLOW_CHAOS_JOB, args, "", log), 90000);
    EXPECT_TRUE(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 1) << "see " << log;
    EXPECT_TRUE(LogHas(log, "committed offsets still name checkpoints of instance")) << log;
    std::set<std::string> left;
    for (const auto& e : fs::directory_iterator(dir)) {
      const std::string file = e.path().filename().string();
      if (file.starts_with("chk-")) left.insert(file);
    }
    EXPECT_EQ(left, named) << "of " << before << " checkpoints";
  }

  // The window job with --state-root while instances come and go: a runs alone and counts every
  // key; b joins (half of a's partitions move to b, their windows half counted), a is killed
  // (SIGKILL) and restarted, c joins, b stops for good (SIGTERM: its partitions move to a and c).
  // With `full`, the broker is also restarted after c joins (FLOW_SCALE_KEYED_BROKER=0 leaves it
  // out, =1 adds it to the other runs) and b is forgotten (--forget-instance b: refused while b
  // ran, it deletes b's checkpoints once no committed offset names them, and its progress topic,
  // while input still arrives), and at the end forgetting a keeps the checkpoints of a that
  // offsets name. For long runs, FLOW_SCALE_KEYED_KILLS=N adds N SIGKILLs of random instances at
  // random chunks (a seed replays them). Input arrives all along, so every move happens in the
  // middle of open windows. Returns the committed output compared with the test's own per-(key,
  // window) counts and sums; `moved` tells whether some instance adopted state from another one's
  // checkpoint. `kind`: chaos_job's window or join job; `stage2`: with its second key-by, whose
  // rows are checked with the first one's.
  Verdict RunWithMoves(const std::string& prefix, std::vector<std::string> args, bool* moved,
                       const std::string& kind = "window", bool full = false, bool stage2 = false) {
    constexpr int64_t kWindowMs = 1000;
    shared_state_ = true;
    args.insert(args.end(), {"--set", fmt::format("window_ms={}", kWindowMs)});
    if (stage2) args.insert(args.end(), {"--set", "stage2=true"});
    PrepareKeyedJob(prefix, args);
    if (HasFatalFailure()) return {};
    job_kind_ = kind;
    StartAndSettle("a", kind + ".shuffle", 90);
    EXPECT_TRUE(Settled(instances_["a"].log, 2)) << "see " << instances_["a"].log;
    const int64_t n = std::min<int64_t>(records_, 16000);
    std::map<std::string, int64_t> want =
        kind == "join" ? JoinReference(n, kWindowMs) : WindowReference(n, kWindowMs);
    if (stage2) want = WithSecondStage(std::move(want));
    constexpr int kChunks = 16;
    std::multimap<int, std::string> script = {
        {3, "join b"}, {7, "kill a"}, {9, "join c"}, {12, "stop b"}};
    if (full) script.insert({{5, "forget b early"}, {13, "forget b"}});
    if (EnvInt("FLOW_SCALE_KEYED_BROKER", full ? 1 : 0) != 0) script.emplace(10, "broker");
    for (int64_t k = EnvInt("FLOW_SCALE_KEYED_KILLS", 0); k > 0; --k) {
      script.emplace(static_cast<int>(Uniform(4, kChunks - 2)), "kill");
    }
    std::vector<std::string> events;
    std::vector<std::string> forget_args = ArgsOf("b");
    forget_args.insert(forget_args.end(), {"--forget-instance", "b"});
    const std::string forget_log = (work_ / "forget-b.log").string();
    pid_t forget_pid = -1;
    int early_forget = -1;
    for (int chunk = 0; chunk < kChunks; ++chunk) {
      ProduceWindowRecords(n * chunk / kChunks, n * (chunk + 1) / kChunks);
      for (auto [it, end] = script.equal_range(chunk); it != end; ++it) {
        const std::string& what = it->second;
        if (what == "join b" || what == "join c") {
          Start(what.substr(5));
          events.push_back(what.substr(5) + " joined");
        } else if (what == "kill" || what == "kill a") {
          const std::vector<std::string> names = Running();
          const std::string victim =
              what == "kill a"
                  ? "a"
                  : names[static_cast<size_t>(Uniform(0, static_cast<int64_t>(names.size()) - 1))];
          std::ofstream(instances_[victim].log, std::ios::app) << "=== SIGKILL\n";
          ::kill(instances_[victim].pid, SIGKILL);  // Supervise restarts it
          events.push_back(victim + " killed");
        } else if (what == "broker") {
          // Between two chunks: no input is produced while it is down.
          EXPECT_EQ(std::system(KafkaScript("kill", port_).c_str()), 0);
          std::this_thread::sleep_for(std::chrono::milliseconds(Uniform(1000, 3000)));
          EXPECT_EQ(std::system(KafkaScript("start", port_).c_str()), 0);
          events.push_back("broker restarted");
        } else if (what == "forget b early") {
          // b runs (a member of the input's group once it owns a partition): refused at once.
          const auto member_until = Clock::now() + std::chrono::seconds(30);
          while (Clock::now() < member_until && !OwnedPartitions(instances_["b"].log)) Pass(200);
          early_forget = WaitForChild(
              SpawnJob(FLOW_CHAOS_JOB, forget_args, "", (work_ / "forget-b-early.log").string()),
              60000);
        } else if (what == "forget b") {
          // Once b has left its groups; in the background, as it waits for a and c to commit
          // b's partitions.
          const int b_exit = WaitForChild(instances_["b"].pid, 30000);
          if (b_exit == -1) KillChild(instances_["b"].pid);
          EXPECT_TRUE(b_exit != -1 && WIFEXITED(b_exit) && WEXITSTATUS(b_exit) == 0)
              << "b after SIGTERM: status " << b_exit << "; see " << instances_["b"].log;
          forget_pid = SpawnJob(FLOW_CHAOS_JOB, forget_args, "", forget_log);
          events.push_back("b forgotten");
        } else {
          instances_["b"].retired = true;
          ::kill(instances_["b"].pid, SIGTERM);
          events.push_back("b stopped");
        }
      }
      Pass(1500);
    }
    ProduceWindowFlush(n, kWindowMs);
    std::string done;
    for (const std::string& e : events) done += (done.empty() ? "" : ", ") + e;
    const Verdict v = CheckWindowOutput(
        fmt::format("state moves ({}; seed {})", done, static_cast<unsigned long long>(seed_)),
        want);
    if (full) ExpectForgotten(early_forget, forget_pid, forget_log);
    *moved = false;
    for (const auto& [name, in] : instances_) {
      for (const auto& [other, unused] : instances_) {
        if (other != name &&
            LogHas(in.log, "from=" + (work_ / "states" / other).string() + "/chk-")) {
          *moved = true;
        }
      }
    }
    return v;
  }
};

// With --state-root the state of a repartition partition's keys follows the partition: the
// committed output is exactly the test's own, and the logs show state adopted from another
// instance's checkpoint. The window's rows go on behind a second key-by (a window behind a
// window: a second topic, whose writers report the first one's key groups), checked too.
TEST_F(StateMovesTest, TheStateOfAPartitionsKeysFollowsItWhileInstancesJoinDieAndLeave) {
  bool moved = false;
  const Verdict v =
      RunWithMoves("scale-move", {}, &moved, "window", /*full=*/true, /*stage2=*/true);
  EXPECT_TRUE(moved) << "no instance adopted state from another's checkpoint";
  if (!v.exact() || HasFailure()) PrintLogTails(60);
  EXPECT_TRUE(v.exact()) << "missing " << v.missing << ", duplicates " << v.duplicates << ", wrong "
                         << v.wrong << "; " << v.example;
}

// A join's two sides cross one repartition topic (engine/shuffle_join.h): both sides of a key
// reach the instance that reads its partition, the join's state follows the partition, and event
// time combines both sides' input partitions (both sides read one source here, each reporting
// its progress). The committed output is exactly the test's own per-(key, window) join, and its
// rows summed per bucket behind a second key-by (a window behind a join).
TEST_F(StateMovesTest, AJoinsStateFollowsItsKeysWhileInstancesJoinDieAndLeave) {
  bool moved = false;
  const Verdict v =
      RunWithMoves("scale-join-move", {}, &moved, "join", /*full=*/false, /*stage2=*/true);
  EXPECT_TRUE(moved) << "no instance adopted state from another's checkpoint";
  if (!v.exact() || HasFailure()) PrintLogTails(60);
  EXPECT_TRUE(v.exact()) << "missing " << v.missing << ", duplicates " << v.duplicates << ", wrong "
                         << v.wrong << "; " << v.example;
}

// The control: a window operator whose restore keeps every key, not only those of the key groups
// being restored, fires the windows of partitions read elsewhere too. The same run must then show
// duplicated or wrong windows, so the check above can fail.
TEST_F(StateMovesTest, ControlAnOperatorThatRestoresEveryKeyFiresWindowsTwice) {
  bool moved = false;
  const Verdict v = RunWithMoves("scale-move-ctl", {"--set", "restore_all_keys=true"}, &moved);
  EXPECT_TRUE(moved);
  EXPECT_GT(v.duplicates + v.wrong, 0) << "the check could not tell";
}

}  // namespace
}  // namespace flow::test::scale_out
