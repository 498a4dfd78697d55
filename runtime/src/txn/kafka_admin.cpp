#include "kafka_admin.h"

#include <charconv>
#include <memory>

#include <fmt/format.h>

#include "flow/runtime/common/serde.h"
#include "flow/runtime/connectors/kafka_instance.h"

namespace flow::rt::txn_detail {
namespace {

constexpr uint32_t kProgressMagic = 0x47504c46;  // "FLPG"
constexpr uint32_t kProgressVersion = 1;

using QueuePtr = KafkaQueuePtr;
using EventPtr = KafkaEventPtr;

Result<EventPtr> WaitAdmin(rd_kafka_queue_t* queue, int timeout_ms, std::string_view what) {
  return KafkaWaitAdmin(queue, timeout_ms, fmt::format("kafka exactly-once: {}", what));
}

}  // namespace

Result<rd_kafka_t*> MakeClient(rd_kafka_type_t type,
                               const std::map<std::string, std::string>& settings,
                               std::string_view what, KafkaSecurityWatch* watch,
                               DeliveryCallback on_delivery, void* opaque) {
  Result<rd_kafka_conf_t*> made = MakeKafkaConf(settings, what);  // masks secret values
  if (!made.ok()) return made.status();
  rd_kafka_conf_t* conf = *made;
  if (watch != nullptr) {
    rd_kafka_conf_set_error_cb(conf, &KafkaSecurityWatch::OnError);
    rd_kafka_conf_set_opaque(conf, watch);
  } else if (on_delivery != nullptr) {
    rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
    rd_kafka_conf_set_opaque(conf, opaque);
  }
  char err[512];
  rd_kafka_t* rk = rd_kafka_new(type, conf, err, sizeof err);
  if (rk == nullptr) {
    rd_kafka_conf_destroy(conf);
    return Status::InvalidArgument(fmt::format("{}: cannot create client: {}", what, err));
  }
  return rk;
}

Result<int64_t> BrokerMaxTransactionTimeout(rd_kafka_t* rk, const std::string& brokers,
                                            int timeout_ms) {
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, nullptr, &md, timeout_ms);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable(
        fmt::format("kafka exactly-once: brokers {} unreachable ({}) after {} ms", brokers,
                    rd_kafka_err2str(err), timeout_ms));
  }
  if (md->broker_cnt < 1) {
    rd_kafka_metadata_destroy(md);
    return Status::Unavailable(
        fmt::format("kafka exactly-once: brokers {} listed no broker", brokers));
  }
  std::string broker_id = std::to_string(md->brokers[0].id);
  rd_kafka_metadata_destroy(md);
  Result<std::map<std::string, std::string>> configs =
      KafkaDescribeConfigs(rk, RD_KAFKA_RESOURCE_BROKER, broker_id, timeout_ms,
                           fmt::format("broker {} of {}", broker_id, brokers));
  if (!configs.ok()) return configs.status();
  auto it = configs->find("transaction.max.timeout.ms");
  int64_t ms = 0;
  if (it != configs->end() &&
      std::from_chars(it->second.data(), it->second.data() + it->second.size(), ms).ec ==
          std::errc()) {
    return ms;
  }
  return Status::NotFound(fmt::format(
      "kafka exactly-once: broker {} did not report transaction.max.timeout.ms", broker_id));
}

Status CreateTopicIfMissing(rd_kafka_t* rk, const std::string& topic, int32_t partitions,
                            int replication_factor,
                            const std::map<std::string, std::string>& configs, int timeout_ms,
                            std::string_view what) {
  char errstr[512];
  rd_kafka_NewTopic_t* nt =
      rd_kafka_NewTopic_new(topic.c_str(), partitions, replication_factor, errstr, sizeof errstr);
  if (nt == nullptr) {
    return Status::InvalidArgument(fmt::format("kafka: {} `{}`: {}", what, topic, errstr));
  }
  for (const auto& [name, value] : configs) {
    if (rd_kafka_NewTopic_set_config(nt, name.c_str(), value.c_str()) !=
        RD_KAFKA_RESP_ERR_NO_ERROR) {
      rd_kafka_NewTopic_destroy(nt);
      return Status::Internal(fmt::format("kafka: cannot set {} on the {}", name, what));
    }
  }
  QueuePtr queue(rd_kafka_queue_new(rk));
  rd_kafka_AdminOptions_t* opts = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS);
  rd_kafka_AdminOptions_set_request_timeout(opts, timeout_ms, errstr, sizeof errstr);
  rd_kafka_AdminOptions_set_operation_timeout(opts, timeout_ms, errstr, sizeof errstr);
  rd_kafka_CreateTopics(rk, &nt, 1, opts, queue.get());
  rd_kafka_AdminOptions_destroy(opts);
  rd_kafka_NewTopic_destroy(nt);
  Result<EventPtr> event =
      WaitAdmin(queue.get(), timeout_ms, fmt::format("creating the {} {}", what, topic));
  if (!event.ok()) return event.status();
  const rd_kafka_CreateTopics_result_t* result = rd_kafka_event_CreateTopics_result(event->get());
  size_t n = 0;
  const rd_kafka_topic_result_t** topics =
      result != nullptr ? rd_kafka_CreateTopics_result_topics(result, &n) : nullptr;
  for (size_t i = 0; i < n; ++i) {
    rd_kafka_resp_err_t err = rd_kafka_topic_result_error(topics[i]);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR && err != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
      const char* msg = rd_kafka_topic_result_error_string(topics[i]);
      return Status::IoError(fmt::format("kafka: cannot create the {} `{}`: {}", what, topic,
                                         msg != nullptr ? msg : rd_kafka_err2str(err)));
    }
  }
  return Status::Ok();
}

