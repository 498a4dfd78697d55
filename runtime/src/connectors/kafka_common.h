#pragma once
// Helpers shared by the Kafka source and sink: configuration, metadata, error mapping.

#include <librdkafka/rdkafka.h>

#include <map>
#include <string>

#include "flow/runtime/common/status.h"

namespace flow::rt {

// Sets every key of `settings` on a new conf; kInvalidArgument naming a rejected key.
[[nodiscard]] Result<rd_kafka_conf_t*> MakeKafkaConf(
    const std::map<std::string, std::string>& settings, std::string_view what);

// How long a topic the broker calls unknown is asked for again before that counts as "does not
// exist" (a topic created a moment ago is unknown to a lagging metadata cache for a while).
constexpr int kKafkaNewTopicGraceMs = 3000;

// The number of partitions of `topic`: kUnavailable when the brokers cannot be reached within
// `timeout_ms`, kNotFound when the topic does not exist (still unknown after
// min(timeout_ms, kKafkaNewTopicGraceMs)).
[[nodiscard]] Result<int32_t> KafkaPartitionCount(rd_kafka_t* rk, const std::string& topic,
                                                  const std::string& brokers, int timeout_ms);

// Waits until the leader of every partition of `topic` answers a ListOffsets request. Metadata
// names a leader before that broker serves the partition; a produce in that gap fails with "not
// leader", and librdkafka 2.0.2's idempotent producer can then count the failed first batch as
// delivered when a later batch succeeds (records lost). kUnavailable after `timeout_ms`.
[[nodiscard]] Status KafkaWaitForLeaders(rd_kafka_t* rk, const std::string& topic,
                                         int32_t partitions, int timeout_ms);

// Maps a librdkafka error to a Status code: transport/timeouts -> kUnavailable, fencing ->
// kFenced, unknown topic -> kNotFound, everything else -> kIoError.
[[nodiscard]] Status KafkaError(rd_kafka_resp_err_t err, std::string message);

// True for errors that may go away by themselves (no leader yet, broker restarting, timeouts).
bool KafkaRetriable(rd_kafka_resp_err_t err);

// Monotonic milliseconds, for bounded waits.
int64_t KafkaNowMs();

}  // namespace flow::rt
