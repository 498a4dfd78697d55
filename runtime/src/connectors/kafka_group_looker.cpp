#include "flow/runtime/connectors/kafka_group_looker.h"

#include <librdkafka/rdkafka.h>

#include <utility>
#include <vector>

#include <fmt/format.h>

#include "kafka_common.h"

namespace flow::rt {

KafkaGroupLooker::KafkaGroupLooker(std::map<std::string, std::string> settings, std::string group,
                                   std::string topic, int64_t patience_ms)
    : settings_(std::move(settings)),
      group_(std::move(group)),
      topic_(std::move(topic)),
      patience_ms_(patience_ms) {
  // Its connection failures are the consumer's too, and the consumer reports them.
  settings_.try_emplace("log_level", "2");
}

KafkaGroupLooker::~KafkaGroupLooker() {
  DropClient();
}

void KafkaGroupLooker::DropClient() {
  if (queue_ != nullptr) rd_kafka_queue_destroy(queue_);
  queue_ = nullptr;
  if (rk_ != nullptr) rd_kafka_destroy(rk_);
  rk_ = nullptr;
}

Status KafkaGroupLooker::Ask(int64_t now_ms) {
  if (rk_ == nullptr) {
    Result<rd_kafka_t*> made = MakeKafkaClient(RD_KAFKA_PRODUCER, settings_,
                                               fmt::format("kafka: describing group `{}`", group_));
    if (!made.ok()) return made.status();
    rk_ = *made;
  }
  queue_ = rd_kafka_queue_new(rk_);
  asked_ms_ = now_ms;
  rd_kafka_AdminOptions_t* opts =
      rd_kafka_AdminOptions_new(rk_, RD_KAFKA_ADMIN_OP_DESCRIBECONSUMERGROUPS);
  char errstr[256];
  rd_kafka_AdminOptions_set_request_timeout(opts, kKafkaCoordinatorAdminTimeoutMs, errstr,
                                            sizeof errstr);
  const char* ids[] = {group_.c_str()};
  rd_kafka_DescribeConsumerGroups(rk_, ids, 1, opts, queue_);
  rd_kafka_AdminOptions_destroy(opts);
  return Status::Ok();
}

std::optional<std::optional<KafkaGroupLook>> KafkaGroupLooker::Poll(int64_t now_ms) {
  if (queue_ == nullptr) return std::nullopt;
  rd_kafka_event_t* event = rd_kafka_queue_poll(queue_, 0);
  if (event == nullptr) {
    if (now_ms - asked_ms_ < patience_ms_) return std::nullopt;
    DropClient();  // abandoned: see the header for why the client goes with it
    return std::optional<KafkaGroupLook>();
  }
  rd_kafka_queue_destroy(queue_);
  queue_ = nullptr;
  std::vector<KafkaGroupLook> looks = KafkaGroupLooks(event, topic_);
  const bool failed = rd_kafka_event_error(event) != RD_KAFKA_RESP_ERR_NO_ERROR;
  rd_kafka_event_destroy(event);
  // A client whose question failed may hold a half-finished request: it is not asked again.
  if (failed) DropClient();
  if (looks.size() != 1 || !looks[0].error.empty()) return std::optional<KafkaGroupLook>();
  return std::optional<KafkaGroupLook>(std::move(looks[0]));
}

}  // namespace flow::rt
