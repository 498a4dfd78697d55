#pragma once
// KafkaTestEnv: what a test with CTest label `kafka` needs from the real broker that
// `scripts/kafka start` runs (scripts/test starts it around ctest): its address, fresh topics,
// and simple produce / read-back helpers built on librdkafka's C API.
//
// Contract:
// - Address: FLOW_KAFKA_BROKERS (a bootstrap.servers list), default "127.0.0.1:9092".
// - Errors: every call returns a Status / Result naming the broker list, topic and step that
//   failed. Nothing throws, nothing waits longer than its `timeout` (plus a few seconds for
//   librdkafka to tear its client down); a broker that is down gives kUnavailable or kTimedOut.
// - Each call creates and destroys its own librdkafka clients: these helpers are for test set-up
//   and checking, not speed. A KafkaTestEnv holds only its broker list, so it is cheap to copy
//   and safe to use from several threads.
// - Topics are never deleted automatically. UniqueName makes names unique per process and call,
//   so tests that share a long-lived broker never see each other's records.
// - The broker has automatic topic creation off (docs/kafka-broker.md): create topics first.

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "flow/runtime/common/status.h"

namespace flow::test {

using Millis = std::chrono::milliseconds;
// Default: 30 s, generous for a broker on a loaded 2-core machine; still bounded.
inline constexpr Millis kKafkaTimeout{30000};

// A record as produced or read back. `partition` -1 when producing means "choose by key" (the
// librdkafka default partitioner); an empty `key` is produced as no key (and a record without
// a key reads back with an empty one); `offset` and `timestamp` are filled in only for records
// read back.
struct KafkaRecord {
  int32_t partition = -1;
  std::string key;
  std::string value;
  int64_t offset = -1;
  // Read back only: the record's timestamp, and whether the broker stamped it on append
  // (message.timestamp.type=LogAppendTime) rather than taking the producer's.
  int64_t timestamp = -1;
  bool log_append_time = false;
};

enum class Isolation { kReadCommitted, kReadUncommitted };

// Client settings as librdkafka property names and values, e.g. {"transactional.id", "t-1"}.
using KafkaSettings = std::map<std::string, std::string>;

// Destroys a librdkafka handle without a consumer-group close (the helpers' consumers only
// assign partitions), so tearing down never waits on a group coordinator.
struct RdKafkaDeleter {
  void operator()(rd_kafka_t* rk) const;
};
using RdKafkaPtr = std::unique_ptr<rd_kafka_t, RdKafkaDeleter>;

// "<prefix>-<pid>-<microseconds since epoch>-<counter>": valid as a topic, group or
// transactional id and unique per process and call.
std::string UniqueName(std::string_view prefix);

// The partition Kafka's Java client picks for a keyed record, written from its specification as
// a reference independent of librdkafka: murmur2 (seed 0x9747b28c) of the key bytes, sign bit
// cleared, modulo the partition count.
int32_t JavaPartition(const std::string& key, int32_t partitions);

class KafkaTestEnv {
 public:
  // Uses FLOW_KAFKA_BROKERS, default "127.0.0.1:9092".
  KafkaTestEnv();
  explicit KafkaTestEnv(std::string brokers);
  // `client_settings` go to every client the helpers make, under the settings of each call:
  // e.g. security.protocol, sasl.* and ssl.ca.location for a SASL_SSL listener.
  KafkaTestEnv(std::string brokers, KafkaSettings client_settings);

  const std::string& brokers() const { return brokers_; }
  const KafkaSettings& client_settings() const { return client_settings_; }

  // Ok iff a broker answers a metadata request within `timeout`. The message of an error says
  // how to start one (scripts/kafka start).
  [[nodiscard]] rt::Status CheckReachable(Millis timeout = kKafkaTimeout) const;

  // Creates `topic` with `partitions` partitions (replication factor 1) and topic-level
  // `configs` (e.g. {"cleanup.policy", "compact"}), then waits until metadata shows every
  // partition with a leader. An existing topic is an error (kInvalidArgument).
  [[nodiscard]] rt::Status CreateTopic(const std::string& topic, int partitions,
                                       const KafkaSettings& configs = {},
                                       Millis timeout = kKafkaTimeout) const;
  // Grows `topic` to `total` partitions (admin CreatePartitions) and waits until every partition
  // has a leader that serves it, as CreateTopic does.
  [[nodiscard]] rt::Status AddPartitions(const std::string& topic, int total,
                                         Millis timeout = kKafkaTimeout) const;
  // CreateTopic with a UniqueName(prefix); returns the name.
  [[nodiscard]] rt::Result<std::string> CreateUniqueTopic(std::string_view prefix, int partitions,
                                                          const KafkaSettings& configs = {},
                                                          Millis timeout = kKafkaTimeout) const;
  // Number of partitions of `topic`; kNotFound if the broker does not know it.
  [[nodiscard]] rt::Result<int> PartitionCount(const std::string& topic,
                                               Millis timeout = kKafkaTimeout) const;

  // A producer or consumer handle for `brokers()` with `settings` on top of client_settings()
  // and librdkafka's defaults. kInvalidArgument names a setting librdkafka rejects. A consumer gets
  // a fresh group.id unless `settings` has one; its messages come from rd_kafka_consumer_poll.
  [[nodiscard]] rt::Result<RdKafkaPtr> MakeProducer(const KafkaSettings& settings = {}) const;
  [[nodiscard]] rt::Result<RdKafkaPtr> MakeConsumer(const KafkaSettings& settings = {}) const;

  // Produces `records` with an idempotent, non-transactional producer (acks=all) and waits
  // until every one is acknowledged; the first failed delivery is the error.
  [[nodiscard]] rt::Status Produce(const std::string& topic,
                                   const std::vector<KafkaRecord>& records,
                                   Millis timeout = kKafkaTimeout) const;

  // Reads every record below each partition's high watermark as it was when the call began,
  // as `isolation` shows them: kReadCommitted leaves out aborted records and waits until every
  // transaction in that range has ended; one still open when `timeout` runs out (until the
  // broker aborts it after its transaction timeout) is a kTimedOut error. Transaction markers
  // never appear. Records come sorted by partition, then offset.
  [[nodiscard]] rt::Result<std::vector<KafkaRecord>> ConsumeToEnd(
      const std::string& topic, Isolation isolation, Millis timeout = kKafkaTimeout) const;

  // Reads `topic` from its beginning until `count` records arrived (for output that is still
  // being written) and returns those `count` records, each partition in offset order; fewer
  // within `timeout` is a kTimedOut error saying how many came.
  [[nodiscard]] rt::Result<std::vector<KafkaRecord>> ConsumeCount(
      const std::string& topic, std::size_t count, Isolation isolation,
      Millis timeout = kKafkaTimeout) const;

 private:
  // client_settings_ with `settings` on top.
  KafkaSettings With(const KafkaSettings& settings) const;

  std::string brokers_;
  KafkaSettings client_settings_;
};

}  // namespace flow::test
