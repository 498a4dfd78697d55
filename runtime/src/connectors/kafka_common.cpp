#include "kafka_common.h"

#include "flow/runtime/common/bounded_call.h"
#include "flow/runtime/connectors/kafka_properties.h"
#include "flow/runtime/log/log.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>

namespace flow::rt {

Result<rd_kafka_conf_t*> MakeKafkaConf(const std::map<std::string, std::string>& settings,
                                       std::string_view what) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char err[512];
  for (const auto& [key, value] : settings) {
    if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      // librdkafka's own message may quote the value too: for secrets, leave it out.
      return Status::InvalidArgument(
          IsSecretKafkaProperty(key)
              ? fmt::format("{}: property `{}`=`***` rejected", what, key)
              : fmt::format("{}: property `{}`=`{}` rejected: {}", what, key, value, err));
    }
  }
  return conf;
}

Result<rd_kafka_t*> MakeKafkaClient(rd_kafka_type_t type,
                                    const std::map<std::string, std::string>& settings,
                                    std::string_view what) {
  Result<rd_kafka_conf_t*> conf = MakeKafkaConf(settings, what);
  if (!conf.ok()) return conf.status();
  char err[512];
  rd_kafka_t* rk = rd_kafka_new(type, *conf, err, sizeof err);
  if (rk == nullptr) {
    rd_kafka_conf_destroy(*conf);
    return Status::Unavailable(fmt::format("{}: cannot create a client: {}", what, err));
  }
  return rk;
}

Status KafkaError(rd_kafka_resp_err_t err, std::string message) {
  switch (err) {
    case RD_KAFKA_RESP_ERR__TRANSPORT:
    case RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN:
    case RD_KAFKA_RESP_ERR__TIMED_OUT:
    case RD_KAFKA_RESP_ERR__RESOLVE:
    case RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT:
    case RD_KAFKA_RESP_ERR__MSG_TIMED_OUT:
    case RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS:
    case RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION:
      return Status::Unavailable(std::move(message));
    case RD_KAFKA_RESP_ERR__FENCED:
    case RD_KAFKA_RESP_ERR_PRODUCER_FENCED:
    case RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH:
      return Status::Fenced(std::move(message));
    case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
    case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
    case RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION:
      return Status::NotFound(std::move(message));
    default:
      return Status::IoError(std::move(message));
  }
}

Result<int32_t> KafkaPartitionCount(rd_kafka_t* rk, const std::string& topic,
                                    const std::string& brokers, int timeout_ms) {
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk, topic.c_str(), nullptr);
  if (rkt == nullptr) {
    return Status::InvalidArgument(fmt::format("kafka: invalid topic name `{}`", topic));
  }
  const rd_kafka_metadata_t* md = nullptr;
  const int64_t start = SteadyNowMs();
  const int64_t deadline = start + timeout_ms;
  // A topic created a moment ago may be unknown to the broker answering for a short while (its
  // metadata cache lags the controller): "unknown topic" is asked again for this long.
  const int64_t new_topic_deadline = start + std::min(timeout_ms, kKafkaNewTopicGraceMs);
  rd_kafka_resp_err_t err;
  while (true) {
    int remaining = static_cast<int>(std::max<int64_t>(deadline - SteadyNowMs(), 1));
    err = rd_kafka_metadata(rk, 0, rkt, &md, remaining);
    // A new topic may report "leader not available" for a moment: ask again until the deadline.
    bool again = err == RD_KAFKA_RESP_ERR_NO_ERROR && md->topic_cnt == 1 &&
                 (KafkaRetriable(md->topics[0].err) ||
                  (md->topics[0].err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART &&
                   SteadyNowMs() < new_topic_deadline));
    if (!again || SteadyNowMs() >= deadline) break;
    rd_kafka_metadata_destroy(md);
    md = nullptr;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  rd_kafka_topic_destroy(rkt);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    // Any failure to get metadata at all means the brokers did not answer in time.
    return Status::Unavailable(fmt::format("kafka: brokers {} unreachable ({}) after {} ms",
                                           brokers, rd_kafka_err2str(err), timeout_ms));
  }
  Status status;
  int32_t count = 0;
  if (md->topic_cnt != 1) {
    status = Status::NotFound(fmt::format("kafka: topic `{}` not found", topic));
  } else if (md->topics[0].err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    const bool unknown = md->topics[0].err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;
    status = KafkaError(
        md->topics[0].err,
        fmt::format("kafka: topic `{}`: {}{}", topic, rd_kafka_err2str(md->topics[0].err),
                    unknown ? " (the broker does not know it: create the topic first)" : ""));
  } else {
    count = md->topics[0].partition_cnt;
    if (count <= 0)
      status = Status::NotFound(fmt::format("kafka: topic `{}` has no partitions", topic));
  }
  rd_kafka_metadata_destroy(md);
  if (!status.ok()) return status;
  return count;
}

