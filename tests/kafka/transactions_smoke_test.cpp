// Proves the broker that scripts/kafka runs supports what the exactly-once Kafka sink relies on:
// committed and aborted transactions, isolation levels, and fencing by transactional.id.
// Needs a broker (label `kafka`); each step is bounded, so a missing broker fails fast.

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kafka/kafka_test_env.h"

namespace flow::test {
namespace {

constexpr int kTxnTimeoutMs = 30000;  // every transactional call; below any test timeout
constexpr int kPartitions = 2;

struct ErrorFree {
  void operator()(rd_kafka_error_t* e) const { rd_kafka_error_destroy(e); }
};
using ErrorPtr = std::unique_ptr<rd_kafka_error_t, ErrorFree>;

std::string Describe(const ErrorPtr& error) {
  if (!error) return "no error";
  return std::string(rd_kafka_error_name(error.get())) + ": " + rd_kafka_error_string(error.get()) +
         (rd_kafka_error_is_fatal(error.get()) ? " (fatal)" : "");
}

// The values a read returns, grouped by partition in the order read.
std::map<int32_t, std::vector<std::string>> ByPartition(const std::vector<KafkaRecord>& records) {
  std::map<int32_t, std::vector<std::string>> out;
  for (const KafkaRecord& r : records) out[r.partition].push_back(r.value);
  return out;
}

// librdkafka frees a partition's metadata with free() when its list is destroyed.
void SetMetadata(rd_kafka_topic_partition_t* tp, const std::string& metadata) {
  tp->metadata = std::malloc(metadata.size());
  std::memcpy(tp->metadata, metadata.data(), metadata.size());
  tp->metadata_size = metadata.size();
}

class TransactionsSmokeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    rt::Status reachable = kafka_.CheckReachable(Millis(20000));
    ASSERT_TRUE(reachable.ok()) << reachable.ToString();
    auto topic = kafka_.CreateUniqueTopic("txn-smoke", kPartitions);
    ASSERT_TRUE(topic.ok()) << topic.status().ToString();
    topic_ = *topic;
  }

  RdKafkaPtr TransactionalProducer(const std::string& transactional_id,
                                   int64_t transaction_timeout_ms = kTxnTimeoutMs) {
    auto producer = kafka_.MakeProducer(
        {{"transactional.id", transactional_id},
         {"transaction.timeout.ms", std::to_string(transaction_timeout_ms)},
         {"message.timeout.ms",
          std::to_string(std::min<int64_t>(transaction_timeout_ms, kTxnTimeoutMs))}});
    EXPECT_TRUE(producer.ok()) << producer.status().ToString();
    return producer.ok() ? std::move(producer).value() : nullptr;
  }

