// KafkaTransactionGroup::WriteBatch against the real broker (label `kafka`): a batch keeps its
// order within each partition and partitions by key like Kafka's Java client (the reference is
// the test helpers' murmur2, written from the specification); a batch of a participant ahead of
// the open transaction is not part of its commit, and neither is one written while the broker
// commits (the writer is not blocked meanwhile; the next checkpoint commits it); a batch before
// Recover writes nothing; a batch refused for lack of memory for held records is taken in part,
// and the rest later keeps the order; a record the producer refuses in the middle of a batch
// aborts the transaction, so none of that batch (nor its checkpoint's earlier records) ever
// becomes visible.

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>

#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "flow/runtime/common/time.h"
#include "flow/runtime/txn/kafka_exactly_once_sink.h"
#include "kafka/kafka_test_env.h"
#include "txn_test_options.h"

namespace flow::rt {
namespace {

using test::Isolation;
using test::JavaPartition;
using test::KafkaTestEnv;
using test::Millis;
using test::UniqueName;

constexpr int32_t kPartitions = 4;

class KafkaTxnWriteBatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Status reachable = kafka_.CheckReachable(Millis(20000));
    ASSERT_TRUE(reachable.ok()) << reachable.ToString();
    auto topic = kafka_.CreateUniqueTopic("eo-batch", kPartitions);
    ASSERT_TRUE(topic.ok()) << topic.status().ToString();
    topic_ = *topic;
    job_ = UniqueName("eobatch");
  }

  std::unique_ptr<KafkaTransactionGroup> StartGroup(
      uint32_t participants, std::map<std::string, std::string> properties = {},
      size_t max_buffered_bytes = size_t{256} << 20) {
    KafkaTransactionOptions o = test_support::TestTransactionOptions(kafka_.brokers(), job_);
    o.properties = std::move(properties);
    o.max_buffered_bytes = max_buffered_bytes;
    auto group = KafkaTransactionGroup::Start(std::move(o), participants);
    EXPECT_TRUE(group.ok()) << group.status().ToString();
    return group.ok() ? std::move(group).value() : nullptr;
  }

  std::unique_ptr<KafkaExactlyOnceSink> Sink(KafkaTransactionGroup* group, uint32_t participant,
                                             KafkaPartitioner partitioner, int32_t partition = 0) {
    KafkaExactlyOnceSinkOptions o;
    o.topic = topic_;
    o.partitioner = partitioner;
    o.partition = partition;
    auto sink = std::make_unique<KafkaExactlyOnceSink>(group, participant, o);
    EXPECT_TRUE(sink->Open(participant, 1).ok());
    EXPECT_TRUE(sink->Recover(0).ok());
    EXPECT_TRUE(sink->BeginTransaction().ok());
    return sink;
  }

  // Keys and payloads stay alive in the test while the views are used.
  struct Batch {
    std::vector<std::string> keys, payloads;
    std::vector<TxnRecord> records;
  };
  static Batch MakeBatch(const std::string& prefix, int n, int key_mod) {
    Batch b;
    for (int i = 0; i < n; ++i) {
      b.keys.push_back(key_mod > 0 ? "k" + std::to_string(i % key_mod) : "");
      b.payloads.push_back(prefix + std::to_string(i));
    }
    for (int i = 0; i < n; ++i)
      b.records.push_back(TxnRecord{b.keys[i], b.payloads[i], kNoTimestamp});
    return b;
  }

  // Per partition, the values in log order.
  std::map<int32_t, std::vector<std::string>> ReadByPartition(Isolation isolation) {
    auto records = kafka_.ConsumeToEnd(topic_, isolation, Millis(40000));
    EXPECT_TRUE(records.ok()) << records.status().ToString();
    std::map<int32_t, std::vector<std::string>> out;
    if (records.ok()) {
      for (const auto& r : *records) out[r.partition].push_back(r.value);
    }
    return out;
  }

  KafkaTestEnv kafka_;
  std::string topic_;
  std::string job_;
};

