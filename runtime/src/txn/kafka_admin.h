#pragma once
// Small librdkafka helpers of the txn area: configuration, admin calls, the progress record.

#include <librdkafka/rdkafka.h>

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "../connectors/kafka_common.h"
#include "flow/runtime/common/status.h"

namespace flow::rt::txn_detail {

// A client with `settings`; kInvalidArgument naming a rejected setting. With a `watch`, the
// client's error callback records security failures in it (served by rd_kafka_poll). With
// `on_delivery` (a producer, no watch), it gets every delivery report with `opaque`.
using DeliveryCallback = void (*)(rd_kafka_t*, const rd_kafka_message_t*, void*);
[[nodiscard]] Result<rd_kafka_t*> MakeClient(rd_kafka_type_t type,
                                             const std::map<std::string, std::string>& settings,
                                             std::string_view what,
                                             KafkaSecurityWatch* watch = nullptr,
                                             DeliveryCallback on_delivery = nullptr,
                                             void* opaque = nullptr);

// The broker's transaction.max.timeout.ms (asks the first broker in the metadata).
[[nodiscard]] Result<int64_t> BrokerMaxTransactionTimeout(rd_kafka_t* rk,
                                                          const std::string& brokers,
                                                          int timeout_ms);

// Creates `topic` with `partitions` and topic-level `configs` unless it exists (an existing topic
// is left as it is: callers check what they need of it). `what` names the topic's role in errors.
[[nodiscard]] Status CreateTopicIfMissing(rd_kafka_t* rk, const std::string& topic,
                                          int32_t partitions, int replication_factor,
                                          const std::map<std::string, std::string>& configs,
                                          int timeout_ms, std::string_view what);

// Creates `topic` (1 partition, compacted) unless it exists.
[[nodiscard]] Status EnsureProgressTopic(rd_kafka_t* rk, const std::string& topic,
                                         int replication_factor, int timeout_ms);

// Names of the topics that start with `prefix`.
[[nodiscard]] Result<std::vector<std::string>> TopicsWithPrefix(rd_kafka_t* rk,
                                                                std::string_view prefix,
                                                                int timeout_ms);

// Ids of the consumer groups that start with `prefix` (every state: empty groups too).
[[nodiscard]] Result<std::vector<std::string>> GroupsWithPrefix(rd_kafka_t* rk,
                                                                std::string_view prefix,
                                                                int timeout_ms);

// The first and the end offset of a progress topic's one partition. kNotFound when the topic does
// not exist; kUnavailable naming it otherwise.
struct TopicBounds {
  int64_t low = 0;
  int64_t high = 0;
};
[[nodiscard]] Result<TopicBounds> ProgressTopicBounds(rd_kafka_t* rk, const std::string& topic,
                                                      int timeout_ms);

// Deletes `topic`; a topic that does not exist is no error.
[[nodiscard]] Status DeleteTopicIfExists(rd_kafka_t* rk, const std::string& topic, int timeout_ms);

// The group.instance.id of every current member of each of `groups` (static members only).
[[nodiscard]] Result<std::map<std::string, std::set<std::string>>> GroupStaticMembers(
    rd_kafka_t* rk, const std::set<std::string>& groups, int timeout_ms);

// The Flow instances (KafkaInstanceOfMember) with a static member in one of `groups`, each with
// where one of its members was found: "member `<id>` of consumer group `<group>`".
[[nodiscard]] Result<std::map<std::string, std::string>> InstanceMembers(
    rd_kafka_t* rk, const std::set<std::string>& groups, int timeout_ms);

// Progress record value: "FLPG" u32 version, job id, checkpoint id, participants, CRC-32C.
std::string EncodeProgress(const std::string& job_id, int64_t checkpoint_id, uint32_t participants);
[[nodiscard]] Status DecodeProgress(std::string_view bytes, std::string* job_id,
                                    int64_t* checkpoint_id, uint32_t* participants);

}  // namespace flow::rt::txn_detail
