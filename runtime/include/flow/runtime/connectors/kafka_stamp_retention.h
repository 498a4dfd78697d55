#pragma once
// Records a Kafka sink stamps past its topic's time retention (docs/connectors.md, "Kafka sink").
//
// A Flow Kafka sink sends each record's event time as its CreateTime. The broker's time retention
// (`retention.ms`, 7 days by default) counts from that stamp, so a record stamped longer ago is
// deleted at the broker's next retention check (every 5 minutes by default), committed or not,
// read or not: a backfill, or a test whose event times are a fixed date that has aged, loses
// output without an error anywhere. The sink cannot keep the broker from doing so, but it can say
// so once, naming the topic and what to change.

#include <cstdint>
#include <optional>
#include <string>

#include "flow/runtime/common/status.h"
#include "flow/runtime/common/time.h"
#include "flow/runtime/connectors/connector.h"

struct rd_kafka_s;  // librdkafka's rd_kafka_t

namespace flow::rt {

// How old a record's producer stamp may be before the broker deletes it from `topic`: its
// retention.ms under message.timestamp.type=CreateTime; nullopt when stamps never cause deletion
// (LogAppendTime, or retention.ms < 0). kUnavailable when the configuration cannot be read (no
// answer in `timeout_ms`, or DescribeConfigs not allowed).
[[nodiscard]] Result<std::optional<int64_t>> KafkaTopicStampRetention(rd_kafka_s* rk,
                                                                      const std::string& topic,
                                                                      int timeout_ms);

// Per sink subtask: warns once when a record is stamped past the topic's retention.
class KafkaStaleStampWarning {
 public:
  // `retention`: KafkaTopicStampRetention's answer. A configuration that could not be read turns
  // the check off, said once at INFO (the sink works without it).
  void Start(std::string sink, std::string topic, Result<std::optional<int64_t>> retention);

  // On every record written; `ts` as given to the sink. Stamps <= 0 (kNoTimestamp, 0) are the
  // producer's to set: librdkafka sends the current time for them.
  void Check(TimestampMs ts) {
    if (retention_ms_ < 0) return;
    if (ts < cutoff_ && ts > 0) {
      Warn(ts);
    } else if (++unchecked_ >= kRefreshEvery) {
      Refresh();
    }
  }

 private:
  // The cutoff moves with the clock; a stale one only misses records, never warns wrongly.
  static constexpr uint32_t kRefreshEvery = 4096;
  void Refresh();
  void Warn(TimestampMs ts);

  std::string sink_, topic_;
  int64_t retention_ms_ = -1;  // < 0: off (nothing to check, or already warned)
  TimestampMs cutoff_ = kNoTimestamp;
  uint32_t unchecked_ = 0;
};

}  // namespace flow::rt
