// Start-up checks of the exactly-once Kafka sink that need no broker: job ids and the
// transaction timeout rule.

#include <gtest/gtest.h>

#include "flow/runtime/txn/kafka_exactly_once_sink.h"

namespace flow::rt {
namespace {

CheckpointOptions Checkpoints(int64_t interval, int64_t timeout, uint32_t tolerable = 0,
                              int64_t pause = 0) {
  CheckpointOptions o;
  o.interval_ms = interval;
  o.timeout_ms = timeout;
  o.tolerable_failures = tolerable;
  o.min_pause_ms = pause;
  return o;
}

TEST(KafkaTxnConfigTest, TransactionalIdComesFromTheJobId) {
  Result<std::string> id = TransactionalIdForJob("clicks_per_minute.v2-prod");
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(*id, "flow-clicks_per_minute.v2-prod");
  EXPECT_EQ(TransactionalIdForJob("").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(TransactionalIdForJob("a b").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(TransactionalIdForJob("a/b").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(TransactionalIdForJob(std::string(201, 'x')).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(TransactionalIdForJob(std::string(200, 'x')).ok());
}

TEST(KafkaTxnConfigTest, TimeoutMustOutliveTheLongestGapBetweenCommits) {
  // 1 s interval + 10 s checkpoint timeout: a transaction may stay open 11 s.
  EXPECT_TRUE(ValidateTransactionTimeout(11001, 900000, Checkpoints(1000, 10000), 0, "j").ok());
  Status s = ValidateTransactionTimeout(11000, 900000, Checkpoints(1000, 10000), 0, "j");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("too short"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("--checkpoint-timeout"), std::string::npos) << s.message();
  // Each tolerated failure adds one more interval + timeout; the min pause adds once.
  EXPECT_FALSE(
      ValidateTransactionTimeout(30000, 900000, Checkpoints(1000, 10000, 2, 500), 0, "j").ok());
  EXPECT_TRUE(
      ValidateTransactionTimeout(33501, 900000, Checkpoints(1000, 10000, 2, 500), 0, "j").ok());
  EXPECT_FALSE(
      ValidateTransactionTimeout(33500, 900000, Checkpoints(1000, 10000, 2, 500), 0, "j").ok());
}

TEST(KafkaTxnConfigTest, TimeoutAboveTheBrokerMaximumIsRefusedWithItsName) {
  Status s = ValidateTransactionTimeout(900001, 900000, Checkpoints(1000, 10000), 0, "job7");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("transaction.max.timeout.ms 900000"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("job7"), std::string::npos) << s.message();
}

TEST(KafkaTxnConfigTest, CheckpointsOffIsRefused) {
  Status s = ValidateTransactionTimeout(60000, 900000, Checkpoints(0, 10000), 0, "j");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("--checkpoint-interval"), std::string::npos) << s.message();
}

TEST(KafkaTxnConfigTest, DefaultCheckpointOptionsFitTheDefaultBrokerMaximum) {
  // A job with an exactly-once sink and default options must start against a default broker.
  EXPECT_TRUE(ValidateTransactionTimeout(900000, 900000, CheckpointOptions::ForJob(true),
                                         CommitBoundMs(KafkaTransactionOptions{}), "j")
                  .ok());
}

// The commit that ends a transaction runs while it is open: its flush and retries (bounded by
// retry_timeout) count against transaction.timeout.ms.
TEST(KafkaTxnConfigTest, TimeoutAccountsForTheCommitBound) {
  KafkaTransactionOptions o;
  o.retry_timeout_ms = 20000;
  const int64_t bound = CommitBoundMs(o);
  EXPECT_EQ(bound, 20000 + kTxnWaitSliceMs);
  // 1 s interval + 10 s checkpoint timeout + the commit's bound.
  EXPECT_TRUE(
      ValidateTransactionTimeout(11001 + bound, 900000, Checkpoints(1000, 10000), bound, "j").ok());
  Status s =
      ValidateTransactionTimeout(11000 + bound, 900000, Checkpoints(1000, 10000), bound, "j");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("retry_timeout"), std::string::npos) << s.message();
  // Enough for the checkpoints alone is not enough any more.
  EXPECT_FALSE(
      ValidateTransactionTimeout(11001, 900000, Checkpoints(1000, 10000), bound, "j").ok());
}

}  // namespace
}  // namespace flow::rt
