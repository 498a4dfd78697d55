// The repartition sink against the real broker (label `kafka`): the topic it creates, the
// partition count it insists on, and what a read_committed reader of the topic sees: every
// committed record once, in the partition of its key group, in the order written, with its input
// and event time; a progress report in every partition; nothing of an aborted transaction. The
// reference partition is computed here from the contiguous-range rule, not by the runtime.

#include "flow/runtime/txn/repartition_sink.h"
#include "flow/runtime/txn/txn_sink_spec.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "flow/runtime/shuffle/repartition_frame.h"
#include "flow/runtime/shuffle/repartition_topic.h"
#include "kafka/kafka_test_env.h"
#include "txn_test_options.h"

namespace flow::rt {
namespace {

using test::Isolation;
using test::KafkaTestEnv;
using test::Millis;
using test::UniqueName;

constexpr uint32_t kMaxParallelism = 128;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Partition p of `partitions` holds key groups [ceil(p*M/P), ceil((p+1)*M/P)).
int32_t ReferencePartition(uint64_t hash, int32_t partitions) {
  const uint64_t kg = hash % kMaxParallelism;
  for (int32_t p = 0; p < partitions; ++p) {
    const uint64_t to = (uint64_t(p + 1) * kMaxParallelism + partitions - 1) / partitions;
    if (kg < to) return p;
  }
  return -1;
}

struct Sent {
  uint64_t hash = 0;
  int input = 0;
  TimestampMs event_time = 0;
  std::string record;
};

class RepartitionSinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Status reachable = kafka_.CheckReachable(Millis(20000));
    ASSERT_TRUE(reachable.ok()) << reachable.ToString();
    job_ = UniqueName("rpjob");
    auto topic = shuffle::RepartitionTopicName(job_, "bids.window");
    ASSERT_TRUE(topic.ok()) << topic.status().ToString();
    topic_ = *topic;
  }

  std::unique_ptr<KafkaTransactionGroup> StartGroup(uint32_t participants = 1) {
    KafkaTransactionOptions o = test_support::TestTransactionOptions(kafka_.brokers(), job_);
    auto group = KafkaTransactionGroup::Start(o, participants);
    EXPECT_TRUE(group.ok()) << group.status().ToString();
    return group.ok() ? std::move(group).value() : nullptr;
  }

  RepartitionSinkOptions Options(int32_t partitions) const {
    RepartitionSinkOptions o;
    o.topic = topic_;
    o.partitions = partitions;
    o.max_parallelism = kMaxParallelism;
    return o;
  }

  KafkaTestEnv kafka_;
  std::string job_;
  std::string topic_;
};

