// kafka_bench_client: the load side of bench/kafka/run.py (topics, input records, the measuring
// consumer). Every command prints one JSON line on stdout; errors go to stderr with exit code 2
// (bad usage, broker unreachable) or 1 (a consume that did not see the expected records in time).
//
//   create --brokers B --topics a,b,c --partitions P
//       creates topics (existing ones are an error).
//   delete --brokers B --topics a,b,c
//       deletes topics (missing ones are ignored).
//   produce --brokers B --topic T --records N --et-base MS [--keys 100] [--record-bytes 100]
//           [--rate R] [--sentinels 0|1]
//       N records in the format of kafka_bench_util.h, record i to partition i mod P with key
//       "k<i mod keys>"; --rate R: R records per second (paced every millisecond, stamps are the
//       send time), else as fast as the producer takes them. --sentinels 1 adds one record per
//       partition (id -1, key "end") with an event time far after the data, so that event-time
//       windows of the data close. Prints {"records":..,"checksum":"<hex>"}: the sum of the
//       FNV-1a-64 of every payload sent (sentinels included).
//   consume --brokers B --topic T --expect N [--timeout-s 120] [--linger-ms 1000]
//           [--isolation read_committed] [--ids N] [--warmup-ms 0] [--dump FILE] [--arrivals FILE]
//       reads every partition from the start until N records arrived, then --linger-ms more (to
//       see duplicates or extra records). Prints count, checksum, the arrival time of the first
//       and of the N-th record (epoch us), and with --ids N how many ids in [0,N) were seen
//       (distinct) and how many more than once. Records with a "ts" field give latencies
//       (arrival - ts) in ms, p50/p90/p99/max, over records stamped at least --warmup-ms after
//       the first stamp. --dump writes every payload as one line to FILE. --arrivals writes one
//       line "<arrival epoch us> <id> <ts>" per record to FILE, flushed after every batch (so a
//       driver can follow the output while it arrives). Exit 1 on timeout.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "kafka_bench_util.h"

namespace flow::bench {
namespace {

std::vector<std::string> SplitComma(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string::npos) comma = s.size();
    if (comma > start) out.push_back(s.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

// Waits (up to 30 s) until `topic` has `partitions` partitions, each with a leader.
void WaitForLeaders(rd_kafka_t* rk, const std::string& topic, int32_t partitions) {
  for (int attempt = 0; attempt < 150; ++attempt) {
    rd_kafka_topic_t* t = rd_kafka_topic_new(rk, topic.c_str(), nullptr);
    const rd_kafka_metadata_t* md = nullptr;
    rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, t, &md, 5000);
    rd_kafka_topic_destroy(t);
    bool ready = false;
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR && md->topic_cnt == 1 &&
        md->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR &&
        md->topics[0].partition_cnt == partitions) {
      ready = true;
      for (int i = 0; i < partitions; ++i) ready = ready && md->topics[0].partitions[i].leader >= 0;
    }
    if (md != nullptr) rd_kafka_metadata_destroy(md);
    if (ready) return;
    rd_kafka_poll(rk, 200);
  }
  Die("topic `" + topic + "` has no leader for every partition after 30 s");
}

// Runs one admin request (create or delete topics) and checks every per-topic result.
int Admin(bool create, const Flags& flags) {
  const std::string brokers = flags.Str("brokers");
  const std::vector<std::string> topics = SplitComma(flags.Str("topics"));
  const int64_t partitions = create ? flags.Int("partitions", 4) : 0;
  flags.CheckAllUsed();
  if (topics.empty()) Die("--topics is empty");
  if (create && (partitions < 1 || partitions > 1000)) Die("--partitions must be in 1..1000");
  rd_kafka_t* rk = MakeClient(RD_KAFKA_PRODUCER, MakeConf({{"bootstrap.servers", brokers}}));
  rd_kafka_queue_t* queue = rd_kafka_queue_new(rk);
  rd_kafka_AdminOptions_t* opts = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_ANY);
  char err[512];
  rd_kafka_AdminOptions_set_operation_timeout(opts, 30000, err, sizeof err);
  std::vector<rd_kafka_NewTopic_t*> new_topics;
  std::vector<rd_kafka_DeleteTopic_t*> del_topics;
  for (const std::string& t : topics) {
    if (create) {
      rd_kafka_NewTopic_t* nt =
          rd_kafka_NewTopic_new(t.c_str(), static_cast<int>(partitions), 1, err, sizeof err);
      if (nt == nullptr) Die("topic `" + t + "`: " + err);
      new_topics.push_back(nt);
    } else {
      del_topics.push_back(rd_kafka_DeleteTopic_new(t.c_str()));
    }
  }
  if (create) {
    rd_kafka_CreateTopics(rk, new_topics.data(), new_topics.size(), opts, queue);
  } else {
    rd_kafka_DeleteTopics(rk, del_topics.data(), del_topics.size(), opts, queue);
  }
  rd_kafka_event_t* ev = rd_kafka_queue_poll(queue, 60000);
  if (ev == nullptr) Die("the broker did not answer the admin request within 60 s");
  if (rd_kafka_event_error(ev) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    Die(std::string("admin request failed: ") + rd_kafka_event_error_string(ev));
  }
  size_t n = 0;
  const rd_kafka_topic_result_t** results =
      create ? rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &n)
             : rd_kafka_DeleteTopics_result_topics(rd_kafka_event_DeleteTopics_result(ev), &n);
  int failed = 0;
  for (size_t i = 0; i < n; ++i) {
    rd_kafka_resp_err_t e = rd_kafka_topic_result_error(results[i]);
    if (e == RD_KAFKA_RESP_ERR_NO_ERROR) continue;
    if (!create && e == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) continue;
    std::fprintf(stderr, "topic `%s`: %s\n", rd_kafka_topic_result_name(results[i]),
                 rd_kafka_topic_result_error_string(results[i]));
    ++failed;
  }
  rd_kafka_event_destroy(ev);
  for (auto* t : new_topics) rd_kafka_NewTopic_destroy(t);
  for (auto* t : del_topics) rd_kafka_DeleteTopic_destroy(t);
  rd_kafka_AdminOptions_destroy(opts);
  rd_kafka_queue_destroy(queue);
  if (failed > 0) Die("admin request failed for " + std::to_string(failed) + " topic(s)");
  // A created topic appears in metadata a moment later; a job started right away could find it
  // missing (Flow's sink fails on an unknown topic), so return only once every partition has a
  // leader.
  for (const std::string& t : topics) {
    if (create) WaitForLeaders(rk, t, static_cast<int32_t>(partitions));
  }
  rd_kafka_destroy(rk);
  std::printf("{\"%s\":%zu}\n", create ? "created" : "deleted", topics.size());
  return 0;
}