bool KafkaRetriable(rd_kafka_resp_err_t err) {
  switch (err) {
    case RD_KAFKA_RESP_ERR__TRANSPORT:
    case RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN:
    case RD_KAFKA_RESP_ERR__TIMED_OUT:
    case RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT:
    case RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION:
    case RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS:
    case RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_NOT_COORDINATOR:
      return true;
    default:
      return false;
  }
}

rd_kafka_resp_err_t KafkaCommittedRetrying(rd_kafka_t* rk, rd_kafka_topic_partition_list_t* list,
                                           int64_t timeout_ms) {
  const int64_t deadline = SteadyNowMs() + timeout_ms;
  while (true) {
    const int remaining = static_cast<int>(std::max<int64_t>(deadline - SteadyNowMs(), 1));
    const rd_kafka_resp_err_t err = rd_kafka_committed(rk, list, remaining);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR || !KafkaRetriable(err) || SteadyNowMs() >= deadline)
      return err;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

Status KafkaWaitForLeaders(rd_kafka_t* rk, const std::string& topic, int32_t partitions,
                           int timeout_ms) {
  int64_t deadline = SteadyNowMs() + timeout_ms;
  for (int32_t p = 0; p < partitions; ++p) {
    while (true) {
      int64_t low = 0;
      int64_t high = 0;
      int remaining = static_cast<int>(std::max<int64_t>(deadline - SteadyNowMs(), 1));
      rd_kafka_resp_err_t err =
          rd_kafka_query_watermark_offsets(rk, topic.c_str(), p, &low, &high, remaining);
      if (err == RD_KAFKA_RESP_ERR_NO_ERROR) break;
      // The topic exists (metadata said so): "unknown partition" here means "not served yet".
      bool retry = KafkaRetriable(err) || err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART ||
                   err == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION;
      if (!retry || SteadyNowMs() >= deadline) {
        return Status::Unavailable(
            fmt::format("kafka: partition {} of topic `{}` has no serving leader after {} ms ({})",
                        p, topic, timeout_ms, rd_kafka_err2str(err)));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  return Status::Ok();
}

bool KafkaSecurityFailure(int err, std::string_view reason) {
  // Other TLS errors are left to the usual bounds: a broker going down mid-handshake reports
  // RD_KAFKA_RESP_ERR__SSL too ("unexpected eof"), and that must stay retriable.
  return err == RD_KAFKA_RESP_ERR__AUTHENTICATION ||
         ((err == RD_KAFKA_RESP_ERR__SSL || err == RD_KAFKA_RESP_ERR__TRANSPORT) &&
          reason.find("certificate verify failed") != std::string_view::npos);
}

Status KafkaSecurityStatus(std::string_view what, const std::string& brokers, int err,
                           std::string_view reason) {
  if (err == RD_KAFKA_RESP_ERR__AUTHENTICATION) {
    return Status::InvalidArgument(fmt::format(
        "{}: brokers {} refused the login: SASL authentication failed (check sasl.mechanism, "
        "sasl.username, sasl.password): {}",
        what, brokers, reason));
  }
  return Status::InvalidArgument(fmt::format(
      "{}: brokers {}: TLS handshake failed: the broker's certificate failed verification (check "
      "ssl.ca.location: the CA that signed it; ssl.endpoint.identification.algorithm: its host "
      "name): {}",
      what, brokers, reason));
}

void KafkaSecurityWatch::OnError(rd_kafka_t*, int err, const char* reason, void* opaque) {
  static_cast<KafkaSecurityWatch*>(opaque)->Record(err, reason);
}

void KafkaSecurityWatch::Record(int err, const char* reason) {
  std::string_view text = reason != nullptr ? reason : "";
  if (!KafkaSecurityFailure(err, text)) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (err_ != 0) return;
  err_ = err;
  reason_ = text;
}

Status KafkaSecurityWatch::Failure(std::string_view what, const std::string& brokers) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (err_ == 0) return Status::Ok();
  return KafkaSecurityStatus(what, brokers, err_, reason_);
}

Status KafkaAwaitBrokers(rd_kafka_t* rk, const std::function<void()>& serve,
                         const std::function<Status()>& failure, const std::string& brokers,
                         int timeout_ms, std::string_view what) {
  constexpr int kAttemptMs = 250;
  const int64_t deadline = SteadyNowMs() + timeout_ms;
  while (true) {
    const int left = static_cast<int>(std::max<int64_t>(deadline - SteadyNowMs(), 1));
    const rd_kafka_metadata_t* md = nullptr;
    // No topic, all_topics=0: the brokers only.
    rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, nullptr, &md, std::min(left, kAttemptMs));
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      rd_kafka_metadata_destroy(md);
      return Status::Ok();
    }
    serve();
    FLOW_RETURN_IF_ERROR(failure());
    if (SteadyNowMs() >= deadline) {
      return Status::Unavailable(fmt::format("{}: brokers {} unreachable ({}) after {} ms", what,
                                             brokers, rd_kafka_err2str(err), timeout_ms));
    }
  }
}

Result<KafkaEventPtr> KafkaWaitAdmin(rd_kafka_queue_t* queue, int timeout_ms,
                                     std::string_view what) {
  KafkaEventPtr event(rd_kafka_queue_poll(queue, timeout_ms + 1000));
  if (!event) {
    return Status::Unavailable(fmt::format("{}: no answer within {} ms", what, timeout_ms));
  }
  if (rd_kafka_event_error(event.get()) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable(
        fmt::format("{}: {}", what, rd_kafka_event_error_string(event.get())));
  }
  return event;
}

Result<std::map<std::string, std::string>> KafkaDescribeConfigs(rd_kafka_t* rk,
                                                                rd_kafka_ResourceType_t type,
                                                                const std::string& name,
                                                                int timeout_ms,
                                                                std::string_view what) {
  KafkaQueuePtr queue(rd_kafka_queue_new(rk));
  rd_kafka_ConfigResource_t* resource = rd_kafka_ConfigResource_new(type, name.c_str());
  rd_kafka_AdminOptions_t* opts = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS);
  char errstr[256];
  rd_kafka_AdminOptions_set_request_timeout(opts, timeout_ms, errstr, sizeof errstr);
  rd_kafka_DescribeConfigs(rk, &resource, 1, opts, queue.get());
  rd_kafka_AdminOptions_destroy(opts);
  rd_kafka_ConfigResource_destroy(resource);
  const std::string context = fmt::format("cannot read the configuration of {}", what);
  Result<KafkaEventPtr> event = KafkaWaitAdmin(queue.get(), timeout_ms, context);
  if (!event.ok()) return event.status();
  auto unavailable = [&](std::string_view why) {
    return Status::Unavailable(fmt::format("{}: {}", context, why));
  };
  const rd_kafka_DescribeConfigs_result_t* result =
      rd_kafka_event_DescribeConfigs_result(event->get());
  size_t n_resources = 0;
  const rd_kafka_ConfigResource_t** resources =
      result != nullptr ? rd_kafka_DescribeConfigs_result_resources(result, &n_resources) : nullptr;
  if (n_resources != 1) return unavailable("no answer for it");
  if (rd_kafka_ConfigResource_error(resources[0]) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return unavailable(rd_kafka_ConfigResource_error_string(resources[0]));
  }
  std::map<std::string, std::string> out;
  size_t n_configs = 0;
  const rd_kafka_ConfigEntry_t** configs =
      rd_kafka_ConfigResource_configs(resources[0], &n_configs);
  for (size_t c = 0; c < n_configs; ++c) {
    if (const char* value = rd_kafka_ConfigEntry_value(configs[c]); value != nullptr) {
      out.emplace(rd_kafka_ConfigEntry_name(configs[c]), value);
    }
  }
  return out;
}

