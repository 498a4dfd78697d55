// The exactly-once Kafka sink against the real broker (label `kafka`): read_committed readers
// see committed epochs only; records of a participant ahead of the open transaction wait for the
// next one; fencing; SIGKILL in the middle of a commit; progress records and the recovery
// decision. References are lists of values kept by the test.

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "flow/runtime/checkpoint/fault_injection.h"
#include "flow/runtime/txn/exactly_once_file_sink.h"
#include "flow/runtime/txn/kafka_exactly_once_sink.h"
#include "kafka/kafka_test_env.h"
#include "txn_test_options.h"

namespace flow::rt {
namespace {

using test::Isolation;
using test::KafkaTestEnv;
using test::Millis;
using test::UniqueName;

constexpr uint32_t kParallelism = 2;
constexpr int kPer = 5;

std::string Value(uint32_t subtask, int64_t epoch, int i) {
  return "s" + std::to_string(subtask) + "-e" + std::to_string(epoch) + "-" + std::to_string(i);
}

// Reference: every value of epochs [from, through] of every subtask, sorted.
std::vector<std::string> Expected(int64_t through, int64_t from = 1) {
  std::vector<std::string> out;
  for (int64_t e = from; e <= through; ++e) {
    for (uint32_t s = 0; s < kParallelism; ++s) {
      for (int i = 0; i < kPer; ++i) out.push_back(Value(s, e, i));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

class KafkaExactlyOnceSinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Status reachable = kafka_.CheckReachable(Millis(20000));
    ASSERT_TRUE(reachable.ok()) << reachable.ToString();
    auto topic = kafka_.CreateUniqueTopic("eo-out", kParallelism);
    ASSERT_TRUE(topic.ok()) << topic.status().ToString();
    topic_ = *topic;
    job_ = UniqueName("eojob");
  }

  KafkaTransactionOptions Options() const {
    return test_support::TestTransactionOptions(kafka_.brokers(), job_);
  }

  std::unique_ptr<KafkaTransactionGroup> StartGroup() {
    auto group = KafkaTransactionGroup::Start(Options(), kParallelism);
    EXPECT_TRUE(group.ok()) << group.status().ToString();
    return group.ok() ? std::move(group).value() : nullptr;
  }

  // One sink per subtask, subtask s writing to partition s; recovered from `restored`.
  std::vector<std::unique_ptr<KafkaExactlyOnceSink>> Sinks(KafkaTransactionGroup* group,
                                                           int64_t restored) {
    std::vector<std::unique_ptr<KafkaExactlyOnceSink>> sinks;
    for (uint32_t s = 0; s < kParallelism; ++s) {
      KafkaExactlyOnceSinkOptions o;
      o.topic = topic_;
      o.partitioner = KafkaPartitioner::kExplicit;
      o.partition = static_cast<int32_t>(s);
      auto sink = std::make_unique<KafkaExactlyOnceSink>(group, s, o);
      Status st = sink->Open(s, kParallelism);
      EXPECT_TRUE(st.ok()) << st.ToString();
      st = sink->Recover(restored);
      EXPECT_TRUE(st.ok()) << st.ToString();
      EXPECT_TRUE(sink->BeginTransaction().ok());
      sinks.push_back(std::move(sink));
    }
    return sinks;
  }

  static void WriteEpoch(TwoPhaseCommitSink& sink, uint32_t subtask, int64_t epoch) {
    for (int i = 0; i < kPer; ++i) {
      Status st = sink.Write("", Value(subtask, epoch, i), kNoTimestamp);
      ASSERT_TRUE(st.ok()) << st.ToString();
    }
  }

  static void FullEpoch(std::vector<std::unique_ptr<KafkaExactlyOnceSink>>& sinks, int64_t epoch) {
    for (uint32_t s = 0; s < kParallelism; ++s) WriteEpoch(*sinks[s], s, epoch);
    for (auto& sink : sinks) {
      Status st = sink->PreCommit(epoch);
      ASSERT_TRUE(st.ok()) << st.ToString();
    }
  }

  std::vector<std::string> Read(Isolation isolation) {
    auto records = kafka_.ConsumeToEnd(topic_, isolation, Millis(40000));
    EXPECT_TRUE(records.ok()) << records.status().ToString();
    std::vector<std::string> values;
    if (records.ok()) {
      for (const auto& r : *records) values.push_back(r.value);
    }
    std::sort(values.begin(), values.end());
    return values;
  }

  KafkaTestEnv kafka_;
  std::string topic_;
  std::string job_;
};

TEST_F(KafkaExactlyOnceSinkTest, ReadCommittedSeesCommittedEpochsOnlyAndAheadRecordsWait) {
  auto group = StartGroup();
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(group->last_committed(), 0);
  EXPECT_EQ(group->transactional_id(), "flow-" + job_);
  auto sinks = Sinks(group.get(), 0);
  FullEpoch(sinks, 1);
  ASSERT_TRUE(sinks[0]->Commit(1).ok());
  ASSERT_TRUE(sinks[1]->Commit(1).ok());  // no-op: the group committed once for all
  EXPECT_EQ(Read(Isolation::kReadCommitted), Expected(1));

  // Subtask 0 passes barrier 2 and writes epoch 3 while subtask 1 is still in epoch 2.
  WriteEpoch(*sinks[0], 0, 2);
  ASSERT_TRUE(sinks[0]->PreCommit(2).ok());
  WriteEpoch(*sinks[0], 0, 3);
  WriteEpoch(*sinks[1], 1, 2);
  ASSERT_TRUE(sinks[1]->PreCommit(2).ok());
  ASSERT_TRUE(sinks[1]->Commit(2).ok());
  // (Not read here: epoch 3 of subtask 0 now sits in the open transaction, which holds back
  // read_committed readers until it ends; AheadRecordsAreNotPartOfTheEarlierCommit checks it.)
  WriteEpoch(*sinks[1], 1, 3);
  ASSERT_TRUE(sinks[0]->PreCommit(3).ok());
  ASSERT_TRUE(sinks[1]->PreCommit(3).ok());
  // Epoch 4 is written and pre-committed but never committed: the group goes away.
  FullEpoch(sinks, 4);
  ASSERT_TRUE(sinks[0]->Commit(3).ok());
  EXPECT_EQ(Read(Isolation::kReadCommitted), Expected(3));
  auto progress = ReadCommittedProgress(kafka_.brokers(), "__flow_progress_" + job_, job_, 20000);
  ASSERT_TRUE(progress.ok()) << progress.status().ToString();
  EXPECT_EQ(progress->checkpoint_id, 3);
  EXPECT_EQ(progress->participants, kParallelism);
  sinks.clear();
  group.reset();

  // The next incarnation: init_transactions aborts epoch 4's transaction.
  auto next = StartGroup();
  ASSERT_NE(next, nullptr);
  EXPECT_EQ(next->last_committed(), 3);
  EXPECT_EQ(Read(Isolation::kReadCommitted), Expected(3));
}

TEST_F(KafkaExactlyOnceSinkTest, AheadRecordsAreNotPartOfTheEarlierCommit) {
  {
    auto group = StartGroup();
    ASSERT_NE(group, nullptr);
    auto sinks = Sinks(group.get(), 0);
    WriteEpoch(*sinks[0], 0, 1);
    ASSERT_TRUE(sinks[0]->PreCommit(1).ok());
    WriteEpoch(*sinks[0], 0, 2);  // held: checkpoint 1 is not committed yet
    WriteEpoch(*sinks[1], 1, 1);
    ASSERT_TRUE(sinks[1]->PreCommit(1).ok());
    ASSERT_TRUE(sinks[0]->Commit(1).ok());
    WriteEpoch(*sinks[1], 1, 2);
    // Crash: checkpoint 2 never completes.
  }
  auto group = StartGroup();
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(group->last_committed(), 1);
  EXPECT_EQ(Read(Isolation::kReadCommitted), Expected(1)) << "epoch 2 leaked into the commit of 1";
}

// Two subtask threads at their own pace; a checkpoint is committed (by whichever thread sees it
// first) once both pre-committed it, like "complete" after all acks. The uncommitted last epoch
// is dropped by a restart.
TEST_F(KafkaExactlyOnceSinkTest, ConcurrentSubtasksCommitEachEpochExactlyOnce) {
  constexpr int64_t kEpochs = 12;
  {
    auto group = StartGroup();
    ASSERT_NE(group, nullptr);
    auto sinks = Sinks(group.get(), 0);
    std::array<std::atomic<int>, kEpochs + 2> precommitted{};
    std::atomic<bool> failed{false};
    std::mutex error_mu;
    std::string error;
    auto run = [&](uint32_t s) {
      for (int64_t e = 1; e <= kEpochs + 1 && !failed; ++e) {
        for (int i = 0; i < kPer; ++i) {
          Status st = sinks[s]->Write("", Value(s, e, i), kNoTimestamp);
          if (!st.ok()) {
            std::lock_guard<std::mutex> lock(error_mu);
            error = st.ToString();
            failed = true;
          }
        }
        Status st = sinks[s]->PreCommit(e);
        if (st.ok() && ++precommitted[e] == static_cast<int>(kParallelism) && e <= kEpochs) {
          st = sinks[s]->Commit(e);
        }
        if (!st.ok()) {
          std::lock_guard<std::mutex> lock(error_mu);
          error = st.ToString();
          failed = true;
        }
      }
    };
    std::thread t0(run, 0), t1(run, 1);
    t0.join();
    t1.join();
    ASSERT_FALSE(failed) << error;
    EXPECT_EQ(group->last_committed(), kEpochs);
  }
  auto group = StartGroup();
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(group->last_committed(), kEpochs);
  EXPECT_EQ(Read(Isolation::kReadCommitted), Expected(kEpochs));
}

TEST_F(KafkaExactlyOnceSinkTest, CorruptProgressRecordIsCorruptionNotACrash) {
  const std::string progress = "__flow_progress_" + job_;
  ASSERT_TRUE(kafka_.CreateTopic(progress, 1, {{"cleanup.policy", "compact"}}).ok());
  ASSERT_TRUE(
      kafka_.Produce(progress, {test::KafkaRecord{0, job_, "not a progress record", -1}}).ok());
  auto read = ReadCommittedProgress(kafka_.brokers(), progress, job_, 20000);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kCorruption) << read.status().ToString();
  auto group = KafkaTransactionGroup::Start(Options(), kParallelism);
  ASSERT_FALSE(group.ok());
  EXPECT_EQ(group.status().code(), StatusCode::kCorruption) << group.status().ToString();
}

TEST_F(KafkaExactlyOnceSinkTest, FreshJobHasNoProgress) {
  auto read = ReadCommittedProgress(kafka_.brokers(), "__flow_progress_" + job_, job_, 20000);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->checkpoint_id, 0);
}

TEST_F(KafkaExactlyOnceSinkTest, CommitOfNCoversAnAbortedEarlierCheckpoint) {
  auto group = StartGroup();
  ASSERT_NE(group, nullptr);
  auto sinks = Sinks(group.get(), 0);
  FullEpoch(sinks, 1);  // checkpoint 1 is aborted: no Commit(1)
  FullEpoch(sinks, 2);
  ASSERT_TRUE(sinks[0]->Commit(2).ok());
  EXPECT_EQ(group->last_committed(), 2);
  EXPECT_EQ(Read(Isolation::kReadCommitted), Expected(2));
}

TEST_F(KafkaExactlyOnceSinkTest, CommitBeforeEveryParticipantPreCommittedIsRefused) {
  auto group = StartGroup();
  ASSERT_NE(group, nullptr);
  auto sinks = Sinks(group.get(), 0);
  WriteEpoch(*sinks[0], 0, 1);
  ASSERT_TRUE(sinks[0]->PreCommit(1).ok());
  EXPECT_EQ(sinks[0]->Commit(1).code(), StatusCode::kInternal);
  EXPECT_EQ(sinks[0]->PreCommit(1).code(), StatusCode::kInternal) << "ids must grow";
}

TEST_F(KafkaExactlyOnceSinkTest, AbortedTransactionIsNeverVisible) {
  auto group = StartGroup();
  ASSERT_NE(group, nullptr);
  auto sinks = Sinks(group.get(), 0);
  FullEpoch(sinks, 1);
  ASSERT_TRUE(sinks[0]->Commit(1).ok());
  FullEpoch(sinks, 2);
  ASSERT_TRUE(sinks[0]->Abort(2).ok());
  EXPECT_EQ(sinks[1]->Commit(2).code(), StatusCode::kAborted) << "the group must stay failed";
  EXPECT_EQ(Read(Isolation::kReadCommitted), Expected(1));
}

TEST_F(KafkaExactlyOnceSinkTest, SecondInstanceFencesTheFirst) {
  auto first = StartGroup();
  ASSERT_NE(first, nullptr);
  auto sinks = Sinks(first.get(), 0);
  FullEpoch(sinks, 1);
  ASSERT_TRUE(sinks[0]->Commit(1).ok());
  WriteEpoch(*sinks[0], 0, 2);
  WriteEpoch(*sinks[1], 1, 2);

  auto second = StartGroup();
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->last_committed(), 1);