TEST_F(RepartitionSinkTest, CommittedRecordsLandOnceInThePartitionOfTheirKeyGroupInOrder) {
  constexpr int32_t kPartitions = 6;
  // Two writers, as a join's two sides: records of each carry its input.
  auto group = StartGroup(2);
  ASSERT_NE(group, nullptr);
  std::vector<std::unique_ptr<RepartitionSink>> sinks;
  for (int input : {0, 1}) {
    RepartitionSinkOptions o = Options(kPartitions);
    o.input = input;
    sinks.push_back(std::make_unique<RepartitionSink>(group.get(), input, o));
    Status st = sinks.back()->Open(input, 2);
    ASSERT_TRUE(st.ok()) << st.ToString();
    ASSERT_TRUE(sinks.back()->Recover(0).ok());
    ASSERT_TRUE(sinks.back()->BeginTransaction().ok());
  }
  auto count = kafka_.PartitionCount(topic_);
  ASSERT_TRUE(count.ok()) << count.status().ToString();
  EXPECT_EQ(*count, kPartitions);

  // Event times 40 days old: the topic must still keep the records (retention counts from the
  // append), which the broker's timestamps show below.
  const int64_t started = NowMs();
  const TimestampMs old = started - int64_t{40} * 24 * 3600 * 1000;
  std::mt19937_64 rng(20261203);
  std::vector<Sent> sent;
  // n records per input, each input's in one WriteBatch.
  auto write = [&](int n, std::vector<Sent>* log, const std::string& prefix) {
    for (int input : {0, 1}) {
      std::vector<std::string> keys, payloads;
      std::vector<TimestampMs> times;
      for (int i = 0; i < n; ++i) {
        Sent s{rng(), input, old + static_cast<int64_t>(rng() % 100000),
               prefix + std::to_string(log->size())};
        if (i == 0) s.event_time = kNoTimestamp;  // a record without event time
        keys.push_back(shuffle::EncodeRepartitionKey(s.hash));
        payloads.push_back(s.record);
        times.push_back(s.event_time);
        log->push_back(std::move(s));
      }
      std::vector<TxnRecord> batch;
      for (int i = 0; i < n; ++i) batch.push_back(TxnRecord{keys[i], payloads[i], times[i]});
      size_t written = 0;
      Status s = sinks[input]->WriteBatch(batch, &written);
      ASSERT_TRUE(s.ok()) << s.ToString();
      EXPECT_EQ(written, static_cast<size_t>(n));
    }
  };
  write(300, &sent, "record-");
  Status st = sinks[0]->Write(shuffle::EncodeRepartitionKey(sent[0].hash), "one-by-one", old);
  ASSERT_TRUE(st.ok()) << st.ToString();
  sent.push_back(Sent{sent[0].hash, 0, old, "one-by-one"});
  shuffle::ProgressReport report;
  report.writer = "a/0";
  report.sources.push_back(shuffle::SourceProgress{"bids.source", 4, {{0, old, false, false}}});
  st = sinks[0]->WriteProgress(report);
  ASSERT_TRUE(st.ok()) << st.ToString();
  for (auto& sink : sinks) ASSERT_TRUE(sink->PreCommit(1).ok());
  st = sinks[0]->Commit(1);
  ASSERT_TRUE(st.ok()) << st.ToString();

  // The next transaction is aborted: none of it may be seen.
  for (auto& sink : sinks) ASSERT_TRUE(sink->BeginTransaction().ok());
  std::vector<Sent> aborted;
  write(100, &aborted, "aborted-");
  ASSERT_TRUE(sinks[0]->Abort(2).ok());
  sinks.clear();
  group.reset();

  auto read = kafka_.ConsumeToEnd(topic_, Isolation::kReadCommitted);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  std::map<std::string, const Sent*> by_record;
  for (const Sent& s : sent) by_record[s.record] = &s;
  std::map<std::string, int> seen;
  std::map<int32_t, int> progress_per_partition;
  std::map<int32_t, int64_t> last_index;  // per partition: order of writing must hold
  for (const test::KafkaRecord& r : *read) {
    EXPECT_TRUE(r.log_append_time) << "partition " << r.partition << " offset " << r.offset;
    EXPECT_GE(r.timestamp, started - 60000);
    const std::string where = "partition " + std::to_string(r.partition);
    auto frame = shuffle::DecodeFrame(r.value, where);
    ASSERT_TRUE(frame.ok()) << frame.status().ToString();
    if (frame->kind == shuffle::FrameKind::kProgress) {
      EXPECT_TRUE(r.key.empty());
      EXPECT_EQ(frame->progress, report);
      ++progress_per_partition[r.partition];
      continue;
    }
    const std::string record(frame->record);
    auto it = by_record.find(record);
    ASSERT_NE(it, by_record.end()) << "not written, or aborted: " << record;
    const Sent& s = *it->second;
    auto hash = shuffle::DecodeRepartitionKey(r.key, where);
    ASSERT_TRUE(hash.ok()) << hash.status().ToString();
    EXPECT_EQ(*hash, s.hash);
    EXPECT_EQ(r.partition, ReferencePartition(s.hash, kPartitions)) << record;
    EXPECT_EQ(frame->input(), s.input) << record;
    EXPECT_EQ(frame->timestamp, s.event_time) << record;
    ++seen[record];
    const int64_t index = record == "one-by-one" ? 1000000 : std::stoll(record.substr(7));
    auto last = last_index.find(r.partition);
    if (last != last_index.end()) {
      EXPECT_LT(last->second, index) << "out of order in " << where;
    }
    last_index[r.partition] = index;
  }
  EXPECT_EQ(seen.size(), sent.size());
  for (const auto& [record, n] : seen) EXPECT_EQ(n, 1) << record;
  EXPECT_EQ(progress_per_partition.size(), static_cast<size_t>(kPartitions));
  for (const auto& [partition, n] : progress_per_partition) EXPECT_EQ(n, 1) << partition;
}