std::map<std::string, std::string> KafkaConnectionProperties(
    const std::map<std::string, std::string>& properties) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : properties) {
    if (k.starts_with("security.") || k.starts_with("sasl.") || k.starts_with("ssl.")) out[k] = v;
  }
  return out;
}

KafkaHeaders MakeKafkaHeaders(std::span<const OutHeader> headers) {
  if (headers.empty()) return nullptr;
  KafkaHeaders h(rd_kafka_headers_new(headers.size()));
  for (const OutHeader& x : headers) {
    rd_kafka_header_add(h.get(), x.name.data(), static_cast<ssize_t>(x.name.size()), x.value.data(),
                        static_cast<ssize_t>(x.value.size()));
  }
  return h;
}

void DestroyGroupConsumer(rd_kafka_t* rk, bool had_assignment) {
  constexpr int kFixedIn = 0x020300ff;  // 2.3.0 destroys a consumer without assignor state
  if (had_assignment || rd_kafka_version() >= kFixedIn) {
    DestroyClosedConsumer(rk, "group consumer");
    return;
  }
  static std::mutex mu;
  static auto* kept = new std::vector<rd_kafka_t*>();  // never destroyed (see the header)
  std::lock_guard<std::mutex> lock(mu);
  kept->push_back(rk);
}

