// KafkaTestEnv's produce and read-back helpers.

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "kafka_test_env.h"
#include "kafka_test_internal.h"

namespace flow::test {

namespace {

struct DeliveryTally {
  std::size_t acknowledged = 0;
  std::size_t failed = 0;
  rd_kafka_resp_err_t first_error = RD_KAFKA_RESP_ERR_NO_ERROR;
};

void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* message, void*) {
  auto* tally = static_cast<DeliveryTally*>(message->_private);
  if (message->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    ++tally->acknowledged;
    return;
  }
  if (tally->failed++ == 0) tally->first_error = message->err;
}

const char* IsolationName(Isolation isolation) {
  return isolation == Isolation::kReadCommitted ? "read_committed" : "read_uncommitted";
}

struct MessageFree {
  void operator()(rd_kafka_message_t* m) const { rd_kafka_message_destroy(m); }
};

// What a read loop stops at: every partition's end (`count` unused), or `count` records.
enum class StopAt { kEnd, kCount };

// Where one partition's read stands.
struct PartitionRead {
  int64_t end = 0;       // high watermark when the read began (StopAt::kEnd)
  int64_t reached = -1;  // offset of the latest end-of-partition event
  bool done = false;
};

// High watermarks of every partition, asked with a read_uncommitted client: for a
// read_committed client librdkafka would report the last stable offset instead.
rt::Status FetchEnds(const KafkaTestEnv& env, const std::string& topic, const std::string& what,
                     const internal::Deadline& deadline, std::map<int32_t, PartitionRead>& parts) {
  auto probe = env.MakeConsumer({{"isolation.level", "read_uncommitted"}});
  if (!probe.ok()) return probe.status();
  for (auto& [partition, read] : parts) {
    int64_t low = 0;
    rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;
    // A broker that just restarted may still be electing leaders: ask again until the deadline.
    do {
      err = rd_kafka_query_watermark_offsets(probe->get(), topic.c_str(), partition, &low,
                                             &read.end, std::max(deadline.LeftMs(), 1));
      if (err != RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION &&
          err != RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE && err != RD_KAFKA_RESP_ERR__TRANSPORT)
        break;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    } while (deadline.LeftMs() > 0);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return internal::ErrStatus(err,
                                 what + ": end offset of partition " + std::to_string(partition));
    }
    read.done = read.end <= low;  // nothing to read
  }
  return rt::Status::Ok();
}

rt::Result<std::vector<KafkaRecord>> ReadTopic(const KafkaTestEnv& env, const std::string& topic,
                                               Isolation isolation, StopAt stop_at,
                                               std::size_t count, Millis timeout) {
  internal::Deadline deadline(timeout);
  const std::string what =
      std::string(IsolationName(isolation)) + " read of topic '" + topic + "' at " + env.brokers();
  auto rk = env.MakeConsumer({{"isolation.level", IsolationName(isolation)},
                              {"enable.partition.eof", "true"},
                              {"enable.auto.commit", "false"},
                              {"auto.offset.reset", "earliest"}});
  if (!rk.ok()) return rk.status();
  auto layout = internal::FetchTopicLayout(rk->get(), topic, env.brokers(), deadline);
  if (!layout.ok()) return layout.status();

  std::unique_ptr<rd_kafka_topic_partition_list_t, void (*)(rd_kafka_topic_partition_list_t*)>
      assignment(rd_kafka_topic_partition_list_new(layout->partitions),
                 rd_kafka_topic_partition_list_destroy);
  std::map<int32_t, PartitionRead> parts;
  for (int32_t p = 0; p < layout->partitions; ++p) {
    rd_kafka_topic_partition_list_add(assignment.get(), topic.c_str(), p)->offset =
        RD_KAFKA_OFFSET_BEGINNING;
    parts[p] = PartitionRead{};
  }
  if (stop_at == StopAt::kEnd) FLOW_RETURN_IF_ERROR(FetchEnds(env, topic, what, deadline, parts));
  rd_kafka_resp_err_t err = rd_kafka_assign(rk->get(), assignment.get());
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) return internal::ErrStatus(err, what + ": assign");

  std::vector<KafkaRecord> records;
  std::string last_error = "none";
  auto done = [&] {
    if (stop_at == StopAt::kCount) return records.size() >= count;
    return std::all_of(parts.begin(), parts.end(), [](const auto& p) { return p.second.done; });
  };
  while (!done()) {
    if (deadline.Passed()) {
      std::string detail;
      if (stop_at == StopAt::kEnd) {
        detail = "not read to the end:";
        for (const auto& [p, read] : parts) {
          if (read.done) continue;
          detail += " partition " + std::to_string(p) + " (end " + std::to_string(read.end) +
                    (read.reached >= 0 ? ", stuck at " + std::to_string(read.reached) : "") + ")";
        }
        if (isolation == Isolation::kReadCommitted) {
          detail += "; a transaction still open holds back the last stable offset";
        }
      } else {
        detail =
            "got " + std::to_string(records.size()) + " of " + std::to_string(count) + " records";
      }
      return rt::Status::TimedOut(what + ": " + detail + " after " +
                                  std::to_string(timeout.count()) +
                                  " ms; last client error: " + last_error);
    }
    std::unique_ptr<rd_kafka_message_t, MessageFree> m(
        rd_kafka_consumer_poll(rk->get(), deadline.LeftMs(100)));
    if (!m) continue;
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      // The event's offset is where fetching stopped: the high watermark, or under
      // read_committed the last stable offset, which stays below the end while a
      // transaction there is open.
      auto it = parts.find(m->partition);
      if (it != parts.end()) {
        it->second.reached = m->offset;
        if (m->offset >= it->second.end) it->second.done = true;
      }
      continue;
    }
    if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      if (m->err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART ||
          m->err == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC ||
          m->err == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION) {
        return internal::ErrStatus(m->err, what);
      }
      // Transport errors and the like are retried by librdkafka; the deadline bounds them.
      last_error = internal::ErrText(m->err);
      continue;
    }
    if (stop_at == StopAt::kEnd) {
      PartitionRead& read = parts[m->partition];
      // Records come in offset order, so one at or past the end's last offset means every record
      // below the end has come (aborted ones are skipped). No end-of-partition event may come for
      // a long time on a topic that always has an open transaction, so do not wait for one.
      if (m->offset >= read.end - 1) read.done = true;
      // Records written after the read began are not part of it.
      if (m->offset >= read.end) continue;
    }
    KafkaRecord record;
    record.partition = m->partition;
    record.offset = m->offset;
    rd_kafka_timestamp_type_t ts_type = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE;
    record.timestamp = rd_kafka_message_timestamp(m.get(), &ts_type);
    record.log_append_time = ts_type == RD_KAFKA_TIMESTAMP_LOG_APPEND_TIME;
    if (m->key != nullptr) record.key.assign(static_cast<const char*>(m->key), m->key_len);
    if (m->payload != nullptr) {
      record.value.assign(static_cast<const char*>(m->payload), m->len);
    }
    records.push_back(std::move(record));
  }
  // Each partition arrives in offset order; make the partition order deterministic too.
  std::stable_sort(records.begin(), records.end(), [](const KafkaRecord& a, const KafkaRecord& b) {
    return a.partition < b.partition;
  });
  return records;
}

}  // namespace