int64_t g_delivery_errors = 0;
void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* msg, void*) {
  if (msg->err != RD_KAFKA_RESP_ERR_NO_ERROR && g_delivery_errors++ == 0) {
    std::fprintf(stderr, "delivery failed: %s\n", rd_kafka_err2str(msg->err));
  }
}

// "k<id mod keys>", or "end" for a sentinel. (Appending, not "k" + to_string: g++ 12 reports a
// false -Wrestrict for the latter.)
std::string KeyOf(int64_t id, int64_t keys) {
  if (id < 0) return "end";
  std::string key = "k";
  key += std::to_string(id % keys);
  return key;
}

std::string MakeRecord(int64_t id, int64_t keys, int64_t et, int64_t ts, int64_t record_bytes) {
  char head[160];
  std::string key = KeyOf(id, keys);
  int64_t value = id < 0 ? 0 : (id * 7919) % 1000;
  int len =
      std::snprintf(head, sizeof head,
                    "{\"id\":%lld,\"key\":\"%s\",\"value\":%lld,\"et\":%lld,\"ts\":%lld,\"pad\":\"",
                    static_cast<long long>(id), key.c_str(), static_cast<long long>(value),
                    static_cast<long long>(et), static_cast<long long>(ts));
  std::string out(head, static_cast<size_t>(len));
  int64_t pad = std::max<int64_t>(1, record_bytes - len - 2);
  out.append(static_cast<size_t>(pad), 'x');
  out += "\"}";
  return out;
}