std::vector<KafkaGroupLook> KafkaGroupLooks(const rd_kafka_event_t* event, std::string_view topic) {
  const rd_kafka_DescribeConsumerGroups_result_t* result =
      rd_kafka_event_DescribeConsumerGroups_result(const_cast<rd_kafka_event_t*>(event));
  size_t n = 0;
  const rd_kafka_ConsumerGroupDescription_t** groups =
      result != nullptr ? rd_kafka_DescribeConsumerGroups_result_groups(result, &n) : nullptr;
  std::vector<KafkaGroupLook> looks(n);
  for (size_t i = 0; i < n; ++i) {
    const rd_kafka_ConsumerGroupDescription_t* g = groups[i];
    KafkaGroupLook& look = looks[i];
    look.group = rd_kafka_ConsumerGroupDescription_group_id(g);
    if (const rd_kafka_error_t* error = rd_kafka_ConsumerGroupDescription_error(g)) {
      look.error = rd_kafka_error_string(error);
      continue;
    }
    look.stable =
        rd_kafka_ConsumerGroupDescription_state(g) == RD_KAFKA_CONSUMER_GROUP_STATE_STABLE;
    for (size_t m = 0; m < rd_kafka_ConsumerGroupDescription_member_count(g); ++m) {
      const rd_kafka_MemberDescription_t* member = rd_kafka_ConsumerGroupDescription_member(g, m);
      const char* id = rd_kafka_MemberDescription_group_instance_id(member);
      auto& [name, owned] =
          look.members.emplace_back(id != nullptr ? id : "", std::vector<int32_t>{});
      const rd_kafka_topic_partition_list_t* parts =
          rd_kafka_MemberAssignment_partitions(rd_kafka_MemberDescription_assignment(member));
      for (int p = 0; parts != nullptr && p < parts->cnt; ++p) {
        if (topic == parts->elems[p].topic) owned.push_back(parts->elems[p].partition);
      }
    }
  }
  return looks;
}

void DestroyClosedConsumer(rd_kafka_t* rk, std::string_view what) {
  const std::string name = rd_kafka_name(rk);
  if (RunBounded([rk] { rd_kafka_destroy(rk); }, kConsumerDestroyBoundMs)) return;
  Log(LogLevel::kWarn, "kafka",
      "a closed consumer is still being destroyed; going on without it (librdkafka since 2.0 can "
      "wait for ever after a broker outage)",
      {{"client", name},
       {"what", std::string(what)},
       {"waited_ms", std::to_string(kConsumerDestroyBoundMs)}});
}

}  // namespace flow::rt
