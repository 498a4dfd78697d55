#pragma once
// KafkaConsumerHandle: a KafkaSource's consumer and the source its callbacks reach.
//
// librdkafka's callbacks get the opaque pointer fixed when the consumer was made; it points here,
// not at the source, because in a consumer group (--instance) the consumer can outlive its
// source: at an in-process restart of the job the closing source keeps it for the next run
// (common/run_handover.h), whose source of the same member takes it over. The restart then
// neither leaves nor rejoins the group, so the other instances' partitions stay where they are
// (a leave and a rejoin moved them, and their restarts moved this instance's: a rebalance
// ping-pong), and a revocation's second cooperative round comes as it does for a live member.
// While kept, nobody polls the consumer, so no callback runs; when it is dropped, the callbacks
// of its leave are served without a source.

#include <librdkafka/rdkafka.h>

#include <map>
#include <string>

#include "flow/runtime/common/run_handover.h"

namespace flow::rt {

class KafkaSource;

class KafkaConsumerHandle final : public RunHandover::Kept {
 public:
  ~KafkaConsumerHandle() override;
  // Closes the consumer, after leaving the group when `stopping` or when its last run ended on
  // a revocation (the revoked partitions' second round needs this member's rejoin or leave).
  void Drop(bool stopping) override;

  rd_kafka_t* rk = nullptr;
  // Who gets the callbacks; null while kept between runs.
  KafkaSource* source = nullptr;
  // What rk was made with: a source takes over only a consumer made as it would make one.
  std::map<std::string, std::string> settings;
  // For logs: the member's group, operator, subtask and instance.
  std::string group, operator_name, subtask, instance;
  bool had_assignment = false;  // an assign callback came (DestroyGroupConsumer)
  bool revoked = false;         // its last run ended because partitions were revoked
};

// The handover name of a kept member: its group.instance.id, from the settings it was made with.
inline std::string KafkaKeptMemberName(const std::map<std::string, std::string>& settings) {
  return "kafka group member " + settings.at("group.instance.id");
}

// Unsubscribes `rk` and serves the revocation until librdkafka sent LeaveGroup (a static member's
// close alone never sends it), bounded by about 3 s.
void LeaveKafkaGroup(rd_kafka_t* rk);

// Serves a rebalance event as the group protocol expects: partitions given are assigned
// (incrementally under the cooperative protocol); any other event unassigns them. Returns an
// assign's error (the caller destroys it); an unassign's is dropped: the run ends, or the
// partitions are gone anyway.
rd_kafka_error_t* ServeKafkaRebalance(rd_kafka_t* rk, rd_kafka_resp_err_t err,
                                      rd_kafka_topic_partition_list_t* partitions);

// The rebalance callback of every group consumer a KafkaSource makes (opaque: the handle).
void KafkaHandleRebalance(rd_kafka_t* rk, rd_kafka_resp_err_t err,
                          rd_kafka_topic_partition_list_t* partitions, void* opaque);

}  // namespace flow::rt
