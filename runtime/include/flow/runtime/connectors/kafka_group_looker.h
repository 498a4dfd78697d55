#pragma once
// One question at a time to a consumer group's coordinator: who holds which partitions of a topic
// (DescribeConsumerGroups), asked without blocking from a client of its own.

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "flow/runtime/common/status.h"
#include "flow/runtime/connectors/kafka_instance.h"

struct rd_kafka_s;
struct rd_kafka_queue_s;

namespace flow::rt {

// Why a client of its own: librdkafka 2.0.2 aborts the process when a coordinator-routed admin
// request times out before its client has found the coordinator and the client finds it
// afterwards (kKafkaCoordinatorAdminTimeoutMs), as a broker restart can arrange. So the request
// never times out, and a question left unanswered for `patience_ms` is abandoned by destroying its
// client, which is safe whether or not the coordinator was found; the next question gets a new
// client. The consumer that reads the partitions never carries such a request, and can be closed
// and destroyed at any moment.
class KafkaGroupLooker {
 public:
  // `settings`: how to connect (bootstrap.servers, security); see KafkaConnectionProperties.
  KafkaGroupLooker(std::map<std::string, std::string> settings, std::string group,
                   std::string topic, int64_t patience_ms);
  ~KafkaGroupLooker();
  KafkaGroupLooker(const KafkaGroupLooker&) = delete;
  KafkaGroupLooker& operator=(const KafkaGroupLooker&) = delete;

  bool asking() const { return queue_ != nullptr; }
  // Sends a question (none may be in flight). Fails only when the client cannot be made.
  [[nodiscard]] Status Ask(int64_t now_ms);
  // Nothing while the question is unanswered and younger than the patience; else the question is
  // over: the group's description, or nullopt (an error, no answer, or no such group).
  std::optional<std::optional<KafkaGroupLook>> Poll(int64_t now_ms);

 private:
  void DropClient();

  std::map<std::string, std::string> settings_;
  std::string group_;
  std::string topic_;
  int64_t patience_ms_;
  rd_kafka_s* rk_ = nullptr;
  rd_kafka_queue_s* queue_ = nullptr;  // the answer to the question in flight, if any
  int64_t asked_ms_ = 0;
};

}  // namespace flow::rt