int Produce(const Flags& flags) {
  const std::string brokers = flags.Str("brokers");
  const std::string topic = flags.Str("topic");
  const int64_t records = flags.Int("records", -1);
  const int64_t keys = flags.Int("keys", 100);
  const int64_t record_bytes = flags.Int("record-bytes", 100);
  const int64_t rate = flags.Int("rate", 0);
  const int64_t sentinels = flags.Int("sentinels", 0);
  // No default: a fixed date would age past the broker's retention (kafka_bench_util.h).
  const int64_t et_base = flags.Int("et-base", -1);
  flags.CheckAllUsed();
  if (records < 0 || keys < 1 || rate < 0 || et_base < 0)
    Die("--records >= 0, --et-base >= 0 (epoch ms), --keys >= 1 and --rate >= 0 required");
  rd_kafka_conf_t* conf = MakeConf({{"bootstrap.servers", brokers},
                                    {"enable.idempotence", "true"},
                                    {"acks", "all"},
                                    {"linger.ms", rate > 0 ? "1" : "5"}});
  rd_kafka_conf_set_dr_msg_cb(conf, &OnDelivery);
  rd_kafka_t* rk = MakeClient(RD_KAFKA_PRODUCER, conf);
  const int32_t partitions = PartitionCount(rk, topic);
  rd_kafka_topic_t* t = rd_kafka_topic_new(rk, topic.c_str(), nullptr);
  uint64_t checksum = 0;
  auto send = [&](int64_t id, int32_t partition, int64_t et) {
    std::string payload = MakeRecord(id, keys, et, NowMicros(), record_bytes);
    std::string key = KeyOf(id, keys);
    checksum += Fnv1a64(payload);
    while (rd_kafka_produce(t, partition, RD_KAFKA_MSG_F_COPY, payload.data(), payload.size(),
                            key.data(), key.size(), nullptr) != 0) {
      rd_kafka_resp_err_t err = rd_kafka_last_error();
      if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL)
        Die(std::string("produce failed: ") + rd_kafka_err2str(err));
      rd_kafka_poll(rk, 10);
    }
  };
  const int64_t start_us = NowMicros();
  for (int64_t id = 0; id < records; ++id) {
    if (rate > 0) {
      // Pace: record id may leave at start + id/rate; wait in 1 ms steps, serving deliveries.
      while ((NowMicros() - start_us) * rate < id * 1000000) rd_kafka_poll(rk, 1);
    }
    send(id, static_cast<int32_t>(id % partitions), et_base + id);
    if ((id & 1023) == 0) rd_kafka_poll(rk, 0);
  }
  for (int32_t p = 0; sentinels != 0 && p < partitions; ++p) {
    send(-1, p, et_base + records + kSentinelEtOffset);
  }
  if (rd_kafka_flush(rk, 120000) != RD_KAFKA_RESP_ERR_NO_ERROR) Die("flush timed out");
  const int64_t end_us = NowMicros();
  rd_kafka_topic_destroy(t);
  rd_kafka_destroy(rk);
  if (g_delivery_errors > 0) Die(std::to_string(g_delivery_errors) + " records were not delivered");
  const int64_t sent = records + (sentinels != 0 ? partitions : 0);
  std::printf("{\"records\":%lld,\"partitions\":%d,\"checksum\":\"%016llx\",\"wall_s\":%.3f}\n",
              static_cast<long long>(sent), partitions, static_cast<unsigned long long>(checksum),
              static_cast<double>(end_us - start_us) / 1e6);
  return 0;
}

double Percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return -1;
  size_t i = static_cast<size_t>(q * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(i, sorted.size() - 1)];
}

