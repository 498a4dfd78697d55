#pragma once
// KafkaSink: at-least-once writes to one topic with an idempotent librdkafka producer
// (enable.idempotence=true, acks=all).
//
// Partitioning: kKeyHash uses librdkafka's murmur2_random partitioner, the same hash as the Java
// client's default, so a key lands in the same partition as from a Java producer; records with an
// empty key are spread over partitions. kExplicit sends every record to `partition`.
// Write copies key and payload into the producer queue. When the queue is full it blocks, serving
// delivery reports, until there is room (backpressure), at most delivery_timeout_ms (then
// kUnavailable naming topic and brokers); it returns the first delivery error once one has
// happened. The record timestamp is sent as CreateTime unless it is kNoTimestamp.
// Flush waits until every record written so far is acknowledged, at most flush_timeout_ms, and
// returns the first delivery error (kUnavailable when brokers cannot be reached in time). After a
// delivery error the sink stays failed: every later call returns that error.
// Cancellation: once the job's cancel flag (Bind) is set, a Write waiting for queue room and a
// Flush return kCancelled within about 100 ms. Close after a failed or cancelled Flush drops the
// undelivered records (purge) instead of waiting for the brokers.
// Open fails with kUnavailable when the brokers do not answer within metadata_timeout_ms, and with
// kNotFound when the topic does not exist.
// Threading: one instance per subtask, used by one thread at a time.

#include <cstdint>
#include <map>
#include <string>

#include "flow/runtime/connectors/connector.h"
#include "flow/runtime/connectors/kafka_stamp_retention.h"

struct rd_kafka_s;
struct rd_kafka_message_s;

namespace flow::rt {

enum class KafkaPartitioner { kKeyHash, kExplicit };

struct KafkaSinkOptions {
  // bootstrap.servers. Required.
  std::string brokers{};
  // Required.
  std::string topic{};
  // Default: kKeyHash.
  KafkaPartitioner partitioner = KafkaPartitioner::kKeyHash;
  // For kExplicit: the partition every record goes to. Default: 0.
  int32_t partition = 0;
  // How long Open waits for metadata. Default: 10 s.
  int metadata_timeout_ms = 10000;
  // message.timeout.ms: how long librdkafka retries one record before failing it. Default: 60 s.
  int delivery_timeout_ms = 60000;
  // Longest wait in Flush. Default: 120 s.
  int flush_timeout_ms = 120000;
  // Other librdkafka producer settings, passed through ("linger.ms", "compression.type").
  std::map<std::string, std::string> properties{};
};

class KafkaSink final : public RawSink {
 public:
  explicit KafkaSink(KafkaSinkOptions options) : options_(std::move(options)) {}
  ~KafkaSink() override;

  void Bind(const ConnectorContext& context) override { context_ = context; }
  Status Open(uint32_t subtask, uint32_t parallelism) override;
  Status Write(std::string_view key, std::string_view payload, TimestampMs timestamp) override;
  Status WriteWithHeaders(std::string_view key, std::string_view payload, TimestampMs timestamp,
                          std::span<const OutHeader> headers) override;
  Status Flush() override;
  Status Close() override;

  // Records acknowledged by the brokers so far.
  uint64_t delivered() const { return delivered_; }

 private:
  static void OnDelivery(rd_kafka_s* rk, const rd_kafka_message_s* msg, void* opaque);
  void DestroyProducer();

  KafkaSinkOptions options_;
  ConnectorContext context_;
  rd_kafka_s* rk_ = nullptr;
  Status delivery_error_;  // the first failed delivery; sticky
  uint64_t delivered_ = 0;
  KafkaStaleStampWarning stale_stamps_;
};

}  // namespace flow::rt
