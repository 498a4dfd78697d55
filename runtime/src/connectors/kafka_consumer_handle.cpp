#include "kafka_consumer_handle.h"

#include "flow/runtime/common/time.h"
#include "flow/runtime/connectors/kafka_instance.h"
#include "flow/runtime/connectors/kafka_source.h"
#include "flow/runtime/log/log.h"
#include "kafka_common.h"

namespace flow::rt {
namespace {

// A clean stop waits at most this long for the revocation, and this long after it for librdkafka
// to send LeaveGroup.
constexpr int64_t kLeaveGroupMs = 3000;
constexpr int64_t kLeaveSendMs = 300;

}  // namespace

KafkaConsumerHandle::~KafkaConsumerHandle() {
  Drop(/*stopping=*/false);
}

void KafkaConsumerHandle::Drop(bool stopping) {
  if (rk == nullptr) return;
  source = nullptr;
  // A consumer with a fatal error (fenced as a static member) is out of the group already, and
  // the protocol calls of a leave only meet its error.
  const bool fatal = rd_kafka_fatal_error(rk, nullptr, 0) != RD_KAFKA_RESP_ERR_NO_ERROR;
  const bool leave = (stopping || revoked) && !fatal;
  if (leave) LeaveKafkaGroup(rk);
  rd_kafka_consumer_close(rk);
  DestroyGroupConsumer(rk, had_assignment);
  rk = nullptr;
  Log(LogLevel::kInfo, "kafka",
      leave ? "left consumer group"
            : "closed consumer group member (it stays until its session "
              "times out)",
      {{"source", operator_name}, {"subtask", subtask}, {"group", group}, {"instance", instance}});
}

void LeaveKafkaGroup(rd_kafka_t* rk) {
  // librdkafka sends LeaveGroup once the unsubscription's unassign is done, but never for a
  // static member that is already closing: serve the revocation first, then give the request a
  // moment to leave before rd_kafka_consumer_close.
  if (rd_kafka_unsubscribe(rk) != RD_KAFKA_RESP_ERR_NO_ERROR) return;
  const int64_t deadline = SteadyNowMs() + kLeaveGroupMs;
  int64_t empty_since = -1;
  while (SteadyNowMs() < deadline) {
    if (rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 50); m != nullptr)
      rd_kafka_message_destroy(m);
    rd_kafka_topic_partition_list_t* assignment = nullptr;
    if (rd_kafka_assignment(rk, &assignment) != RD_KAFKA_RESP_ERR_NO_ERROR) break;
    const bool empty = assignment == nullptr || assignment->cnt == 0;
    if (assignment != nullptr) rd_kafka_topic_partition_list_destroy(assignment);
    if (!empty) continue;
    if (empty_since < 0) empty_since = SteadyNowMs();
    if (SteadyNowMs() - empty_since >= kLeaveSendMs) break;
  }
}

void KafkaHandleRebalance(rd_kafka_t* rk, rd_kafka_resp_err_t err,
                          rd_kafka_topic_partition_list_t* partitions, void* opaque) {
  auto* handle = static_cast<KafkaConsumerHandle*>(opaque);
  if (handle->source != nullptr) {
    handle->source->HandleRebalance(static_cast<int>(err), partitions);
    return;
  }
  // A member being dropped: nothing reads it any more, but the protocol must go on (its leave
  // waits for the revocation to be served).
  if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) handle->had_assignment = true;
  if (rd_kafka_error_t* error = ServeKafkaRebalance(rk, err, partitions); error != nullptr) {
    rd_kafka_error_destroy(error);  // it is closing anyway
  }
}

rd_kafka_error_t* ServeKafkaRebalance(rd_kafka_t* rk, rd_kafka_resp_err_t err,
                                      rd_kafka_topic_partition_list_t* partitions) {
  const bool cooperative = KafkaInstanceRebalanceIsCooperative(rd_kafka_rebalance_protocol(rk));
  if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
    if (cooperative) return rd_kafka_incremental_assign(rk, partitions);
    if (rd_kafka_resp_err_t e = rd_kafka_assign(rk, partitions); e != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return rd_kafka_error_new(e, "%s", rd_kafka_err2str(e));
    }
    return nullptr;
  }
  if (!cooperative) {
    rd_kafka_assign(rk, nullptr);
  } else if (rd_kafka_error_t* error = rd_kafka_incremental_unassign(rk, partitions);
             error != nullptr) {
    rd_kafka_error_destroy(error);
  }
  return nullptr;
}

}  // namespace flow::rt
