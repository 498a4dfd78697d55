#include "flow/runtime/connectors/kafka_stamp_retention.h"

#include <librdkafka/rdkafka.h>

#include <charconv>
#include <map>

#include <fmt/format.h>

#include "flow/runtime/log/log.h"
#include "kafka_common.h"

namespace flow::rt {

Result<std::optional<int64_t>> KafkaTopicStampRetention(rd_kafka_t* rk, const std::string& topic,
                                                        int timeout_ms) {
  Result<std::map<std::string, std::string>> configs = KafkaDescribeConfigs(
      rk, RD_KAFKA_RESOURCE_TOPIC, topic, timeout_ms, fmt::format("topic `{}`", topic));
  if (!configs.ok()) return configs.status();
  auto type = configs->find("message.timestamp.type");
  if (type != configs->end() && type->second == "LogAppendTime") return std::optional<int64_t>();
  auto retention = configs->find("retention.ms");
  if (retention == configs->end()) return std::optional<int64_t>();
  const std::string& text = retention->second;
  int64_t ms = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), ms);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return Status::Unavailable(
        fmt::format("topic `{}`: retention.ms `{}` is not a number", topic, text));
  }
  return ms < 0 ? std::optional<int64_t>() : std::optional<int64_t>(ms);
}

void KafkaStaleStampWarning::Start(std::string sink, std::string topic,
                                   Result<std::optional<int64_t>> retention) {
  sink_ = std::move(sink);
  topic_ = std::move(topic);
  retention_ms_ = -1;
  if (!retention.ok()) {
    Log(LogLevel::kInfo, "kafka",
        "cannot read the output topic's retention: records stamped past it are not reported",
        {{"sink", sink_}, {"topic", topic_}, {"error", retention.status().message()}});
    return;
  }
  if (!retention->has_value()) return;
  retention_ms_ = **retention;
  Refresh();
}

void KafkaStaleStampWarning::Refresh() {
  unchecked_ = 0;
  cutoff_ = WallNowMs() - retention_ms_;
}

void KafkaStaleStampWarning::Warn(TimestampMs ts) {
  Refresh();
  if (ts >= cutoff_) return;
  Log(LogLevel::kWarn, "kafka",
      "a record is stamped past the output topic's retention: the broker deletes such records at "
      "its next retention check, read or not; give the topic a longer retention.ms (or -1), or "
      "message.timestamp.type=LogAppendTime (said once per sink subtask)",
      {{"sink", sink_},
       {"topic", topic_},
       {"timestamp", FormatTimestamp(ts)},
       {"retention_ms", std::to_string(retention_ms_)}});
  retention_ms_ = -1;
}

}  // namespace flow::rt