  Status st;
  for (auto& sink : sinks) {
    st = sink->PreCommit(2);
    if (!st.ok()) break;
  }
  if (st.ok()) st = sinks[0]->Commit(2);
  EXPECT_EQ(st.code(), StatusCode::kFenced) << st.ToString();
  EXPECT_NE(st.message().find("another instance of job `" + job_ + "` took over"),
            std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("flow-" + job_), std::string::npos) << st.message();
  EXPECT_EQ(sinks[1]->Write("", "late", kNoTimestamp).code(), StatusCode::kFenced)
      << "fencing is sticky";
  EXPECT_EQ(Read(Isolation::kReadCommitted), Expected(1));
}

// A second producer's init_transactions that lands while the first's EndTxn(commit) is in flight
// can make the coordinator answer the commit with UNKNOWN_SERVER_ERROR (Kafka 4.1: "Preparing
// transaction state transition to PREPARE_COMMIT while it already a pending state
// PREPARE_EPOCH_FENCE") and only the abort that follows with the fencing. The first must then
// stop as fenced (a restart would fence the second in turn), not restart. The window is too
// narrow to hit on demand, so the producer runs on librdkafka's mock cluster, which answers the
// two EndTxn requests so; the group's admin steps still go to the real broker.
class FencedInTheAbortTest : public KafkaExactlyOnceSinkTest {
 protected:
  // Commits checkpoint 1 with the group's producer on the mock cluster, whose EndTxn answers are
  // UNKNOWN for the commit and PRODUCER_FENCED for the abort. Returns the commit's status, and
  // in *late that of a write after it.
  Status CommitFencedOnlyInTheAbort(KafkaTransactionOptions options, Status* late) {
    options.properties["test.mock.num.brokers"] = "1";
    options.operation_timeout_ms = 3000;  // the mock has no DescribeConfigs: the sinks' retention
                                          // lookups wait this long, then go on without it
    auto group = KafkaTransactionGroup::Start(options, kParallelism);
    if (!group.ok()) return group.status();
    auto sinks = Sinks(group->get(), 0);
    FullEpoch(sinks, 1);
    (*group)->SetCommitHookForTest([&](int64_t) {
      rd_kafka_mock_cluster_t* mock = rd_kafka_handle_mock_cluster((*group)->producer_for_test());
      ASSERT_NE(mock, nullptr);
      constexpr int16_t kEndTxnApiKey = 26;  // the Kafka protocol's; librdkafka's name is private
      rd_kafka_mock_push_request_errors(mock, kEndTxnApiKey, 2, RD_KAFKA_RESP_ERR_UNKNOWN,
                                        RD_KAFKA_RESP_ERR_PRODUCER_FENCED);
    });
    Status st = sinks[0]->Commit(1);
    *late = sinks[1]->Write("", "late", kNoTimestamp);
    return st;
  }
};

