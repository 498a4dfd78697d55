#include "kafka_test_env.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <thread>

#include "kafka_test_internal.h"

namespace flow::test {

namespace internal {

int Deadline::LeftMs(int cap) const {
  auto left = std::chrono::duration_cast<Millis>(end_ - std::chrono::steady_clock::now()).count();
  left = std::max<decltype(left)>(left, 0);
  if (cap > 0) left = std::min<decltype(left)>(left, cap);
  return static_cast<int>(left);
}

std::string ErrText(rd_kafka_resp_err_t err) {
  return std::string(rd_kafka_err2str(err)) + " (" + rd_kafka_err2name(err) + ")";
}

rt::Status ErrStatus(rd_kafka_resp_err_t err, const std::string& what) {
  std::string message = what + ": " + ErrText(err);
  switch (err) {
    case RD_KAFKA_RESP_ERR__TIMED_OUT:
    case RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT:
      return rt::Status::TimedOut(std::move(message));
    case RD_KAFKA_RESP_ERR__TRANSPORT:
    case RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN:
    case RD_KAFKA_RESP_ERR__RESOLVE:
      return rt::Status::Unavailable(std::move(message));
    case RD_KAFKA_RESP_ERR__FENCED:
    case RD_KAFKA_RESP_ERR_PRODUCER_FENCED:
    case RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH:
      return rt::Status::Fenced(std::move(message));
    case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
    case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
      return rt::Status::NotFound(std::move(message));
    default:
      return rt::Status::IoError(std::move(message));
  }
}

rt::Result<RdKafkaPtr> NewClient(const std::string& brokers, rd_kafka_type_t type,
                                 const KafkaSettings& settings,
                                 const std::function<void(rd_kafka_conf_t*)>& customize) {
  char errstr[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  auto set = [&](const std::string& name, const std::string& value) -> rt::Status {
    if (rd_kafka_conf_set(conf, name.c_str(), value.c_str(), errstr, sizeof errstr) !=
        RD_KAFKA_CONF_OK) {
      return rt::Status::InvalidArgument("Kafka client setting '" + name + "'='" + value +
                                         "' rejected: " + errstr);
    }
    return rt::Status::Ok();
  };
  rt::Status status = set("bootstrap.servers", brokers);
  if (status.ok() && type == RD_KAFKA_CONSUMER && settings.count("group.id") == 0) {
    status = set("group.id", UniqueName("flow-test-group"));
  }
  for (const auto& [name, value] : settings) {
    if (!status.ok()) break;
    status = set(name, value);
  }
  if (!status.ok()) {
    rd_kafka_conf_destroy(conf);
    return status;
  }
  if (customize) customize(conf);
  rd_kafka_t* rk = rd_kafka_new(type, conf, errstr, sizeof errstr);
  if (rk == nullptr) {  // on failure the configuration is still ours
    rd_kafka_conf_destroy(conf);
    return rt::Status::InvalidArgument(std::string("cannot create a Kafka client for ") + brokers +
                                       ": " + errstr);
  }
  if (type == RD_KAFKA_CONSUMER) rd_kafka_poll_set_consumer(rk);
  return RdKafkaPtr(rk);
}

rt::Result<TopicLayout> FetchTopicLayout(rd_kafka_t* rk, const std::string& topic,
                                         const std::string& brokers, const Deadline& deadline) {
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk, topic.c_str(), nullptr);
  if (rkt == nullptr) {
    return ErrStatus(rd_kafka_last_error(), "cannot make a handle for topic '" + topic + "'");
  }
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, rkt, &md, deadline.LeftMs());
  rd_kafka_topic_destroy(rkt);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return ErrStatus(err, "metadata request for topic '" + topic + "' to " + brokers);
  }
  TopicLayout layout;
  rt::Status status;
  for (int i = 0; i < md->topic_cnt; ++i) {
    const rd_kafka_metadata_topic_t& t = md->topics[i];
    if (topic != t.topic) continue;
    if (t.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      status = ErrStatus(t.err, "topic '" + topic + "' at " + brokers);
      break;
    }
    layout.partitions = t.partition_cnt;
    for (int p = 0; p < t.partition_cnt; ++p) {
      if (t.partitions[p].err == RD_KAFKA_RESP_ERR_NO_ERROR && t.partitions[p].leader >= 0) {
        ++layout.with_leader;
      }
    }
  }
  rd_kafka_metadata_destroy(md);
  if (!status.ok()) return status;
  if (layout.partitions == 0) {
    return rt::Status::NotFound("topic '" + topic + "' does not exist at " + brokers);
  }
  return layout;
}

}  // namespace internal