TEST_F(KafkaTxnWriteBatchTest, BatchKeepsOrderPerPartitionAndPartitionsByKey) {
  auto group = StartGroup(1);
  ASSERT_NE(group, nullptr);
  auto sink = Sink(group.get(), 0, KafkaPartitioner::kKeyHash);
  Batch first = MakeBatch("a", 300, 7);
  Batch second = MakeBatch("b", 200, 5);
  size_t written = 0;
  ASSERT_TRUE(sink->WriteBatch(first.records, &written).ok());
  EXPECT_EQ(written, first.records.size());
  ASSERT_TRUE(sink->WriteBatch(second.records, &written).ok());
  EXPECT_EQ(written, second.records.size());
  ASSERT_TRUE(sink->PreCommit(1).ok());
  ASSERT_TRUE(sink->Commit(1).ok());
  // Reference: each record in the partition murmur2 picks for its key, in writing order.
  std::map<int32_t, std::vector<std::string>> expected;
  for (const Batch* b : {&first, &second}) {
    for (size_t i = 0; i < b->keys.size(); ++i) {
      expected[JavaPartition(b->keys[i], kPartitions)].push_back(b->payloads[i]);
    }
  }
  EXPECT_EQ(ReadByPartition(Isolation::kReadCommitted), expected);
}

TEST_F(KafkaTxnWriteBatchTest, BatchOfAParticipantAheadOfTheTransactionIsNotPartOfItsCommit) {
  Batch epoch1 = MakeBatch("e1-", 50, 0);
  Batch epoch2 = MakeBatch("e2-", 60, 0);
  {
    auto group = StartGroup(2);
    ASSERT_NE(group, nullptr);
    auto s0 = Sink(group.get(), 0, KafkaPartitioner::kExplicit, 0);
    auto s1 = Sink(group.get(), 1, KafkaPartitioner::kExplicit, 1);
    size_t written = 0;
    ASSERT_TRUE(s0->WriteBatch(epoch1.records, &written).ok());
    ASSERT_TRUE(s0->PreCommit(1).ok());
    // Participant 0 passed barrier 1, which is not committed: this batch belongs to epoch 2.
    ASSERT_TRUE(s0->WriteBatch(epoch2.records, &written).ok());
    EXPECT_EQ(written, epoch2.records.size());
    ASSERT_TRUE(s1->PreCommit(1).ok());
    ASSERT_TRUE(group->Commit(1).ok());
    // Crash: checkpoint 2 never completes, so epoch 2 is aborted with its transaction.
  }
  std::map<int32_t, std::vector<std::string>> expected = {{0, epoch1.payloads}};
  EXPECT_EQ(ReadByPartition(Isolation::kReadCommitted), expected)
      << "epoch 2 leaked into the commit of 1";
}

TEST_F(KafkaTxnWriteBatchTest, WritersGoOnWhileTheBrokerCommitsAndTheirBatchWaitsForTheNextCommit) {
  Batch epoch1 = MakeBatch("c1-", 40, 0);
  Batch during = MakeBatch("during-", 70, 0);
  Status during_status = Status::Internal("not run");
  size_t during_written = 0;
  bool finished_during_commit = false;
  std::future<void> writer;
  {
    auto group = StartGroup(1);
    ASSERT_NE(group, nullptr);
    auto sink = Sink(group.get(), 0, KafkaPartitioner::kExplicit, 3);
    // While checkpoint 1 is being committed, a writer on another thread writes a batch. It must
    // finish before the commit does (a commit that held the lock would block it until then).
    // (Waited for with a bound, so a blocked writer fails the test instead of hanging it.)
    group->SetCommitHookForTest([&](int64_t) {
      writer = std::async(std::launch::async, [&] {
        during_status = sink->WriteBatch(during.records, &during_written);
      });
      finished_during_commit =
          writer.wait_for(std::chrono::seconds(30)) == std::future_status::ready;
    });
    size_t written = 0;
    ASSERT_TRUE(sink->WriteBatch(epoch1.records, &written).ok());
    ASSERT_TRUE(sink->PreCommit(1).ok());
    ASSERT_TRUE(sink->Commit(1).ok());
    writer.wait();
    // Crash before checkpoint 2: the batch written during the commit of 1 is never committed.
  }
  EXPECT_TRUE(finished_during_commit) << "the writer was blocked by the commit";
  EXPECT_TRUE(during_status.ok()) << during_status.ToString();
  EXPECT_EQ(during_written, during.records.size());
  std::map<int32_t, std::vector<std::string>> expected = {{3, epoch1.payloads}};
  EXPECT_EQ(ReadByPartition(Isolation::kReadCommitted), expected)
      << "a batch written during the commit leaked into it";
}