TEST_F(FencedInTheAbortTest, AJobStopsAsFenced) {
  Status late;
  Status st = CommitFencedOnlyInTheAbort(Options(), &late);
  EXPECT_EQ(st.code(), StatusCode::kFenced) << st.ToString();
  EXPECT_NE(st.message().find("another instance of job `" + job_ + "` took over"),
            std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("Unknown broker error"), std::string::npos)
      << "the commit's own error is kept: " << st.message();
  // Refused at once, not bounded by the retry timeout: no "gave up after" in the message.
  EXPECT_EQ(st.message().find("gave up after"), std::string::npos) << st.message();
  EXPECT_EQ(late.code(), StatusCode::kFenced) << "fencing is sticky: " << late.ToString();
}

// An instance with no takeover marker in its progress topic: a second process under its name
// (exit code 3), as in the scale-out test that found the race.
TEST_F(FencedInTheAbortTest, AnInstanceWithoutATakeoverMarkerStopsAsATwin) {
  KafkaTransactionOptions options = Options();
  options.instance = "x";
  Status late;
  Status st = CommitFencedOnlyInTheAbort(options, &late);
  EXPECT_EQ(st.code(), StatusCode::kFenced) << st.ToString();
  EXPECT_NE(st.message().find("needs its own --instance name"), std::string::npos) << st.message();
}