namespace {

constexpr const char* kDefaultBrokers = "127.0.0.1:9092";

// Topic names allow [a-zA-Z0-9._-]; anything else in a prefix becomes '-'.
std::string SanitizeName(std::string_view prefix) {
  std::string name(prefix);
  for (char& c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) c = '-';
  }
  return name;
}

template <typename T, void (*kFree)(T*)>
struct Freer {
  void operator()(T* p) const {
    if (p != nullptr) kFree(p);
  }
};

}  // namespace

void RdKafkaDeleter::operator()(rd_kafka_t* rk) const {
  if (rk != nullptr) rd_kafka_destroy_flags(rk, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
}

std::string UniqueName(std::string_view prefix) {
  static std::atomic<uint64_t> counter{0};
  auto micros = std::chrono::duration_cast<std::chrono::microseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  return SanitizeName(prefix) + "-" + std::to_string(::getpid()) + "-" + std::to_string(micros) +
         "-" + std::to_string(counter.fetch_add(1));
}

int32_t JavaPartition(const std::string& key, int32_t partitions) {
  const uint32_t m = 0x5bd1e995;
  const auto* d = reinterpret_cast<const unsigned char*>(key.data());
  uint32_t len = static_cast<uint32_t>(key.size());
  uint32_t h = 0x9747b28c ^ len;
  for (uint32_t i = 0; i + 4 <= len; i += 4) {
    uint32_t k =
        d[i] | (uint32_t{d[i + 1]} << 8) | (uint32_t{d[i + 2]} << 16) | (uint32_t{d[i + 3]} << 24);
    k *= m;
    k ^= k >> 24;
    k *= m;
    h *= m;
    h ^= k;
  }
  uint32_t tail = len & ~3u;
  switch (len % 4) {
    case 3:
      h ^= uint32_t{d[tail + 2]} << 16;
      [[fallthrough]];
    case 2:
      h ^= uint32_t{d[tail + 1]} << 8;
      [[fallthrough]];
    case 1:
      h ^= d[tail];
      h *= m;
  }
  h ^= h >> 13;
  h *= m;
  h ^= h >> 15;
  return static_cast<int32_t>((h & 0x7fffffff) % static_cast<uint32_t>(partitions));
}

KafkaTestEnv::KafkaTestEnv() {
  const char* env = std::getenv("FLOW_KAFKA_BROKERS");
  brokers_ = (env != nullptr && *env != '\0') ? env : kDefaultBrokers;
}

KafkaTestEnv::KafkaTestEnv(std::string brokers) : brokers_(std::move(brokers)) {}

KafkaTestEnv::KafkaTestEnv(std::string brokers, KafkaSettings client_settings)
    : brokers_(std::move(brokers)), client_settings_(std::move(client_settings)) {}

KafkaSettings KafkaTestEnv::With(const KafkaSettings& settings) const {
  KafkaSettings merged = client_settings_;
  for (const auto& [name, value] : settings) merged[name] = value;
  return merged;
}

rt::Status KafkaTestEnv::CheckReachable(Millis timeout) const {
  auto rk = MakeProducer();
  if (!rk.ok()) return rk.status();
  const rd_kafka_metadata_t* md = nullptr;
  // No topic and all_topics=0: a metadata request that lists only the brokers.
  rd_kafka_resp_err_t err =
      rd_kafka_metadata(rk->get(), 0, nullptr, &md, static_cast<int>(timeout.count()));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return rt::Status::Unavailable("no Kafka broker answered a metadata request at " + brokers_ +
                                   " within " + std::to_string(timeout.count()) + " ms (" +
                                   internal::ErrText(err) +
                                   "); start one with `scripts/kafka start` or set "
                                   "FLOW_KAFKA_BROKERS (docs/kafka-broker.md)");
  }
  int brokers = md->broker_cnt;
  rd_kafka_metadata_destroy(md);
  if (brokers < 1) {
    return rt::Status::Unavailable("the Kafka cluster at " + brokers_ + " lists no live broker");
  }
  return rt::Status::Ok();
}

