#include "flow/runtime/connectors/kafka_sink.h"

#include <algorithm>

#include <fmt/format.h>

#include "kafka_common.h"

namespace flow::rt {

namespace {
// How long one wait blocks before it looks at its deadline and the cancel flag again.
constexpr int kWaitSliceMs = 100;
}  // namespace

KafkaSink::~KafkaSink() {
  // Without a Close the undelivered records are dropped; Close reports that as an error.
  DestroyProducer();
}

void KafkaSink::DestroyProducer() {
  if (rk_ == nullptr) return;
  // Undelivered records are dropped explicitly: the handle's teardown must not wait for brokers
  // that are down (this runs after Flush gave up or the job was cancelled).
  rd_kafka_purge(rk_, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
  rd_kafka_destroy(rk_);
  rk_ = nullptr;
}

void KafkaSink::OnDelivery(rd_kafka_t* rk, const rd_kafka_message_t* msg, void* opaque) {
  // Delivery reports are served by rd_kafka_poll/flush on the sink's own thread: no locking.
  auto* self = static_cast<KafkaSink*>(opaque);
  if (msg->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    ++self->delivered_;
  } else if (self->delivery_error_.ok()) {
    self->delivery_error_ =
        KafkaError(msg->err, fmt::format("kafka sink: delivery to topic `{}` failed: {}",
                                         self->options_.topic, rd_kafka_err2str(msg->err)));
  }
}

Status KafkaSink::Open(uint32_t subtask, uint32_t parallelism) {
  if (options_.brokers.empty()) return Status::InvalidArgument("kafka sink: `brokers` is empty");
  if (options_.topic.empty()) return Status::InvalidArgument("kafka sink: `topic` is empty");
  if (rk_ != nullptr) return Status::Internal("kafka sink: opened twice");
  std::map<std::string, std::string> settings = {
      {"bootstrap.servers", options_.brokers},
      {"enable.idempotence", "true"},
      {"acks", "all"},
      {"partitioner", "murmur2_random"},
      {"message.timeout.ms", std::to_string(options_.delivery_timeout_ms)},
      {"linger.ms", "5"},
  };
  if (context_.kafka_properties != nullptr) {
    for (const auto& [k, v] : *context_.kafka_properties) settings[k] = v;
  }
  for (const auto& [k, v] : options_.properties) settings[k] = v;
  Result<rd_kafka_conf_t*> conf = MakeKafkaConf(settings, "kafka sink");
  if (!conf.ok()) return conf.status();
  rd_kafka_conf_set_dr_msg_cb(*conf, &KafkaSink::OnDelivery);
  rd_kafka_conf_set_opaque(*conf, this);
  char err[512];
  rk_ = rd_kafka_new(RD_KAFKA_PRODUCER, *conf, err, sizeof err);
  if (rk_ == nullptr) {
    rd_kafka_conf_destroy(*conf);
    return Status::InvalidArgument(fmt::format("kafka sink: cannot create producer: {}", err));
  }
  Result<int32_t> partitions =
      KafkaPartitionCount(rk_, options_.topic, options_.brokers, options_.metadata_timeout_ms);
  if (!partitions.ok()) return partitions.status();
  FLOW_RETURN_IF_ERROR(
      KafkaWaitForLeaders(rk_, options_.topic, *partitions, options_.metadata_timeout_ms));
  if (options_.partitioner == KafkaPartitioner::kExplicit &&
      (options_.partition < 0 || options_.partition >= *partitions)) {
    return Status::InvalidArgument(
        fmt::format("kafka sink: partition {} out of range (topic `{}` "
                    "has {} partitions)",
                    options_.partition, options_.topic, *partitions));
  }
  stale_stamps_.Start(fmt::format("{} subtask {}", context_.operator_name, subtask), options_.topic,
                      KafkaTopicStampRetention(rk_, options_.topic, options_.metadata_timeout_ms));
  return Status::Ok();
}

Status KafkaSink::Write(std::string_view key, std::string_view payload, TimestampMs timestamp) {
  return WriteWithHeaders(key, payload, timestamp, {});
}

Status KafkaSink::WriteWithHeaders(std::string_view key, std::string_view payload,
                                   TimestampMs timestamp, std::span<const OutHeader> headers) {
  if (rk_ == nullptr) return Status::Internal("kafka sink: Write before Open");
  if (!delivery_error_.ok()) return delivery_error_;
  int32_t partition = options_.partitioner == KafkaPartitioner::kExplicit ? options_.partition
                                                                          : RD_KAFKA_PARTITION_UA;
  stale_stamps_.Check(timestamp);
  int64_t ts = timestamp == kNoTimestamp ? 0 : timestamp;
  int64_t deadline = 0;  // set when the queue is first found full
  KafkaHeaders h = MakeKafkaHeaders(headers);
  while (true) {
    rd_kafka_resp_err_t err =
        rd_kafka_producev(rk_, RD_KAFKA_V_TOPIC(options_.topic.c_str()),
                          RD_KAFKA_V_PARTITION(partition), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                          RD_KAFKA_V_VALUE(const_cast<char*>(payload.data()), payload.size()),
                          RD_KAFKA_V_KEY(key.empty() ? nullptr : key.data(), key.size()),
                          RD_KAFKA_V_TIMESTAMP(ts), RD_KAFKA_V_HEADERS(h.get()), RD_KAFKA_V_END);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      (void)h.release();  // the message owns them now
      break;
    }
    if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      return KafkaError(err, fmt::format("kafka sink: cannot produce to topic `{}`: {}",
                                         options_.topic, rd_kafka_err2str(err)));
    }
    // Backpressure: wait for deliveries (or their timeouts) to free queue space. Every queued
    // record is delivered or failed within delivery_timeout_ms, so that bounds the wait too.
    const int64_t now = SteadyNowMs();
    if (deadline == 0) deadline = now + options_.delivery_timeout_ms;
    if (context_.cancelled())
      return Status::Cancelled("kafka sink: job cancelled while the producer queue was full");
    if (now >= deadline) {
      return Status::Unavailable(
          fmt::format("kafka sink: producer queue for topic `{}` still full after {} ms "
                      "(delivery_timeout; brokers {})",
                      options_.topic, options_.delivery_timeout_ms, options_.brokers));
    }
    rd_kafka_poll(rk_, static_cast<int>(std::min<int64_t>(deadline - now, kWaitSliceMs)));
    if (!delivery_error_.ok()) return delivery_error_;
  }
  rd_kafka_poll(rk_, 0);
  return delivery_error_;
}