TEST_F(KafkaExactlyOnceSinkTest, RecoverRefusesAnyCheckpointButTheCommittedOne) {
  auto group = StartGroup();
  ASSERT_NE(group, nullptr);
  {
    auto sinks = Sinks(group.get(), 0);
    FullEpoch(sinks, 1);
    ASSERT_TRUE(sinks[0]->Commit(1).ok());
  }
  group.reset();
  group = StartGroup();
  ASSERT_NE(group, nullptr);
  KafkaExactlyOnceSinkOptions o;
  o.topic = topic_;
  KafkaExactlyOnceSink sink(group.get(), 0, o);
  ASSERT_TRUE(sink.Open(0, kParallelism).ok());
  Status st = sink.Recover(2);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("restore exactly chk-1"), std::string::npos) << st.message();
  EXPECT_EQ(sink.Recover(0).code(), StatusCode::kInvalidArgument);
}

TEST_F(KafkaExactlyOnceSinkTest, StartValidatesTheTimeoutAgainstTheBroker) {
  KafkaTransactionOptions o = Options();
  o.transaction_timeout_ms = 900001;  // the test broker's maximum is 900000
  auto group = KafkaTransactionGroup::Start(o, 1);
  ASSERT_FALSE(group.ok());
  EXPECT_EQ(group.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(group.status().message().find("transaction.max.timeout.ms 900000"), std::string::npos)
      << group.status().message();
  o.transaction_timeout_ms = 15000;  // shorter than 1 s interval + 20 s checkpoint timeout
  group = KafkaTransactionGroup::Start(o, 1);
  ASSERT_FALSE(group.ok());
  EXPECT_NE(group.status().message().find("too short"), std::string::npos)
      << group.status().message();
  o.transaction_timeout_ms = 0;  // default: the broker's maximum
  group = KafkaTransactionGroup::Start(o, 1);
  ASSERT_TRUE(group.ok()) << group.status().ToString();
  EXPECT_EQ((*group)->transaction_timeout_ms(), 900000);
}

TEST_F(KafkaExactlyOnceSinkTest, UnreachableBrokerIsUnavailableWithinTheBound) {
  KafkaTransactionOptions o = Options();
  o.brokers = "127.0.0.1:1";
  o.operation_timeout_ms = 2000;
  o.retry_timeout_ms = 2000;
  auto group = KafkaTransactionGroup::Start(o, 1);
  ASSERT_FALSE(group.ok());
  EXPECT_EQ(group.status().code(), StatusCode::kUnavailable) << group.status().ToString();
  EXPECT_NE(group.status().message().find("127.0.0.1:1"), std::string::npos)
      << group.status().message();
}

// ---- SIGKILL during a commit. The child commits checkpoints 1..3; `chk-N` stands for the
// checkpoint metadata, made durable (here: recorded) before the commit of N starts.
class KafkaKillTest : public KafkaExactlyOnceSinkTest,
                      public ::testing::WithParamInterface<std::pair<const char*, int64_t>> {};

TEST_P(KafkaKillTest, RecoveryRestoresTheCommittedCheckpointAndReplaysWithoutDuplicates) {
  const auto [fault, expected_committed] = GetParam();
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (!ConfigureFaults(fault).ok()) ::_exit(2);
    auto group = KafkaTransactionGroup::Start(Options(), kParallelism);
    if (!group.ok()) ::_exit(3);
    auto sinks = Sinks(group->get(), 0);
    for (int64_t e = 1; e <= 3; ++e) {
      FullEpoch(sinks, e);
      if (!sinks[0]->Commit(e).ok()) ::_exit(4);
    }
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
      << "child did not die at " << fault << " (status " << status << ")";

  // Recovery decision: the newest durable checkpoint may be newer than Kafka's committed one
  // (killed after its metadata, before its commit); the job restores the committed one.
  auto group = StartGroup();
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(group->last_committed(), expected_committed);
  EXPECT_EQ(Read(Isolation::kReadCommitted), Expected(expected_committed))
      << "both subtasks' output of a checkpoint is committed together or not at all";
  if (std::string(fault).rfind("during-commit", 0) == 0) {
    // Killed with the next epoch flushed into the log: it is there, only aborted.
    std::vector<std::string> all = Read(Isolation::kReadUncommitted);
    for (const std::string& v : Expected(expected_committed + 1, expected_committed + 1)) {
      EXPECT_TRUE(std::binary_search(all.begin(), all.end(), v)) << v << " never reached the log";
    }
  }
  auto sinks = Sinks(group.get(), group->last_committed());
  // Deterministic replay from the restored checkpoint: every later epoch once.
  for (int64_t e = expected_committed + 1; e <= 3; ++e) {
    FullEpoch(sinks, e);
    ASSERT_TRUE(sinks[1]->Commit(e).ok());
  }
  EXPECT_EQ(Read(Isolation::kReadCommitted), Expected(3));
}

INSTANTIATE_TEST_SUITE_P(
    FaultPoints, KafkaKillTest,
    ::testing::Values(std::make_pair("after-precommit:3", int64_t{1}),  // epoch 2, subtask 0
                      std::make_pair("during-commit:2", int64_t{1}),
                      std::make_pair("during-commit:3", int64_t{2}),
                      std::make_pair("after-commit-before-cleanup:2", int64_t{2})),
    [](const auto& info) {
      std::string name = info.param.first;
      for (char& c : name) {
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      }
      return name;
    });

// ---- One job with a Kafka sink and a file sink: Kafka (not resumable) commits first, then the
// files; recovery restores Kafka's committed checkpoint and the file sink's Recover completes or
// discards its pending files accordingly. Both outputs must then hold the same epochs.
namespace fs = std::filesystem;

std::vector<std::string> VisibleFileLines(const std::string& dir) {
  std::vector<std::string> lines;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line)) lines.push_back(line);
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

