#pragma once
// The transaction options the Kafka transaction tests use: short enough bounds that a broken
// broker fails a test in seconds, long enough for a loaded 2-core machine.

#include <string>

#include "flow/runtime/txn/kafka_exactly_once_sink.h"

namespace flow::rt::test_support {

inline KafkaTransactionOptions TestTransactionOptions(std::string brokers, std::string job_id) {
  KafkaTransactionOptions o;
  o.brokers = std::move(brokers);
  o.job_id = std::move(job_id);
  o.transaction_timeout_ms = 60000;
  o.checkpoints.interval_ms = 1000;
  o.checkpoints.timeout_ms = 20000;
  o.operation_timeout_ms = 20000;
  o.retry_timeout_ms = 20000;
  return o;
}

}  // namespace flow::rt::test_support