TEST_F(RepartitionSinkTest, ATopicWithAnotherPartitionCountIsRefused) {
  auto group = StartGroup(2);
  ASSERT_NE(group, nullptr);
  RepartitionSink first(group.get(), 0, Options(4));
  Status st = first.Open(0, 2);
  ASSERT_TRUE(st.ok()) << st.ToString();
  // The same count again (another instance, a restart): the topic is used as it is.
  RepartitionSink same(group.get(), 1, Options(4));
  st = same.Open(1, 2);
  EXPECT_TRUE(st.ok()) << st.ToString();

  auto other_group = StartGroup();
  ASSERT_NE(other_group, nullptr);  // fences `group`; Open needs no transaction
  RepartitionSink other(other_group.get(), 0, Options(5));
  st = other.Open(0, 1);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("`" + topic_ + "` has 4 partitions, this job needs 5"),
            std::string::npos)
      << st.message();
  auto count = kafka_.PartitionCount(topic_);
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(*count, 4);

  // A count the key groups cannot fill is refused before the broker is asked.
  for (int32_t bad : {0, 129}) {
    RepartitionSink wrong(other_group.get(), 0, Options(bad));
    st = wrong.Open(0, 1);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST_F(RepartitionSinkTest, AnExistingTopicWithTheRightCountIsUsedAsItIs) {
  ASSERT_TRUE(kafka_.CreateTopic(topic_, 3).ok());
  auto group = StartGroup();
  ASSERT_NE(group, nullptr);
  RepartitionSink sink(group.get(), 0, Options(3));
  Status st = sink.Open(0, 1);
  EXPECT_TRUE(st.ok()) << st.ToString();
}

// The spec the engine drives: the same group as the job's Kafka sinks, a participant that is a
// repartition sink (it creates its topic and routes by key group).
TEST_F(RepartitionSinkTest, TheSpecJoinsTheJobsKafkaGroup) {
  KafkaTxnSinkConfig config;
  config.brokers = kafka_.brokers();
  config.transaction_timeout_ms = 60000;
  config.retry_timeout_ms = 20000;
  TxnSinkSpec spec = RepartitionTxnSink(config, Options(2));
  TxnSinkSpec output = KafkaTxnSink(config.brokers, {.topic = "unused"});
  ASSERT_TRUE(spec.group.has_value());
  EXPECT_EQ(spec.group->key, output.group->key) << "one transaction per job";
  CommitGroupContext ctx;
  ctx.job_id = job_;
  ctx.checkpoints.interval_ms = 1000;
  ctx.checkpoints.timeout_ms = 20000;
  auto group = spec.group->start(ctx, 1);
  ASSERT_TRUE(group.ok()) << group.status().ToString();
  std::unique_ptr<TwoPhaseCommitSink> sink = spec.group->participant(group->get(), 0);
  Status st = sink->Open(0, 1);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_TRUE(sink->Recover(0).ok());
  ASSERT_TRUE(sink->BeginTransaction().ok());
  const uint64_t hash = 0x1234567890abcdefULL;
  ASSERT_TRUE(sink->Write(shuffle::EncodeRepartitionKey(hash), "r", 1).ok());
  ASSERT_TRUE(sink->PreCommit(1).ok());
  st = sink->Commit(1);
  ASSERT_TRUE(st.ok()) << st.ToString();
  auto read = kafka_.ConsumeToEnd(topic_, Isolation::kReadCommitted);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_EQ(read->size(), 1u);
  EXPECT_EQ((*read)[0].partition, ReferencePartition(hash, 2));
}

}  // namespace
}  // namespace flow::rt