class MixedSinksKillTest : public KafkaExactlyOnceSinkTest,
                           public ::testing::WithParamInterface<std::pair<const char*, int64_t>> {
 protected:
  void SetUp() override {
    KafkaExactlyOnceSinkTest::SetUp();
    std::string tmpl = "/tmp/flow-txn-mixed-XXXXXX";
    char* made = ::mkdtemp(tmpl.data());
    ASSERT_NE(made, nullptr);
    dir_ = made;
    fs::create_directories(dir_ + "/out");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::vector<std::unique_ptr<ExactlyOnceFileSink>> FileSinks(int64_t restored) {
    std::vector<std::unique_ptr<ExactlyOnceFileSink>> sinks;
    for (uint32_t s = 0; s < kParallelism; ++s) {
      ExactlyOnceFileSinkOptions o;
      o.directory = dir_ + "/out";
      auto sink = std::make_unique<ExactlyOnceFileSink>(o);
      EXPECT_TRUE(sink->Open(s, kParallelism).ok());
      Status st = sink->Recover(restored);
      EXPECT_TRUE(st.ok()) << st.ToString();
      EXPECT_TRUE(sink->BeginTransaction().ok());
      sinks.push_back(std::move(sink));
    }
    return sinks;
  }

  // Runs epochs from..3 on both sinks; `chk-e` (the metadata) is written before any commit of e.
  void RunEpochs(KafkaTransactionGroup* group, int64_t restored) {
    auto kafka = Sinks(group, restored);
    auto files = FileSinks(restored);
    for (int64_t e = restored + 1; e <= 3; ++e) {
      for (uint32_t s = 0; s < kParallelism; ++s) {
        WriteEpoch(*kafka[s], s, e);
        WriteEpoch(*files[s], s, e);
        ASSERT_TRUE(kafka[s]->PreCommit(e).ok());
        ASSERT_TRUE(files[s]->PreCommit(e).ok());
        ASSERT_TRUE(files[s]->BeginTransaction().ok());
      }
      { std::ofstream f(dir_ + "/chk.tmp", std::ios::binary); }
      fs::rename(dir_ + "/chk.tmp", dir_ + "/chk-" + std::to_string(e));
      ASSERT_TRUE(kafka[0]->Commit(e).ok());  // the non-resumable participant first
      for (auto& f : files) ASSERT_TRUE(f->Commit(e).ok());
    }
  }

  std::string dir_;
};

TEST_P(MixedSinksKillTest, BothOutputsHoldExactlyTheKafkaCommittedEpochs) {
  const auto [fault, expected_committed] = GetParam();
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (!ConfigureFaults(fault).ok()) ::_exit(2);
    auto group = KafkaTransactionGroup::Start(Options(), kParallelism);
    if (!group.ok()) ::_exit(3);
    RunEpochs(group->get(), 0);
    ::_exit(::testing::Test::HasFailure() ? 4 : 0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
      << "child did not die at " << fault << " (status " << status << ")";

  auto group = StartGroup();
  ASSERT_NE(group, nullptr);
  int64_t restored = group->last_committed();
  ASSERT_EQ(restored, expected_committed);
  // With Kafka killed during the commit of 2, checkpoint 2 is durable but not committed: it
  // must not be restored, although it is the newest.
  EXPECT_EQ(fs::exists(dir_ + "/chk-2"), true);
  {
    // Recovery alone: both outputs show exactly the committed epochs.
    auto files = FileSinks(restored);
    EXPECT_EQ(VisibleFileLines(dir_ + "/out"), Expected(restored));
  }
  EXPECT_EQ(Read(Isolation::kReadCommitted), Expected(restored));
  RunEpochs(group.get(), restored);
  EXPECT_EQ(VisibleFileLines(dir_ + "/out"), Expected(3));
  EXPECT_EQ(Read(Isolation::kReadCommitted), Expected(3));
}

// Per epoch: after-precommit hits 4 times, during-commit and after-commit-before-cleanup 3 times
// each (Kafka first, then the two file subtasks).
INSTANTIATE_TEST_SUITE_P(
    FaultPoints, MixedSinksKillTest,
    ::testing::Values(std::make_pair("during-commit:4", int64_t{1}),  // Kafka commit of 2
                      std::make_pair("during-commit:5", int64_t{2}),  // file commit of 2
                      std::make_pair("after-commit-before-cleanup:4", int64_t{2})),
    [](const auto& info) {
      std::string name = info.param.first;
      for (char& c : name) {
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      }
      return name;
    });

}  // namespace
}  // namespace flow::rt