namespace {
// Waits until metadata shows `partitions` partitions of `topic`, each with a leader that answers
// a ListOffsets request.
rt::Status WaitUntilServed(rd_kafka_t* rk, const std::string& brokers, const std::string& topic,
                           int partitions, const std::string& what,
                           const internal::Deadline& deadline, Millis timeout) {
  rt::Status last = rt::Status::TimedOut(what + ": partitions got no leader in time");
  while (!deadline.Passed()) {
    auto layout = internal::FetchTopicLayout(rk, topic, brokers, deadline);
    if (layout.ok() && layout->partitions == partitions && layout->with_leader == partitions) {
      // Metadata names a leader before it serves the partition; an idempotent producer whose
      // first batch meets "not leader" may lose it (librdkafka 2.0.2). Ready means every
      // partition answers a ListOffsets request.
      bool served = true;
      for (int p = 0; p < partitions && served; ++p) {
        int64_t low = 0;
        int64_t high = 0;
        rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(
            rk, topic.c_str(), p, &low, &high, std::max(deadline.LeftMs(), 1));
        if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
          served = false;
          last = internal::ErrStatus(err, what + ": partition " + std::to_string(p));
        }
      }
      if (served) return rt::Status::Ok();
    }
    if (!layout.ok()) last = layout.status();
    std::this_thread::sleep_for(Millis(std::min(100, deadline.LeftMs())));
  }
  return rt::Status::TimedOut(what + ": not ready within " + std::to_string(timeout.count()) +
                              " ms (last: " + last.ToString() + ")");
}
}  // namespace

rt::Status KafkaTestEnv::CreateTopic(const std::string& topic, int partitions,
                                     const KafkaSettings& configs, Millis timeout) const {
  if (partitions < 1) {
    return rt::Status::InvalidArgument("topic '" + topic + "': partitions must be >= 1, got " +
                                       std::to_string(partitions));
  }
  internal::Deadline deadline(timeout);
  auto rk = MakeProducer();
  if (!rk.ok()) return rk.status();
  char errstr[512];
  std::unique_ptr<rd_kafka_NewTopic_t, Freer<rd_kafka_NewTopic_t, rd_kafka_NewTopic_destroy>>
      new_topic(rd_kafka_NewTopic_new(topic.c_str(), partitions, 1, errstr, sizeof errstr));
  if (!new_topic) {
    return rt::Status::InvalidArgument("cannot create topic '" + topic + "': " + errstr);
  }
  for (const auto& [name, value] : configs) {
    rd_kafka_resp_err_t err =
        rd_kafka_NewTopic_set_config(new_topic.get(), name.c_str(), value.c_str());
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return internal::ErrStatus(err, "topic '" + topic + "' config '" + name + "'");
    }
  }
  std::unique_ptr<rd_kafka_AdminOptions_t,
                  Freer<rd_kafka_AdminOptions_t, rd_kafka_AdminOptions_destroy>>
      options(rd_kafka_AdminOptions_new(rk->get(), RD_KAFKA_ADMIN_OP_CREATETOPICS));
  int ms = std::max(deadline.LeftMs(), 1);
  if (rd_kafka_AdminOptions_set_request_timeout(options.get(), ms, errstr, sizeof errstr) !=
          RD_KAFKA_RESP_ERR_NO_ERROR ||
      rd_kafka_AdminOptions_set_operation_timeout(options.get(), ms, errstr, sizeof errstr) !=
          RD_KAFKA_RESP_ERR_NO_ERROR) {
    return rt::Status::Internal(std::string("admin options rejected: ") + errstr);
  }
  std::unique_ptr<rd_kafka_queue_t, Freer<rd_kafka_queue_t, rd_kafka_queue_destroy>> queue(
      rd_kafka_queue_new(rk->get()));
  rd_kafka_NewTopic_t* topics[] = {new_topic.get()};
  rd_kafka_CreateTopics(rk->get(), topics, 1, options.get(), queue.get());
  // The request timeout bounds the operation; the extra second lets its error event arrive.
  std::unique_ptr<rd_kafka_event_t, Freer<rd_kafka_event_t, rd_kafka_event_destroy>> event(
      rd_kafka_queue_poll(queue.get(), ms + 1000));
  std::string what = "creating topic '" + topic + "' at " + brokers_;
  if (!event)
    return rt::Status::TimedOut(what + ": no answer within " + std::to_string(ms) + " ms");
  if (rd_kafka_event_error(event.get()) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return internal::ErrStatus(rd_kafka_event_error(event.get()),
                               what + " (" + rd_kafka_event_error_string(event.get()) + ")");
  }
  size_t count = 0;
  const rd_kafka_topic_result_t** results =
      rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(event.get()), &count);
  if (count != 1) return rt::Status::Internal(what + ": " + std::to_string(count) + " results");
  rd_kafka_resp_err_t err = rd_kafka_topic_result_error(results[0]);
  if (err == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
    return rt::Status::InvalidArgument(what + ": the topic already exists");
  }
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    const char* detail = rd_kafka_topic_result_error_string(results[0]);
    return internal::ErrStatus(err, what + (detail ? std::string(" (") + detail + ")" : ""));
  }
  // Creation is acknowledged before every partition has a leader; producers need leaders.
  return WaitUntilServed(rk->get(), brokers_, topic, partitions, what, deadline, timeout);
}