Status EnsureProgressTopic(rd_kafka_t* rk, const std::string& topic, int replication_factor,
                           int timeout_ms) {
  return CreateTopicIfMissing(rk, topic, 1, replication_factor, {{"cleanup.policy", "compact"}},
                              timeout_ms, "progress topic");
}

Result<std::vector<std::string>> TopicsWithPrefix(rd_kafka_t* rk, std::string_view prefix,
                                                  int timeout_ms) {
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 1, nullptr, &md, timeout_ms);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable(
        fmt::format("kafka: listing topics failed: {}", rd_kafka_err2str(err)));
  }
  std::vector<std::string> names;
  for (int i = 0; i < md->topic_cnt; ++i) {
    std::string_view name = md->topics[i].topic;
    if (name.substr(0, prefix.size()) == prefix) names.emplace_back(name);
  }
  rd_kafka_metadata_destroy(md);
  return names;
}

Result<std::vector<std::string>> GroupsWithPrefix(rd_kafka_t* rk, std::string_view prefix,
                                                  int timeout_ms) {
  QueuePtr queue(rd_kafka_queue_new(rk));
  rd_kafka_AdminOptions_t* opts =
      rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_LISTCONSUMERGROUPS);
  char errstr[256];
  rd_kafka_AdminOptions_set_request_timeout(opts, timeout_ms, errstr, sizeof errstr);
  rd_kafka_ListConsumerGroups(rk, opts, queue.get());
  rd_kafka_AdminOptions_destroy(opts);
  Result<EventPtr> event = WaitAdmin(queue.get(), timeout_ms, "listing consumer groups");
  if (!event.ok()) return event.status();
  const rd_kafka_ListConsumerGroups_result_t* result =
      rd_kafka_event_ListConsumerGroups_result(event->get());
  size_t n_errors = 0;
  const rd_kafka_error_t** errors = rd_kafka_ListConsumerGroups_result_errors(result, &n_errors);
  if (n_errors > 0) {
    // A broker that did not answer: its groups are unknown, so the list is incomplete.
    return Status::Unavailable(
        fmt::format("kafka: listing consumer groups failed: {}", rd_kafka_error_string(errors[0])));
  }
  size_t n = 0;
  const rd_kafka_ConsumerGroupListing_t** groups =
      rd_kafka_ListConsumerGroups_result_valid(result, &n);
  std::vector<std::string> ids;
  for (size_t i = 0; i < n; ++i) {
    std::string_view id = rd_kafka_ConsumerGroupListing_group_id(groups[i]);
    if (id.substr(0, prefix.size()) == prefix) ids.emplace_back(id);
  }
  return ids;
}

Result<TopicBounds> ProgressTopicBounds(rd_kafka_t* rk, const std::string& topic, int timeout_ms) {
  TopicBounds b;
  rd_kafka_resp_err_t err =
      rd_kafka_query_watermark_offsets(rk, topic.c_str(), 0, &b.low, &b.high, timeout_ms);
  if (err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART || err == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC ||
      err == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION) {
    return Status::NotFound(fmt::format("kafka: progress topic `{}` does not exist", topic));
  }
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable(
        fmt::format("kafka: end of progress topic `{}`: {}", topic, rd_kafka_err2str(err)));
  }
  return b;
}

Result<std::map<std::string, std::string>> InstanceMembers(rd_kafka_t* rk,
                                                           const std::set<std::string>& groups,
                                                           int timeout_ms) {
  Result<std::map<std::string, std::set<std::string>>> members =
      GroupStaticMembers(rk, groups, timeout_ms);
  if (!members.ok()) return members.status();
  std::map<std::string, std::string> out;
  for (const auto& [group, ids] : *members) {
    for (const std::string& id : ids) {
      std::string name = KafkaInstanceOfMember(group, id);
      if (!name.empty()) {
        out.try_emplace(std::move(name),
                        fmt::format("member `{}` of consumer group `{}`", id, group));
      }
    }
  }
  return out;
}