TEST_F(KafkaTxnWriteBatchTest, BatchWrittenDuringACommitIsCommittedWithTheNextCheckpoint) {
  Batch epoch1 = MakeBatch("c1-", 40, 0);
  Batch during = MakeBatch("during-", 70, 0);
  auto group = StartGroup(1);
  ASSERT_NE(group, nullptr);
  auto sink = Sink(group.get(), 0, KafkaPartitioner::kExplicit, 1);
  Status during_status = Status::Internal("not run");
  size_t during_written = 0;
  std::future<void> writer;
  group->SetCommitHookForTest([&](int64_t id) {
    if (id != 1) return;
    writer = std::async(std::launch::async,
                        [&] { during_status = sink->WriteBatch(during.records, &during_written); });
    (void)writer.wait_for(std::chrono::seconds(30));
  });
  size_t written = 0;
  ASSERT_TRUE(sink->WriteBatch(epoch1.records, &written).ok());
  ASSERT_TRUE(sink->PreCommit(1).ok());
  ASSERT_TRUE(sink->Commit(1).ok());
  writer.wait();
  ASSERT_TRUE(during_status.ok()) << during_status.ToString();
  ASSERT_TRUE(sink->PreCommit(2).ok());
  ASSERT_TRUE(sink->Commit(2).ok());
  std::vector<std::string> in_order = epoch1.payloads;
  in_order.insert(in_order.end(), during.payloads.begin(), during.payloads.end());
  std::map<int32_t, std::vector<std::string>> expected = {{1, in_order}};
  EXPECT_EQ(ReadByPartition(Isolation::kReadCommitted), expected);
}

TEST_F(KafkaTxnWriteBatchTest, BatchRefusedForLackOfMemoryIsTakenInPartAndTheRestLaterInOrder) {
  // Room for a few held records only (each costs its bytes plus bookkeeping).
  auto group = StartGroup(1, {}, 4000);
  ASSERT_NE(group, nullptr);
  auto sink = Sink(group.get(), 0, KafkaPartitioner::kExplicit, 2);
  Batch epoch1 = MakeBatch("p1-", 10, 0);
  Batch epoch2 = MakeBatch("p2-", 60, 0);
  for (std::string& p : epoch2.payloads) p.resize(100, '.');
  for (size_t i = 0; i < epoch2.payloads.size(); ++i)
    epoch2.records[i].payload = epoch2.payloads[i];
  size_t written = 0;
  ASSERT_TRUE(sink->WriteBatch(epoch1.records, &written).ok());
  ASSERT_TRUE(sink->PreCommit(1).ok());
  // Ahead of the open transaction: held in memory until it fills up.
  Status s = sink->WriteBatch(epoch2.records, &written);
  ASSERT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  ASSERT_GT(written, 0u);
  ASSERT_LT(written, epoch2.records.size());
  const size_t taken = written;
  ASSERT_TRUE(group->Commit(1).ok());
  // Level with the transaction again: the rest goes straight in, after the held part.
  ASSERT_TRUE(
      sink->WriteBatch(std::span<const TxnRecord>(epoch2.records).subspan(taken), &written).ok());
  EXPECT_EQ(written, epoch2.records.size() - taken);
  ASSERT_TRUE(sink->PreCommit(2).ok());
  ASSERT_TRUE(sink->Commit(2).ok());
  std::vector<std::string> in_order = epoch1.payloads;
  in_order.insert(in_order.end(), epoch2.payloads.begin(), epoch2.payloads.end());
  std::map<int32_t, std::vector<std::string>> expected = {{2, in_order}};
  EXPECT_EQ(ReadByPartition(Isolation::kReadCommitted), expected);
}

