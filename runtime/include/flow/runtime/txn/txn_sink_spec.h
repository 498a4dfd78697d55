#pragma once
// TxnSinkSpec: what one exactly-once sink node of a job writes to (the engine wiring is in
// engine/txn_sink.h). Built in code (KafkaTxnSink, FileTxnSink) or from a script's connector
// options (TxnSinkSpecFor, used by generated code for `into ... exactly_once`).
//
// TxnSinkSpecFor options:
//   kafka: brokers (required), topic (required), partitioner key_hash|explicit, partition N,
//          transaction_timeout D (transaction.timeout.ms; default the broker's maximum),
//          retry_timeout D (how long an unreachable cluster is waited for before the attempt
//          fails: start-up, a full producer queue, a commit; default 60 s),
//          kafka.<librdkafka property> passed to the job's transactional producer.
//   file:  directory (required; `path` in scripts), prefix, suffix, roll_bytes, buffer_bytes.
// Errors: kInvalidArgument naming the connector and option (unknown option, bad value, missing
// required option, a connector that has no exactly-once sink).

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flow/runtime/txn/commit_group.h"
#include "flow/runtime/txn/exactly_once_file_sink.h"
#include "flow/runtime/txn/kafka_exactly_once_sink.h"
#include "flow/runtime/txn/repartition_sink.h"

namespace flow::rt {

// An exactly-once Kafka sink: it joins the job's commit group (one transactional producer) on
// these brokers.
struct KafkaTxnSinkConfig {
  std::string brokers;
  KafkaExactlyOnceSinkOptions sink;
  // transaction.timeout.ms; 0 = the broker's maximum. The first Kafka sink's value counts.
  int64_t transaction_timeout_ms = 0;
  // Other producer settings for the group.
  std::map<std::string, std::string> properties;
  // KafkaTransactionOptions::retry_timeout_ms; 0 = its default (60 s). The first Kafka sink's
  // value counts.
  int64_t retry_timeout_ms = 0;
};

// What the engine needs of one exactly-once sink node; it never looks at the sink's type.
struct TxnSinkSpec {
  // Sinks committed by a shared transaction (Kafka): the group and its participants.
  std::optional<CommitGroupSpec> group;
  // Other sinks (files, user sinks): one instance per subtask. Must be resumable
  // (CommitIsResumable): only a group's participants may be non-resumable.
  std::function<std::unique_ptr<TwoPhaseCommitSink>(uint32_t subtask, uint32_t parallelism)>
      factory;
};

TxnSinkSpec KafkaTxnSink(KafkaTxnSinkConfig config);
TxnSinkSpec KafkaTxnSink(std::string brokers, KafkaExactlyOnceSinkOptions options,
                         std::map<std::string, std::string> properties = {});
// The writing half of a key-by between instances (txn/repartition_sink.h), a participant of the
// same transaction group as the job's Kafka sinks on `config.brokers` (`config.sink` is unused).
TxnSinkSpec RepartitionTxnSink(KafkaTxnSinkConfig config, RepartitionSinkOptions options);
TxnSinkSpec FileTxnSink(ExactlyOnceFileSinkOptions options);

// A script's `kafka` options (above) as a KafkaTxnSinkConfig.
[[nodiscard]] Result<KafkaTxnSinkConfig> KafkaTxnSinkConfigFor(
    const std::map<std::string, std::string>& options);

// `kind`, a sink the connector catalog lists as exactly-once (kafka, file), with the connector's
// options (above). Other kinds: kInvalidArgument listing the catalog's exactly-once sinks.
[[nodiscard]] Result<TxnSinkSpec> TxnSinkSpecFor(const std::string& kind,
                                                 const std::map<std::string, std::string>& options);

// The kinds TxnSinkSpecFor has builders for; they must be the catalog's exactly-once sinks
// (tested).
std::vector<std::string_view> TxnSinkBuilderKinds();

}  // namespace flow::rt