rt::Status KafkaTestEnv::Produce(const std::string& topic, const std::vector<KafkaRecord>& records,
                                 Millis timeout) const {
  internal::Deadline deadline(timeout);
  const std::string what = "producing to topic '" + topic + "' at " + brokers_;
  // Declared before the client so it outlives any delivery report the client's teardown serves.
  DeliveryTally tally;
  auto rk = internal::NewClient(
      brokers_, RD_KAFKA_PRODUCER,
      With({{"enable.idempotence", "true"},
            {"acks", "all"},
            {"linger.ms", "5"},
            {"message.timeout.ms", std::to_string(std::max<int64_t>(timeout.count(), 1))}}),
      [](rd_kafka_conf_t* conf) { rd_kafka_conf_set_dr_msg_cb(conf, OnDelivery); });
  if (!rk.ok()) return rk.status();
  for (const KafkaRecord& r : records) {
    while (true) {
      rd_kafka_resp_err_t err = rd_kafka_producev(
          rk->get(), RD_KAFKA_V_TOPIC(topic.c_str()),
          RD_KAFKA_V_PARTITION(r.partition < 0 ? RD_KAFKA_PARTITION_UA : r.partition),
          RD_KAFKA_V_KEY(r.key.empty() ? nullptr : r.key.data(), r.key.size()),
          RD_KAFKA_V_VALUE(const_cast<char*>(r.value.data()), r.value.size()),
          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_OPAQUE(&tally), RD_KAFKA_V_END);
      if (err == RD_KAFKA_RESP_ERR_NO_ERROR) break;
      if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL || deadline.Passed()) {
        return internal::ErrStatus(err, what);
      }
      rd_kafka_poll(rk->get(), 50);  // serves delivery reports, which frees queue space
    }
  }
  rd_kafka_resp_err_t err = rd_kafka_flush(rk->get(), deadline.LeftMs());
  if (tally.failed > 0) {
    return internal::ErrStatus(tally.first_error, what + ": " + std::to_string(tally.failed) +
                                                      " of " + std::to_string(records.size()) +
                                                      " records failed, first");
  }
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR || tally.acknowledged != records.size()) {
    return rt::Status::TimedOut(what + ": " + std::to_string(tally.acknowledged) + " of " +
                                std::to_string(records.size()) + " records acknowledged within " +
                                std::to_string(timeout.count()) + " ms");
  }
  return rt::Status::Ok();
}

rt::Result<std::vector<KafkaRecord>> KafkaTestEnv::ConsumeToEnd(const std::string& topic,
                                                                Isolation isolation,
                                                                Millis timeout) const {
  return ReadTopic(*this, topic, isolation, StopAt::kEnd, 0, timeout);
}

rt::Result<std::vector<KafkaRecord>> KafkaTestEnv::ConsumeCount(const std::string& topic,
                                                                std::size_t count,
                                                                Isolation isolation,
                                                                Millis timeout) const {
  return ReadTopic(*this, topic, isolation, StopAt::kCount, count, timeout);
}

}  // namespace flow::test