TEST_F(KafkaTxnWriteBatchTest, RecordRefusedInTheMiddleOfABatchAbortsTheTransaction) {
  // The producer refuses records larger than message.max.bytes before sending anything.
  auto group = StartGroup(1, {{"message.max.bytes", "4000"}});
  ASSERT_NE(group, nullptr);
  auto sink = Sink(group.get(), 0, KafkaPartitioner::kExplicit, 2);
  Batch committed = MakeBatch("ok", 20, 0);
  size_t written = 0;
  ASSERT_TRUE(sink->WriteBatch(committed.records, &written).ok());
  ASSERT_TRUE(sink->PreCommit(1).ok());
  ASSERT_TRUE(sink->Commit(1).ok());

  Batch bad = MakeBatch("lost", 30, 0);
  bad.payloads[12] = std::string(10000, 'x');
  bad.records[12].payload = bad.payloads[12];
  Status s = sink->WriteBatch(bad.records, &written);
  EXPECT_EQ(s.code(), StatusCode::kAborted) << s.ToString();
  EXPECT_NE(s.message().find("record 12 of a batch of 30"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("aborted"), std::string::npos) << s.ToString();
  EXPECT_EQ(written, 12u);
  // The group stays failed: no later write or commit can publish the incomplete transaction.
  Batch after = MakeBatch("after", 3, 0);
  EXPECT_EQ(sink->WriteBatch(after.records, &written).code(), StatusCode::kAborted);
  EXPECT_EQ(written, 0u);
  EXPECT_EQ(sink->PreCommit(2).code(), StatusCode::kAborted);
  EXPECT_EQ(group->Commit(2).code(), StatusCode::kAborted);
  group.reset();

  std::map<int32_t, std::vector<std::string>> expected = {{2, committed.payloads}};
  EXPECT_EQ(ReadByPartition(Isolation::kReadCommitted), expected);
  auto progress = ReadCommittedProgress(kafka_.brokers(), "__flow_progress_" + job_, job_, 20000);
  ASSERT_TRUE(progress.ok()) << progress.status().ToString();
  EXPECT_EQ(progress->checkpoint_id, 1);
}

TEST_F(KafkaTxnWriteBatchTest, BatchBeforeRecoverIsRefusedAndWritesNothing) {
  auto group = StartGroup(1);
  ASSERT_NE(group, nullptr);
  KafkaExactlyOnceSinkOptions o;
  o.topic = topic_;
  KafkaExactlyOnceSink sink(group.get(), 0, o);
  ASSERT_TRUE(sink.Open(0, 1).ok());
  Batch b = MakeBatch("early", 5, 3);
  size_t written = 7;
  Status s = sink.WriteBatch(b.records, &written);
  EXPECT_EQ(s.code(), StatusCode::kInternal) << s.ToString();
  EXPECT_EQ(written, 0u);
  ASSERT_TRUE(sink.Recover(0).ok());
  ASSERT_TRUE(sink.PreCommit(1).ok());
  ASSERT_TRUE(sink.Commit(1).ok());
  EXPECT_TRUE(ReadByPartition(Isolation::kReadUncommitted).empty());
}

// The exactly-once sink says once that records stamped past the topic's retention (7 days by
// default) are deleted by the broker at its next check, committed or not (the at-least-once sink's
// test covers the topic settings that keep them).
TEST_F(KafkaTxnWriteBatchTest, RecordsStampedPastTheTopicsRetentionAreReportedOnce) {
  auto group = StartGroup(1);
  ASSERT_NE(group, nullptr);
  const TimestampMs now = WallNowMs();
  const TimestampMs old = now - 8LL * 24 * 3600 * 1000;
  ::testing::internal::CaptureStderr();
  auto sink = Sink(group.get(), 0, KafkaPartitioner::kKeyHash);
  ASSERT_TRUE(sink->Write("k", "recent", now).ok());
  ASSERT_TRUE(sink->Write("k", "old", old).ok());
  std::vector<TxnRecord> batch = {{"k", "old again", old}, {"k", "recent again", now}};
  size_t written = 0;
  ASSERT_TRUE(sink->WriteBatch(batch, &written).ok());
  ASSERT_TRUE(sink->PreCommit(1).ok());
  ASSERT_TRUE(sink->Commit(1).ok());
  const std::string said = ::testing::internal::GetCapturedStderr();
  const std::string warning = "stamped past the output topic's retention";
  const size_t first = said.find(warning);
  ASSERT_NE(first, std::string::npos) << said;
  EXPECT_EQ(said.find(warning, first + 1), std::string::npos) << said;
  EXPECT_NE(said.find(topic_), std::string::npos) << said;
  EXPECT_NE(said.find(FormatTimestamp(old)), std::string::npos) << said;
}

// A record stamped far ahead of the broker's clock (an event time in the future) is refused by the
// broker, which fails the open transaction; librdkafka then answers the next produce call with
// "Erroneous state" only. The error names the refused record's topic and partition, why, and the
// broker settings that bound its stamp.
TEST_F(KafkaTxnWriteBatchTest, ARecordStampedFarAheadNamesTheBrokersRefusal) {
  auto group = StartGroup(1);
  ASSERT_NE(group, nullptr);
  auto sink = Sink(group.get(), 0, KafkaPartitioner::kExplicit, 1);
  const TimestampMs ahead = WallNowMs() + 2LL * 24 * 3600 * 1000;
  ASSERT_TRUE(sink->Write("k", "ahead", ahead).ok());
  Status s;
  for (int i = 0; i < 200 && s.ok(); ++i) {  // until the broker's answer reached the producer
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    s = sink->Write("k", "next", WallNowMs());
  }
  ASSERT_FALSE(s.ok()) << "the broker took a record stamped two days ahead";
  EXPECT_NE(s.message().find("refused a record of `" + topic_ + "` [1]: Broker: Invalid timestamp"),
            std::string::npos)
      << s.ToString();
  EXPECT_NE(s.message().find("log.message.timestamp.before.max.ms and after.max.ms"),
            std::string::npos)
      << s.ToString();
  EXPECT_EQ(s.message().find("Erroneous state"), std::string::npos) << s.ToString();
}

// The answer docs/connectors.md gives for such records: an output topic whose broker stamps each
// record on arrival (message.timestamp.type=LogAppendTime) checks no producer's stamp, so the
// same record commits, and reads back stamped with the broker's clock instead of two days ahead.
TEST_F(KafkaTxnWriteBatchTest, ATopicTheBrokerStampsTakesARecordStampedFarAhead) {
  topic_ = UniqueName("eo-append");
  ASSERT_TRUE(
      kafka_.CreateTopic(topic_, kPartitions, {{"message.timestamp.type", "LogAppendTime"}}).ok());
  auto group = StartGroup(1);
  ASSERT_NE(group, nullptr);
  auto sink = Sink(group.get(), 0, KafkaPartitioner::kExplicit, 1);
  const TimestampMs before = WallNowMs();
  const TimestampMs ahead = before + 2LL * 24 * 3600 * 1000;
  ASSERT_TRUE(sink->Write("k", "ahead", ahead).ok());
  ASSERT_TRUE(sink->PreCommit(1).ok());
  Status committed = sink->Commit(1);
  ASSERT_TRUE(committed.ok()) << committed.ToString();
  auto records = kafka_.ConsumeToEnd(topic_, Isolation::kReadCommitted, Millis(40000));
  ASSERT_TRUE(records.ok()) << records.status().ToString();
  ASSERT_EQ(records->size(), 1u);
  const test::KafkaRecord& r = records->front();
  EXPECT_EQ(r.value, "ahead");
  EXPECT_TRUE(r.log_append_time);
  EXPECT_GE(r.timestamp, before - 60000);  // the broker's clock, not the record's event time
  EXPECT_LT(r.timestamp, before + 3600000);
}

// Another instance's takeover (txn_detail::KafkaTakeover) writes a marker "<wall ms> <taker>"
// under the key "flow-takeover" into the instance's progress topic, then fences its
// transactional id with init_transactions. Done here by hand, with or without the marker.
class KafkaTxnFencedInstanceTest : public KafkaTxnWriteBatchTest,
                                   public ::testing::WithParamInterface<bool> {
 protected:
  void FenceLikeATakeover(const std::string& instance, bool marker) {
    if (marker) {
      ASSERT_TRUE(kafka_
                      .Produce(KafkaProgressTopic(job_, instance),
                               {test::KafkaRecord{.partition = 0,
                                                  .key = "flow-takeover",
                                                  .value = std::to_string(WallNowMs()) + " other",
                                                  .offset = -1,
                                                  .timestamp = -1,
                                                  .log_append_time = false}})
                      .ok());
    }
    auto producer =
        kafka_.MakeProducer({{"transactional.id", KafkaTransactionalId(job_, instance)}});
    ASSERT_TRUE(producer.ok()) << producer.status().ToString();
    rd_kafka_error_t* error = rd_kafka_init_transactions(producer->get(), 30000);
    ASSERT_EQ(error, nullptr) << rd_kafka_error_string(error);
  }
};

// Fenced while it writes or commits, whichever call notices: taken for stopped by another
// instance (a marker), the instance restarts from its last commit (kReassigned); without a marker a
// second process runs under its name (kFenced, exit code 3). Once the writes noticed first and
// said kFenced, so a restarted instance that a late takeover fenced stopped for good.
TEST_P(KafkaTxnFencedInstanceTest, FencingIsJudgedByTheMarkerWhicheverCallNoticesIt) {
  const bool marker = GetParam();
  KafkaTransactionOptions o = test_support::TestTransactionOptions(kafka_.brokers(), job_);
  o.instance = "x";
  auto group = KafkaTransactionGroup::Start(std::move(o), 1);
  ASSERT_TRUE(group.ok()) << group.status().ToString();
  auto sink = Sink(group->get(), 0, KafkaPartitioner::kKeyHash);
  Batch b = MakeBatch("before", 20, 4);
  size_t written = 0;
  ASSERT_TRUE(sink->WriteBatch(b.records, &written).ok());
  FenceLikeATakeover("x", marker);
  Status first;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (int i = 0; first.ok() && std::chrono::steady_clock::now() < deadline; ++i) {
    Batch more = MakeBatch("after" + std::to_string(i) + "-", 50, 4);
    first = sink->WriteBatch(more.records, &written);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (first.ok() && i % 10 == 9) {
      first = sink->PreCommit(i + 1);
      if (first.ok()) first = sink->Commit(i + 1);
      if (first.ok()) first = sink->BeginTransaction();
    }
  }
  EXPECT_EQ(first.code(), marker ? StatusCode::kReassigned : StatusCode::kFenced)
      << first.ToString();
  EXPECT_NE(first.message().find(marker ? "took this one for stopped" : "needs its own --instance"),
            std::string::npos)
      << first.ToString();
  EXPECT_TRUE(ReadByPartition(Isolation::kReadCommitted).empty()) << "nothing was committed";
}

INSTANTIATE_TEST_SUITE_P(MarkerOrNot, KafkaTxnFencedInstanceTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Takeover" : "Twin"; });

}  // namespace
}  // namespace flow::rt