Status KafkaSink::Flush() {
  if (rk_ == nullptr) return Status::Ok();
  // In slices, so that a cancelled job does not wait out flush_timeout_ms for a dead cluster.
  const int64_t deadline = SteadyNowMs() + options_.flush_timeout_ms;
  rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR__TIMED_OUT;
  while (true) {
    const int64_t left = deadline - SteadyNowMs();
    if (left <= 0) break;
    err = rd_kafka_flush(rk_, static_cast<int>(std::min<int64_t>(left, kWaitSliceMs)));
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR || !delivery_error_.ok()) break;
    if (context_.cancelled()) {
      return Status::Cancelled(
          fmt::format("kafka sink: job cancelled; {} records to topic `{}` unacknowledged",
                      rd_kafka_outq_len(rk_), options_.topic));
    }
  }
  if (!delivery_error_.ok()) return delivery_error_;
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable(fmt::format(
        "kafka sink: {} records to topic `{}` still unacknowledged after {} ms (brokers {})",
        rd_kafka_outq_len(rk_), options_.topic, options_.flush_timeout_ms, options_.brokers));
  }
  return Status::Ok();
}

Status KafkaSink::Close() {
  if (rk_ == nullptr) return Status::Ok();
  Status s = Flush();
  DestroyProducer();
  return s;
}

}  // namespace flow::rt
