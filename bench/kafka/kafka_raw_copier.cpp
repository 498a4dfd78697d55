// kafka_raw_copier: the practical limit of a Kafka -> Kafka copy on this machine. One thread,
// one librdkafka consumer and one producer, no framework, no parsing.
//
//   kafka_raw_copier --brokers B --from IN --to OUT [--records N] [--isolation read_committed]
//
// Reads every partition of IN from the earliest offset (assign, no consumer group) and writes
// each message's key and payload unchanged to the same partition of OUT (OUT must have at least
// as many partitions). It stops after N records have been copied and acknowledged (N = 0: until
// SIGTERM/SIGINT) and prints one JSON line {"records":..,"wall_s":..}.
//
// Guarantee: at-least-once at best, and only because nothing fails during a benchmark: offsets
// are never stored, so a restart would copy from the beginning again. That is the point: it
// does the minimum work a copier must do and is the ceiling Flow's copiers are compared with.
//
// Settings, the same as Flow's Kafka source and sink where they overlap: consumer
// isolation.level read_committed (Flow's default), batches of up to 10,000 messages per
// consume call (rd_kafka_consume_batch_queue, as Flow's source); producer enable.idempotence=true,
// acks=all, linger.ms=5 (Flow's sink), librdkafka defaults otherwise (batch.size 1 MB,
// 100,000 queued messages). Queue full -> poll for deliveries and retry (backpressure).
#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

#include "kafka_bench_util.h"

namespace flow::bench {
namespace {

volatile std::sig_atomic_t g_stop = 0;
void OnSignal(int) {
  g_stop = 1;
}

int64_t g_delivery_errors = 0;

void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* msg, void*) {
  if (msg->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    if (g_delivery_errors++ == 0) {
      std::fprintf(stderr, "kafka_raw_copier: delivery failed: %s\n", rd_kafka_err2str(msg->err));
    }
  }
}

int Run(int argc, char** argv) {
  Flags flags(argc, argv, 1);
  const std::string brokers = flags.Str("brokers");
  const std::string from = flags.Str("from");
  const std::string to = flags.Str("to");
  const int64_t records = flags.Int("records", 0);
  const std::string isolation = flags.Str("isolation", "read_committed");
  const int64_t batch = flags.Int("batch", 10000);
  flags.CheckAllUsed();
  if (records < 0 || batch <= 0) Die("--records must be >= 0 and --batch > 0");

  std::signal(SIGTERM, OnSignal);
  std::signal(SIGINT, OnSignal);
  const int64_t start_us = NowMicros();

  rd_kafka_t* consumer =
      MakeClient(RD_KAFKA_CONSUMER, MakeConf({{"bootstrap.servers", brokers},
                                              {"group.id", "flow-bench-raw-copier"},
                                              {"enable.auto.commit", "false"},
                                              {"enable.auto.offset.store", "false"},
                                              {"isolation.level", isolation},
                                              {"enable.partition.eof", "false"}}));
  rd_kafka_poll_set_consumer(consumer);
  rd_kafka_conf_t* pconf = MakeConf({{"bootstrap.servers", brokers},
                                     {"enable.idempotence", "true"},
                                     {"acks", "all"},
                                     {"linger.ms", "5"}});
  rd_kafka_conf_set_dr_msg_cb(pconf, &OnDelivery);
  rd_kafka_t* producer = MakeClient(RD_KAFKA_PRODUCER, pconf);

  const int32_t in_partitions = PartitionCount(consumer, from);
  const int32_t out_partitions = PartitionCount(producer, to);
  if (out_partitions < in_partitions) {
    Die("topic `" + to + "` has fewer partitions than `" + from + "`");
  }
  AssignAll(consumer, from, in_partitions);
  rd_kafka_queue_t* queue = rd_kafka_queue_get_consumer(consumer);
  rd_kafka_topic_t* out_topic = rd_kafka_topic_new(producer, to.c_str(), nullptr);

  std::vector<rd_kafka_message_t*> msgs(static_cast<size_t>(batch));
  int64_t copied = 0;
  while (!g_stop && (records == 0 || copied < records)) {
    ssize_t n = rd_kafka_consume_batch_queue(queue, 100, msgs.data(), msgs.size());
    if (n < 0) Die(std::string("consume failed: ") + rd_kafka_err2str(rd_kafka_last_error()));
    for (ssize_t i = 0; i < n; ++i) {
      rd_kafka_message_t* m = msgs[static_cast<size_t>(i)];
      if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        std::fprintf(stderr, "kafka_raw_copier: consume error: %s\n", rd_kafka_message_errstr(m));
        rd_kafka_message_destroy(m);
        continue;
      }
      // F_COPY: the consumed message is released right away, as a framework would have to.
      while (rd_kafka_produce(out_topic, m->partition, RD_KAFKA_MSG_F_COPY, m->payload, m->len,
                              m->key, m->key_len, nullptr) != 0) {
        rd_kafka_resp_err_t err = rd_kafka_last_error();
        if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL)
          Die(std::string("produce failed: ") + rd_kafka_err2str(err));
        rd_kafka_poll(producer, 100);
      }
      rd_kafka_message_destroy(m);
      ++copied;
    }
    rd_kafka_poll(producer, 0);
  }
  if (rd_kafka_flush(producer, 120000) != RD_KAFKA_RESP_ERR_NO_ERROR) Die("flush timed out");
  const int64_t end_us = NowMicros();
  rd_kafka_queue_destroy(queue);
  rd_kafka_topic_destroy(out_topic);
  rd_kafka_consumer_close(consumer);
  rd_kafka_destroy(consumer);
  rd_kafka_destroy(producer);
  std::printf("{\"records\":%lld,\"delivery_errors\":%lld,\"wall_s\":%.3f}\n",
              static_cast<long long>(copied), static_cast<long long>(g_delivery_errors),
              static_cast<double>(end_us - start_us) / 1e6);
  return g_delivery_errors == 0 ? 0 : 1;
}

}  // namespace
}  // namespace flow::bench

int main(int argc, char** argv) {
  return flow::bench::Run(argc, argv);
}
