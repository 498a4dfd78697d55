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
  const bool leave = stopping || revoked;
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
  const bool cooperative = KafkaInstanceRebalanceIsCooperative(rd_kafka_rebalance_protocol(rk));
  rd_kafka_error_t* error = nullptr;
  if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
    handle->had_assignment = true;
    if (cooperative) {
      error = rd_kafka_incremental_assign(rk, partitions);
    } else {
      rd_kafka_assign(rk, partitions);
    }
  } else if (cooperative) {
    error = rd_kafka_incremental_unassign(rk, partitions);
  } else {
    rd_kafka_assign(rk, nullptr);
  }
  if (error != nullptr) rd_kafka_error_destroy(error);  // it is closing anyway
}

}  // namespace flow::rt