rt::Status KafkaTestEnv::AddPartitions(const std::string& topic, int total, Millis timeout) const {
  internal::Deadline deadline(timeout);
  auto rk = MakeProducer();
  if (!rk.ok()) return rk.status();
  char errstr[512];
  std::string what = "adding partitions to topic '" + topic + "' (to " + std::to_string(total) +
                     ") at " + brokers_;
  std::unique_ptr<rd_kafka_NewPartitions_t,
                  Freer<rd_kafka_NewPartitions_t, rd_kafka_NewPartitions_destroy>>
      request(rd_kafka_NewPartitions_new(topic.c_str(), static_cast<size_t>(total), errstr,
                                         sizeof errstr));
  if (!request) return rt::Status::InvalidArgument(what + ": " + errstr);
  std::unique_ptr<rd_kafka_AdminOptions_t,
                  Freer<rd_kafka_AdminOptions_t, rd_kafka_AdminOptions_destroy>>
      options(rd_kafka_AdminOptions_new(rk->get(), RD_KAFKA_ADMIN_OP_CREATEPARTITIONS));
  int ms = std::max(deadline.LeftMs(), 1);
  if (rd_kafka_AdminOptions_set_request_timeout(options.get(), ms, errstr, sizeof errstr) !=
          RD_KAFKA_RESP_ERR_NO_ERROR ||
      rd_kafka_AdminOptions_set_operation_timeout(options.get(), ms, errstr, sizeof errstr) !=
          RD_KAFKA_RESP_ERR_NO_ERROR) {
    return rt::Status::Internal(std::string("admin options rejected: ") + errstr);
  }
  std::unique_ptr<rd_kafka_queue_t, Freer<rd_kafka_queue_t, rd_kafka_queue_destroy>> queue(
      rd_kafka_queue_new(rk->get()));
  rd_kafka_NewPartitions_t* requests[] = {request.get()};
  rd_kafka_CreatePartitions(rk->get(), requests, 1, options.get(), queue.get());
  std::unique_ptr<rd_kafka_event_t, Freer<rd_kafka_event_t, rd_kafka_event_destroy>> event(
      rd_kafka_queue_poll(queue.get(), ms + 1000));
  if (!event)
    return rt::Status::TimedOut(what + ": no answer within " + std::to_string(ms) + " ms");
  if (rd_kafka_event_error(event.get()) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return internal::ErrStatus(rd_kafka_event_error(event.get()),
                               what + " (" + rd_kafka_event_error_string(event.get()) + ")");
  }
  size_t count = 0;
  const rd_kafka_topic_result_t** results = rd_kafka_CreatePartitions_result_topics(
      rd_kafka_event_CreatePartitions_result(event.get()), &count);
  if (count != 1) return rt::Status::Internal(what + ": " + std::to_string(count) + " results");
  rd_kafka_resp_err_t err = rd_kafka_topic_result_error(results[0]);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    const char* detail = rd_kafka_topic_result_error_string(results[0]);
    return internal::ErrStatus(err, what + (detail ? std::string(" (") + detail + ")" : ""));
  }
  return WaitUntilServed(rk->get(), brokers_, topic, total, what, deadline, timeout);
}

rt::Result<std::string> KafkaTestEnv::CreateUniqueTopic(std::string_view prefix, int partitions,
                                                        const KafkaSettings& configs,
                                                        Millis timeout) const {
  std::string topic = UniqueName(prefix);
  FLOW_RETURN_IF_ERROR(CreateTopic(topic, partitions, configs, timeout));
  return topic;
}

rt::Result<int> KafkaTestEnv::PartitionCount(const std::string& topic, Millis timeout) const {
  auto rk = MakeProducer();
  if (!rk.ok()) return rk.status();
  auto layout = internal::FetchTopicLayout(rk->get(), topic, brokers_, internal::Deadline(timeout));
  if (!layout.ok()) return layout.status();
  return layout->partitions;
}

rt::Result<RdKafkaPtr> KafkaTestEnv::MakeProducer(const KafkaSettings& settings) const {
  return internal::NewClient(brokers_, RD_KAFKA_PRODUCER, With(settings));
}

rt::Result<RdKafkaPtr> KafkaTestEnv::MakeConsumer(const KafkaSettings& settings) const {
  return internal::NewClient(brokers_, RD_KAFKA_CONSUMER, With(settings));
}

}  // namespace flow::test