Status DeleteTopicIfExists(rd_kafka_t* rk, const std::string& topic, int timeout_ms) {
  QueuePtr queue(rd_kafka_queue_new(rk));
  rd_kafka_AdminOptions_t* opts = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_DELETETOPICS);
  char errstr[256];
  rd_kafka_AdminOptions_set_operation_timeout(opts, timeout_ms, errstr, sizeof errstr);
  rd_kafka_DeleteTopic_t* del = rd_kafka_DeleteTopic_new(topic.c_str());
  rd_kafka_DeleteTopics(rk, &del, 1, opts, queue.get());
  rd_kafka_DeleteTopic_destroy(del);
  rd_kafka_AdminOptions_destroy(opts);
  Result<EventPtr> event = WaitAdmin(queue.get(), timeout_ms, "deleting a topic");
  if (!event.ok()) return event.status();
  size_t n = 0;
  const rd_kafka_topic_result_t** results =
      rd_kafka_DeleteTopics_result_topics(rd_kafka_event_DeleteTopics_result(event->get()), &n);
  for (size_t i = 0; i < n; ++i) {
    rd_kafka_resp_err_t err = rd_kafka_topic_result_error(results[i]);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR && err != RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
      return Status::Unavailable(
          fmt::format("kafka: deleting topic `{}` failed: {}", topic, rd_kafka_err2str(err)));
    }
  }
  return Status::Ok();
}

Result<std::map<std::string, std::set<std::string>>> GroupStaticMembers(
    rd_kafka_t* rk, const std::set<std::string>& groups, int timeout_ms) {
  std::vector<const char*> ids;
  for (const std::string& g : groups) ids.push_back(g.c_str());
  QueuePtr queue(rd_kafka_queue_new(rk));
  rd_kafka_AdminOptions_t* opts =
      rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_DESCRIBECONSUMERGROUPS);
  char errstr[256];
  rd_kafka_AdminOptions_set_request_timeout(opts, kKafkaCoordinatorAdminTimeoutMs, errstr,
                                            sizeof errstr);
  rd_kafka_DescribeConsumerGroups(rk, ids.data(), ids.size(), opts, queue.get());
  rd_kafka_AdminOptions_destroy(opts);
  Result<EventPtr> event = WaitAdmin(queue.get(), timeout_ms, "describing consumer groups");
  if (!event.ok()) return event.status();
  std::map<std::string, std::set<std::string>> members;
  for (const KafkaGroupLook& g : KafkaGroupLooks(event->get(), "")) {
    if (!g.error.empty()) {
      return Status::Unavailable(
          fmt::format("kafka: describing consumer group `{}` failed: {}", g.group, g.error));
    }
    std::set<std::string>& ids_of_group = members[g.group];
    for (const auto& [id, owned] : g.members) {
      if (!id.empty()) ids_of_group.insert(id);  // "" is a dynamic member
    }
  }
  for (const std::string& g : groups) {
    if (members.count(g) == 0) {
      return Status::Unavailable(fmt::format("kafka: consumer group `{}` was not described", g));
    }
  }
  return members;
}

std::string EncodeProgress(const std::string& job_id, int64_t checkpoint_id,
                           uint32_t participants) {
  BinaryWriter w;
  w.PutU32(kProgressMagic);
  w.PutU32(kProgressVersion);
  w.PutString(job_id);
  w.PutI64(checkpoint_id);
  w.PutU32(participants);
  w.PutU32(Crc32c(w.data()));
  return w.Release();
}

Status DecodeProgress(std::string_view bytes, std::string* job_id, int64_t* checkpoint_id,
                      uint32_t* participants) {
  auto bad = [&](std::string_view why) {
    return Status::Corruption(
        fmt::format("kafka exactly-once: progress record of {} bytes: {}", bytes.size(), why));
  };
  if (bytes.size() < 4) return bad("too short");
  uint32_t stored_crc = 0;
  BinaryReader tail(bytes.substr(bytes.size() - 4));
  FLOW_RETURN_IF_ERROR(tail.GetU32(&stored_crc));
  if (Crc32c(bytes.substr(0, bytes.size() - 4)) != stored_crc) return bad("checksum mismatch");
  BinaryReader in(bytes.substr(0, bytes.size() - 4));
  uint32_t magic = 0, version = 0;
  FLOW_RETURN_IF_ERROR(in.GetU32(&magic));
  FLOW_RETURN_IF_ERROR(in.GetU32(&version));
  if (magic != kProgressMagic || version != kProgressVersion) return bad("bad magic or version");
  FLOW_RETURN_IF_ERROR(in.GetString(job_id));
  FLOW_RETURN_IF_ERROR(in.GetI64(checkpoint_id));
  FLOW_RETURN_IF_ERROR(in.GetU32(participants));
  if (!in.AtEnd()) return bad("trailing bytes");
  return Status::Ok();
}

}  // namespace flow::rt::txn_detail