  // Queues one record for `partition`; delivery is checked by the commit (or the flush).
  void Send(rd_kafka_t* producer, int32_t partition, const std::string& value) {
    rd_kafka_resp_err_t err = rd_kafka_producev(
        producer, RD_KAFKA_V_TOPIC(topic_.c_str()), RD_KAFKA_V_PARTITION(partition),
        RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
    ASSERT_EQ(err, RD_KAFKA_RESP_ERR_NO_ERROR)
        << "producing '" << value << "': " << rd_kafka_err2str(err);
  }

  // Sends `count` records "<prefix>-<i>" round-robin over the partitions and records, in the
  // test's own reference `sent`, which value went to which partition in which order.
  void SendBatch(rd_kafka_t* producer, const std::string& prefix, int count,
                 std::map<int32_t, std::vector<std::string>>& sent) {
    for (int i = 0; i < count; ++i) {
      int32_t partition = i % kPartitions;
      std::string value = prefix + "-" + std::to_string(i);
      Send(producer, partition, value);
      sent[partition].push_back(value);
    }
  }

  KafkaTestEnv kafka_;
  std::string topic_;
};

TEST_F(TransactionsSmokeTest, ReadCommittedSeesOnlyCommittedRecordsReadUncommittedSeesAll) {
  RdKafkaPtr producer = TransactionalProducer(UniqueName("txn-smoke-id"));
  ASSERT_NE(producer, nullptr);
  rd_kafka_t* p = producer.get();
  ErrorPtr error(rd_kafka_init_transactions(p, kTxnTimeoutMs));
  ASSERT_FALSE(error) << "init_transactions: " << Describe(error);

  std::map<int32_t, std::vector<std::string>> committed;   // reference for read_committed
  std::map<int32_t, std::vector<std::string>> everything;  // reference for read_uncommitted

  error.reset(rd_kafka_begin_transaction(p));
  ASSERT_FALSE(error) << "begin #1: " << Describe(error);
  SendBatch(p, "first-commit", 10, committed);
  error.reset(rd_kafka_commit_transaction(p, kTxnTimeoutMs));
  ASSERT_FALSE(error) << "commit #1: " << Describe(error);

  error.reset(rd_kafka_begin_transaction(p));
  ASSERT_FALSE(error) << "begin #2: " << Describe(error);
  std::map<int32_t, std::vector<std::string>> aborted;
  SendBatch(p, "aborted", 7, aborted);
  // Flush first so the aborted records really are in the log before the abort marker.
  ASSERT_EQ(rd_kafka_flush(p, kTxnTimeoutMs), RD_KAFKA_RESP_ERR_NO_ERROR);
  error.reset(rd_kafka_abort_transaction(p, kTxnTimeoutMs));
  ASSERT_FALSE(error) << "abort #2: " << Describe(error);

  error.reset(rd_kafka_begin_transaction(p));
  ASSERT_FALSE(error) << "begin #3: " << Describe(error);
  std::map<int32_t, std::vector<std::string>> second_commit;
  SendBatch(p, "second-commit", 5, second_commit);
  error.reset(rd_kafka_commit_transaction(p, kTxnTimeoutMs));
  ASSERT_FALSE(error) << "commit #3: " << Describe(error);

  // One producer writes each partition in order: the log order is the send order.
  for (int32_t part = 0; part < kPartitions; ++part) {
    everything[part] = committed[part];
    everything[part].insert(everything[part].end(), aborted[part].begin(), aborted[part].end());
    everything[part].insert(everything[part].end(), second_commit[part].begin(),
                            second_commit[part].end());
    committed[part].insert(committed[part].end(), second_commit[part].begin(),
                           second_commit[part].end());
  }

  auto read_committed = kafka_.ConsumeToEnd(topic_, Isolation::kReadCommitted);
  ASSERT_TRUE(read_committed.ok()) << read_committed.status().ToString();
  EXPECT_EQ(ByPartition(*read_committed), committed);
  EXPECT_EQ(read_committed->size(), 15u);

  auto read_uncommitted = kafka_.ConsumeToEnd(topic_, Isolation::kReadUncommitted);
  ASSERT_TRUE(read_uncommitted.ok()) << read_uncommitted.status().ToString();
  EXPECT_EQ(ByPartition(*read_uncommitted), everything);
  EXPECT_EQ(read_uncommitted->size(), 22u);
}

TEST_F(TransactionsSmokeTest, SecondProducerWithSameTransactionalIdFencesTheFirst) {
  const std::string id = UniqueName("txn-fence-id");
  RdKafkaPtr first = TransactionalProducer(id);
  ASSERT_NE(first, nullptr);
  ErrorPtr error(rd_kafka_init_transactions(first.get(), kTxnTimeoutMs));
  ASSERT_FALSE(error) << "first init_transactions: " << Describe(error);

  error.reset(rd_kafka_begin_transaction(first.get()));
  ASSERT_FALSE(error) << Describe(error);
  Send(first.get(), 0, "first-committed");
  error.reset(rd_kafka_commit_transaction(first.get(), kTxnTimeoutMs));
  ASSERT_FALSE(error) << "first commit: " << Describe(error);

  // Leave a transaction open with a record already in the log.
  error.reset(rd_kafka_begin_transaction(first.get()));
  ASSERT_FALSE(error) << Describe(error);
  Send(first.get(), 1, "first-left-open");
  ASSERT_EQ(rd_kafka_flush(first.get(), kTxnTimeoutMs), RD_KAFKA_RESP_ERR_NO_ERROR);

  // The newcomer takes over the id: the broker aborts the open transaction and bumps the epoch.
  RdKafkaPtr second = TransactionalProducer(id);
  ASSERT_NE(second, nullptr);
  error.reset(rd_kafka_init_transactions(second.get(), kTxnTimeoutMs));
  ASSERT_FALSE(error) << "second init_transactions: " << Describe(error);

  // The first producer learns on its next operation, and the error is fatal.
  Send(first.get(), 0, "first-after-fence");
  error.reset(rd_kafka_commit_transaction(first.get(), kTxnTimeoutMs));
  ASSERT_TRUE(error) << "the fenced producer's commit succeeded";
  EXPECT_TRUE(rd_kafka_error_is_fatal(error.get())) << Describe(error);
  char reason[512];
  EXPECT_EQ(rd_kafka_fatal_error(first.get(), reason, sizeof reason), RD_KAFKA_RESP_ERR__FENCED)
      << Describe(error);

  error.reset(rd_kafka_begin_transaction(second.get()));
  ASSERT_FALSE(error) << Describe(error);
  Send(second.get(), 1, "second-committed");
  error.reset(rd_kafka_commit_transaction(second.get(), kTxnTimeoutMs));
  ASSERT_FALSE(error) << "second commit: " << Describe(error);

  const std::map<int32_t, std::vector<std::string>> expected_committed = {
      {0, {"first-committed"}}, {1, {"second-committed"}}};
  auto read_committed = kafka_.ConsumeToEnd(topic_, Isolation::kReadCommitted);
  ASSERT_TRUE(read_committed.ok()) << read_committed.status().ToString();
  EXPECT_EQ(ByPartition(*read_committed), expected_committed);

  // The open transaction's record did reach the log; only its abort hides it above.
  auto read_uncommitted = kafka_.ConsumeToEnd(topic_, Isolation::kReadUncommitted);
  ASSERT_TRUE(read_uncommitted.ok()) << read_uncommitted.status().ToString();
  const auto seen = ByPartition(*read_uncommitted);
  ASSERT_EQ(seen.count(1), 1u);
  EXPECT_NE(std::find(seen.at(1).begin(), seen.at(1).end(), "first-left-open"), seen.at(1).end());
  for (const auto& [partition, values] : seen) {
    EXPECT_EQ(std::count(values.begin(), values.end(), "first-after-fence"), 0)
        << "a fenced producer's record reached partition " << partition;
  }
}

TEST_F(TransactionsSmokeTest, OpenTransactionHoldsBackReadCommittedUntilItEnds) {
  // A long transaction timeout: the broker must not abort this one while the test looks at it.
  RdKafkaPtr producer = TransactionalProducer(UniqueName("txn-open"), 300000);
  ASSERT_NE(producer, nullptr);
  ErrorPtr error(rd_kafka_init_transactions(producer.get(), kTxnTimeoutMs));
  ASSERT_FALSE(error) << Describe(error);
  error.reset(rd_kafka_begin_transaction(producer.get()));
  ASSERT_FALSE(error) << Describe(error);
  Send(producer.get(), 1, "still-open");
  ASSERT_EQ(rd_kafka_flush(producer.get(), kTxnTimeoutMs), RD_KAFKA_RESP_ERR_NO_ERROR);

  auto blocked = kafka_.ConsumeToEnd(topic_, Isolation::kReadCommitted, Millis(3000));
  ASSERT_FALSE(blocked.ok()) << "read_committed read past an open transaction";
  EXPECT_EQ(blocked.status().code(), rt::StatusCode::kTimedOut) << blocked.status().ToString();
  EXPECT_NE(blocked.status().message().find("partition 1"), std::string::npos)
      << blocked.status().ToString();

  auto uncommitted = kafka_.ConsumeToEnd(topic_, Isolation::kReadUncommitted);
  ASSERT_TRUE(uncommitted.ok()) << uncommitted.status().ToString();
  const std::map<int32_t, std::vector<std::string>> open_record = {{1, {"still-open"}}};
  EXPECT_EQ(ByPartition(*uncommitted), open_record);

  error.reset(rd_kafka_abort_transaction(producer.get(), kTxnTimeoutMs));
  ASSERT_FALSE(error) << Describe(error);
  auto after_abort = kafka_.ConsumeToEnd(topic_, Isolation::kReadCommitted);
  ASSERT_TRUE(after_abort.ok()) << after_abort.status().ToString();
  EXPECT_TRUE(after_abort->empty());
}

TEST_F(TransactionsSmokeTest, TransactionTimeoutAboveTheBrokerMaximumIsRejected) {
  // scripts/kafka sets transaction.max.timeout.ms=900000: exactly that is accepted, one more not.
  RdKafkaPtr at_max = TransactionalProducer(UniqueName("txn-max-ok"), 900000);
  ASSERT_NE(at_max, nullptr);
  ErrorPtr error(rd_kafka_init_transactions(at_max.get(), kTxnTimeoutMs));
  EXPECT_FALSE(error) << "timeout 900000: " << Describe(error);

  RdKafkaPtr above_max = TransactionalProducer(UniqueName("txn-max-bad"), 900001);
  ASSERT_NE(above_max, nullptr);
  error.reset(rd_kafka_init_transactions(above_max.get(), kTxnTimeoutMs));
  ASSERT_TRUE(error) << "timeout 900001 was accepted";
  EXPECT_EQ(rd_kafka_error_code(error.get()), RD_KAFKA_RESP_ERR_INVALID_TRANSACTION_TIMEOUT)
      << Describe(error);
}

TEST_F(TransactionsSmokeTest, BrokerAbortsATransactionItsProducerAbandoned) {
  {
    // 5 s transaction timeout; the producer goes away with its transaction open.
    RdKafkaPtr abandoning = TransactionalProducer(UniqueName("txn-abandon"), 5000);
    ASSERT_NE(abandoning, nullptr);
    ErrorPtr error(rd_kafka_init_transactions(abandoning.get(), kTxnTimeoutMs));
    ASSERT_FALSE(error) << Describe(error);
    error.reset(rd_kafka_begin_transaction(abandoning.get()));
    ASSERT_FALSE(error) << Describe(error);
    Send(abandoning.get(), 0, "abandoned");
    ASSERT_EQ(rd_kafka_flush(abandoning.get(), kTxnTimeoutMs), RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  RdKafkaPtr other = TransactionalProducer(UniqueName("txn-after-abandon"));
  ASSERT_NE(other, nullptr);
  ErrorPtr error(rd_kafka_init_transactions(other.get(), kTxnTimeoutMs));
  ASSERT_FALSE(error) << Describe(error);
  error.reset(rd_kafka_begin_transaction(other.get()));
  ASSERT_FALSE(error) << Describe(error);
  Send(other.get(), 0, "committed-after");
  error.reset(rd_kafka_commit_transaction(other.get(), kTxnTimeoutMs));
  ASSERT_FALSE(error) << Describe(error);

  // The open transaction holds back the last stable offset of partition 0 until the broker
  // aborts it; only then can a read_committed read reach the end and see the later commit.
  auto read_committed = kafka_.ConsumeToEnd(topic_, Isolation::kReadCommitted, Millis(60000));
  ASSERT_TRUE(read_committed.ok()) << read_committed.status().ToString();
  const std::map<int32_t, std::vector<std::string>> expected = {{0, {"committed-after"}}};
  EXPECT_EQ(ByPartition(*read_committed), expected);

  auto read_uncommitted = kafka_.ConsumeToEnd(topic_, Isolation::kReadUncommitted);
  ASSERT_TRUE(read_uncommitted.ok()) << read_uncommitted.status().ToString();
  const std::map<int32_t, std::vector<std::string>> everything = {
      {0, {"abandoned", "committed-after"}}};
  EXPECT_EQ(ByPartition(*read_uncommitted), everything);
}

// The scale-out design (docs/exactly-once.md, "State that moves between instances") names the
// snapshot a partition's state is in through the metadata of the offset its owner commits inside
// the transaction. This pins that librdkafka sends offset metadata in TxnOffsetCommit and that a
// committed offset reads back with it, while an aborted transaction's offset and metadata never
// become the group's.
TEST_F(TransactionsSmokeTest, OffsetsSentInATransactionKeepTheirMetadataAbortedOnesDoNot) {
  const std::string group = UniqueName("txn-meta-group");
  RdKafkaPtr producer = TransactionalProducer(UniqueName("txn-meta"));
  ASSERT_NE(producer, nullptr);
  rd_kafka_t* p = producer.get();
  ErrorPtr error(rd_kafka_init_transactions(p, kTxnTimeoutMs));
  ASSERT_FALSE(error) << Describe(error);

  auto send_offsets = [&](int64_t offset0, const std::string& meta0, int64_t offset1,
                          const std::string& meta1) {
    rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(2);
    rd_kafka_topic_partition_t* tp0 = rd_kafka_topic_partition_list_add(list, topic_.c_str(), 0);
    tp0->offset = offset0;
    SetMetadata(tp0, meta0);
    rd_kafka_topic_partition_t* tp1 = rd_kafka_topic_partition_list_add(list, topic_.c_str(), 1);
    tp1->offset = offset1;
    SetMetadata(tp1, meta1);
    rd_kafka_consumer_group_metadata_t* cgmd = rd_kafka_consumer_group_metadata_new(group.c_str());
    ErrorPtr e(rd_kafka_send_offsets_to_transaction(p, list, cgmd, kTxnTimeoutMs));
    rd_kafka_consumer_group_metadata_destroy(cgmd);
    rd_kafka_topic_partition_list_destroy(list);
    return e;
  };

  error.reset(rd_kafka_begin_transaction(p));
  ASSERT_FALSE(error) << Describe(error);
  Send(p, 0, "with-offsets");
  error = send_offsets(7, "a/chk-3", 11, "b/chk-12");
  ASSERT_FALSE(error) << "send_offsets_to_transaction: " << Describe(error);
  error.reset(rd_kafka_commit_transaction(p, kTxnTimeoutMs));
  ASSERT_FALSE(error) << "commit: " << Describe(error);

  error.reset(rd_kafka_begin_transaction(p));
  ASSERT_FALSE(error) << Describe(error);
  error = send_offsets(9, "a/chk-4", 13, "b/chk-13");
  ASSERT_FALSE(error) << "send_offsets_to_transaction: " << Describe(error);
  error.reset(rd_kafka_abort_transaction(p, kTxnTimeoutMs));
  ASSERT_FALSE(error) << "abort: " << Describe(error);

  auto consumer = kafka_.MakeConsumer({{"group.id", group}, {"isolation.level", "read_committed"}});
  ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(2);
  rd_kafka_topic_partition_list_add(list, topic_.c_str(), 0);
  rd_kafka_topic_partition_list_add(list, topic_.c_str(), 1);
  rd_kafka_resp_err_t err = rd_kafka_committed(consumer->get(), list, kTxnTimeoutMs);
  ASSERT_EQ(err, RD_KAFKA_RESP_ERR_NO_ERROR) << rd_kafka_err2str(err);
  std::map<int32_t, std::pair<int64_t, std::string>> committed;
  for (int i = 0; i < list->cnt; ++i) {
    const rd_kafka_topic_partition_t& tp = list->elems[i];
    EXPECT_EQ(tp.err, RD_KAFKA_RESP_ERR_NO_ERROR) << rd_kafka_err2str(tp.err);
    committed[tp.partition] = {
        tp.offset, std::string(static_cast<const char*>(tp.metadata), tp.metadata_size)};
  }
  rd_kafka_topic_partition_list_destroy(list);
  const std::map<int32_t, std::pair<int64_t, std::string>> expected = {{0, {7, "a/chk-3"}},
                                                                       {1, {11, "b/chk-12"}}};
  EXPECT_EQ(committed, expected);
}

}  // namespace
}  // namespace flow::test
