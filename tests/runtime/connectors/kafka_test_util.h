#pragma once
// Small helpers for tests against the real broker (LABEL kafka): broker address from
// FLOW_KAFKA_BROKERS (default 127.0.0.1:9092), unique topics created through the admin API.

#include <librdkafka/rdkafka.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>

namespace flow::rt::testing {

inline std::string KafkaBrokers() {
  const char* env = std::getenv("FLOW_KAFKA_BROKERS");
  return env != nullptr && *env != '\0' ? env : "127.0.0.1:9092";
}

inline std::string UniqueTopic(const std::string& stem) {
  static std::atomic<int> counter{0};
  auto now = std::chrono::system_clock::now().time_since_epoch().count();
  return "flow-test-" + stem + "-" + std::to_string(::getpid()) + "-" + std::to_string(now) +
         "-" + std::to_string(counter++);
}

// Creates `topic` with `partitions` partitions (replication 1). Returns "" or an error text.
inline std::string CreateTopic(const std::string& topic, int partitions) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", KafkaBrokers().c_str(), err, sizeof err);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (rk == nullptr) return std::string("cannot create admin client: ") + err;
  rd_kafka_NewTopic_t* nt = rd_kafka_NewTopic_new(topic.c_str(), partitions, 1, err, sizeof err);
  rd_kafka_queue_t* q = rd_kafka_queue_new(rk);
  rd_kafka_AdminOptions_t* opts = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS);
  rd_kafka_AdminOptions_set_operation_timeout(opts, 30000, err, sizeof err);
  rd_kafka_CreateTopics(rk, &nt, 1, opts, q);
  std::string result = "timed out creating topic";
  rd_kafka_event_t* ev = rd_kafka_queue_poll(q, 60000);
  if (ev != nullptr) {
    if (rd_kafka_event_error(ev) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      result = rd_kafka_event_error_string(ev);
    } else {
      const rd_kafka_CreateTopics_result_t* res = rd_kafka_event_CreateTopics_result(ev);
      size_t n = 0;
      const rd_kafka_topic_result_t** topics = rd_kafka_CreateTopics_result_topics(res, &n);
      result = "";
      for (size_t i = 0; i < n; ++i) {
        if (rd_kafka_topic_result_error(topics[i]) != RD_KAFKA_RESP_ERR_NO_ERROR) {
          result = rd_kafka_topic_result_error_string(topics[i]);
        }
      }
    }
    rd_kafka_event_destroy(ev);
  }
  rd_kafka_AdminOptions_destroy(opts);
  rd_kafka_NewTopic_destroy(nt);
  rd_kafka_queue_destroy(q);
  rd_kafka_destroy(rk);
  return result;
}

// A local TCP port with nothing listening on it (bound once, then released).
inline int ClosedPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace flow::rt::testing