int Consume(const Flags& flags) {
  const std::string brokers = flags.Str("brokers");
  const std::string topic = flags.Str("topic");
  const int64_t expect = flags.Int("expect", -1);
  const int64_t timeout_s = flags.Int("timeout-s", 120);
  const int64_t linger_ms = flags.Int("linger-ms", 1000);
  const std::string isolation = flags.Str("isolation", "read_committed");
  const int64_t ids = flags.Int("ids", 0);
  const int64_t warmup_ms = flags.Int("warmup-ms", 0);
  const std::string dump_path = flags.Str("dump", "-");
  const std::string arrivals_path = flags.Str("arrivals", "-");
  flags.CheckAllUsed();
  if (expect < 0 || timeout_s <= 0 || ids < 0) Die("--expect >= 0 and --timeout-s > 0 required");
  FILE* dump = nullptr;
  if (dump_path != "-") {
    dump = std::fopen(dump_path.c_str(), "w");
    if (dump == nullptr) Die("cannot write " + dump_path + ": " + std::strerror(errno));
  }
  FILE* arrivals = nullptr;
  if (arrivals_path != "-") {
    arrivals = std::fopen(arrivals_path.c_str(), "w");
    if (arrivals == nullptr) Die("cannot write " + arrivals_path + ": " + std::strerror(errno));
  }
  rd_kafka_t* rk = MakeClient(RD_KAFKA_CONSUMER, MakeConf({{"bootstrap.servers", brokers},
                                                           {"group.id", "flow-bench-measure"},
                                                           {"enable.auto.commit", "false"},
                                                           {"isolation.level", isolation},
                                                           {"fetch.wait.max.ms", "50"},
                                                           {"enable.partition.eof", "false"}}));
  rd_kafka_poll_set_consumer(rk);
  AssignAll(rk, topic, PartitionCount(rk, topic));
  rd_kafka_queue_t* queue = rd_kafka_queue_get_consumer(rk);

  std::vector<uint8_t> seen(static_cast<size_t>(ids), 0);
  int64_t count = 0, distinct = 0, repeated = 0, out_of_range = 0;
  uint64_t checksum = 0;
  int64_t first_us = 0, expect_us = 0;
  std::vector<std::pair<int64_t, int64_t>> stamps;  // (ts, arrival) of stamped records
  std::vector<rd_kafka_message_t*> msgs(10000);
  const int64_t deadline = NowMicros() + timeout_s * 1000000;
  int64_t stop_at = expect == 0 ? NowMicros() + linger_ms * 1000 : -1;
  while (true) {
    const int64_t now = NowMicros();
    if (stop_at >= 0 && now >= stop_at) break;
    if (stop_at < 0 && now >= deadline) break;
    ssize_t n = rd_kafka_consume_batch_queue(queue, 50, msgs.data(), msgs.size());
    if (n < 0) Die(std::string("consume failed: ") + rd_kafka_err2str(rd_kafka_last_error()));
    const int64_t arrival = NowMicros();
    for (ssize_t i = 0; i < n; ++i) {
      rd_kafka_message_t* m = msgs[static_cast<size_t>(i)];
      if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        std::fprintf(stderr, "consume error: %s\n", rd_kafka_message_errstr(m));
        rd_kafka_message_destroy(m);
        continue;
      }
      std::string_view payload(static_cast<const char*>(m->payload), m->len);
      if (count == 0) first_us = arrival;
      ++count;
      checksum += Fnv1a64(payload);
      int64_t ts = JsonIntField(payload, "\"ts\":", -1);
      if (ts > 0) stamps.emplace_back(ts, arrival);
      if (ids > 0) {
        int64_t id = JsonIntField(payload, "\"id\":", -1);
        if (id >= 0 && id < ids) {
          if (seen[static_cast<size_t>(id)]++ == 0)
            ++distinct;
          else
            ++repeated;
        } else if (id != -1) {
          ++out_of_range;
        }
      }
      if (dump != nullptr) {
        std::fwrite(payload.data(), 1, payload.size(), dump);
        std::fputc('\n', dump);
      }
      if (arrivals != nullptr) {
        std::fprintf(arrivals, "%lld %lld %lld\n", static_cast<long long>(arrival),
                     static_cast<long long>(JsonIntField(payload, "\"id\":", -1)),
                     static_cast<long long>(ts));
      }
      if (count == expect) {
        expect_us = arrival;
        stop_at = arrival + linger_ms * 1000;
      }
      rd_kafka_message_destroy(m);
    }
    if (arrivals != nullptr && n > 0) std::fflush(arrivals);
  }
  rd_kafka_queue_destroy(queue);
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  if (dump != nullptr) std::fclose(dump);
  if (arrivals != nullptr) std::fclose(arrivals);

  std::vector<double> lat;
  if (!stamps.empty()) {
    int64_t first_ts = stamps.front().first;
    for (const auto& s : stamps) first_ts = std::min(first_ts, s.first);
    for (const auto& [ts, arr] : stamps) {
      if (ts >= first_ts + warmup_ms * 1000) lat.push_back(static_cast<double>(arr - ts) / 1000.0);
    }
    std::sort(lat.begin(), lat.end());
  }
  std::printf(
      "{\"count\":%lld,\"checksum\":\"%016llx\",\"first_us\":%lld,\"expect_us\":%lld,"
      "\"distinct_ids\":%lld,\"repeated_ids\":%lld,\"other_ids\":%lld,\"latency_n\":%zu,"
      "\"p50_ms\":%.3f,\"p90_ms\":%.3f,\"p99_ms\":%.3f,\"max_ms\":%.3f}\n",
      static_cast<long long>(count), static_cast<unsigned long long>(checksum),
      static_cast<long long>(first_us), static_cast<long long>(expect_us),
      static_cast<long long>(distinct), static_cast<long long>(repeated),
      static_cast<long long>(out_of_range), lat.size(), Percentile(lat, 0.5), Percentile(lat, 0.9),
      Percentile(lat, 0.99), lat.empty() ? -1.0 : lat.back());
  if (count < expect) {
    std::fprintf(stderr, "consume: %lld of %lld records on topic `%s` within %lld s\n",
                 static_cast<long long>(count), static_cast<long long>(expect), topic.c_str(),
                 static_cast<long long>(timeout_s));
    return 1;
  }
  return 0;
}

int Main(int argc, char** argv) {
  if (argc < 2) Die("usage: kafka_bench_client create|delete|produce|consume --flag value ...");
  const std::string cmd = argv[1];
  Flags flags(argc, argv, 2);
  if (cmd == "create") return Admin(true, flags);
  if (cmd == "delete") return Admin(false, flags);
  if (cmd == "produce") return Produce(flags);
  if (cmd == "consume") return Consume(flags);
  Die("unknown command `" + cmd + "` (create, delete, produce, consume)");
}

}  // namespace
}  // namespace flow::bench

int main(int argc, char** argv) {
  return flow::bench::Main(argc, argv);
}
