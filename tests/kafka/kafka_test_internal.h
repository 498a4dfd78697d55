#pragma once
// Pieces shared by kafka_test_env.cpp and kafka_test_io.cpp; not part of the helper's API.

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <functional>
#include <string>

#include "kafka_test_env.h"

namespace flow::test::internal {

// A point in time that bounds a whole helper call; each librdkafka call gets what is left.
class Deadline {
 public:
  explicit Deadline(Millis timeout) : end_(std::chrono::steady_clock::now() + timeout) {}
  bool Passed() const { return std::chrono::steady_clock::now() >= end_; }
  // Milliseconds left, at least 0, at most `cap` when given (> 0).
  int LeftMs(int cap = 0) const;

 private:
  std::chrono::steady_clock::time_point end_;
};

// "Local: Broker transport failure (_TRANSPORT)".
std::string ErrText(rd_kafka_resp_err_t err);

// Maps a librdkafka error to the closest Status code, with `what` in front of the message.
rt::Status ErrStatus(rd_kafka_resp_err_t err, const std::string& what);

// Creates a client for `brokers`; `customize` may set callbacks on the configuration before
// the handle is made.
rt::Result<RdKafkaPtr> NewClient(const std::string& brokers, rd_kafka_type_t type,
                                 const KafkaSettings& settings,
                                 const std::function<void(rd_kafka_conf_t*)>& customize = {});

struct TopicLayout {
  int partitions = 0;   // partitions the broker reports
  int with_leader = 0;  // of those, how many have a leader
};

// Asks a broker for `topic`'s metadata; kNotFound if the topic does not exist.
rt::Result<TopicLayout> FetchTopicLayout(rd_kafka_t* rk, const std::string& topic,
                                         const std::string& brokers, const Deadline& deadline);

}  // namespace flow::test::internal
