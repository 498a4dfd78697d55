// Shared pieces of the Kafka benchmark programs (kafka_raw_copier, kafka_bench_client): the
// record format, the payload checksum, a tiny flag parser and librdkafka set-up helpers.
// Plain C++ and the librdkafka C API only, so the raw copier stays framework-free.
//
// Record format (one JSON object, fields in this order, no spaces; Flow's JSON encoder writes
// the copier's schema back in exactly this form, so a copy is byte-identical):
//   {"id":7,"key":"k7","value":553,"et":1796457600007,"ts":1796461000123456,"pad":"xxxx"}
// id: 0..N-1 (-1 for the end-of-input sentinels); key "k<id mod keys>"; value (id*7919) mod 1000;
// et: event time in epoch ms, the producer's --et-base + id; ts: send time in epoch microseconds
// (latency stamp); pad: 'x' repeated so that a record is about --record-bytes bytes.
// The base must be near the current time: a Flow Kafka sink stamps each output record with its
// event time, and the broker's time retention (7 days by default) deletes records stamped earlier
// at its next check, whether or not a reader has seen them (docs/connectors.md).
#pragma once

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace flow::bench {

constexpr int64_t kSentinelEtOffset = 1000000000;  // sentinels: ~11.6 days after the data
constexpr uint64_t kFnvOffset = 14695981039346656037ull;
constexpr uint64_t kFnvPrime = 1099511628211ull;

// FNV-1a-64 of one payload; a set of payloads is summarized by the sum (mod 2^64) of these, so
// the checksum does not depend on the order of arrival.
inline uint64_t Fnv1a64(std::string_view s) {
  uint64_t h = kFnvOffset;
  for (unsigned char c : s) {
    h ^= c;
    h *= kFnvPrime;
  }
  return h;
}

inline int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Exits with code 2 and a message naming the problem: these are command-line tools.
[[noreturn]] inline void Die(const std::string& msg) {
  std::fprintf(stderr, "%s\n", msg.c_str());
  std::exit(2);
}

// --name value flags; every flag takes a value.
class Flags {
 public:
  Flags(int argc, char** argv, int first) {
    for (int i = first; i < argc; ++i) {
      std::string a = argv[i];
      if (a.rfind("--", 0) != 0 || i + 1 >= argc)
        Die("bad argument `" + a + "` (flags: --name value)");
      values_[a.substr(2)] = argv[++i];
    }
  }
  std::string Str(const std::string& name, const std::string& def = "") const {
    auto it = values_.find(name);
    used_[name] = true;
    if (it != values_.end()) return it->second;
    if (def.empty()) Die("missing --" + name);
    return def;
  }
  int64_t Int(const std::string& name, int64_t def) const {
    auto it = values_.find(name);
    used_[name] = true;
    if (it == values_.end()) return def;
    char* end = nullptr;
    long long v = std::strtoll(it->second.c_str(), &end, 10);
    if (end == it->second.c_str() || *end != '\0')
      Die("--" + name + ": `" + it->second + "` is not an integer");
    return v;
  }
  // Call after reading every flag: an unknown flag is an error, not silently ignored.
  void CheckAllUsed() const {
    for (const auto& [k, v] : values_) {
      if (!used_.count(k)) Die("unknown flag --" + k);
    }
  }

 private:
  std::map<std::string, std::string> values_;
  mutable std::map<std::string, bool> used_;
};

inline rd_kafka_conf_t* MakeConf(const std::map<std::string, std::string>& settings) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char err[512];
  for (const auto& [k, v] : settings) {
    if (rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) {
      Die("librdkafka setting " + k + "=" + v + ": " + err);
    }
  }
  return conf;
}

inline rd_kafka_t* MakeClient(rd_kafka_type_t type, rd_kafka_conf_t* conf) {
  char err[512];
  rd_kafka_t* rk = rd_kafka_new(type, conf, err, sizeof err);
  if (rk == nullptr) Die(std::string("cannot create a Kafka client: ") + err);
  return rk;
}

// Partition count of `topic`; exits when the topic does not exist or the broker does not answer
// within about 10 s (a topic created a moment ago may take that long to appear in metadata).
inline int32_t PartitionCount(rd_kafka_t* rk, const std::string& topic) {
  bool unknown = false;
  for (int attempt = 0; attempt < 50; ++attempt) {
    rd_kafka_topic_t* t = rd_kafka_topic_new(rk, topic.c_str(), nullptr);
    const rd_kafka_metadata_t* md = nullptr;
    rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, t, &md, 5000);
    rd_kafka_topic_destroy(t);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR && md->topic_cnt == 1) {
      rd_kafka_resp_err_t terr = md->topics[0].err;
      int32_t n = md->topics[0].partition_cnt;
      rd_kafka_metadata_destroy(md);
      if (terr == RD_KAFKA_RESP_ERR_NO_ERROR && n > 0) return n;
      unknown = terr == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;
    } else if (md != nullptr) {
      rd_kafka_metadata_destroy(md);
    }
    rd_kafka_poll(rk, 200);
  }
  if (unknown) Die("topic `" + topic + "` does not exist");
  Die("no metadata for topic `" + topic + "` (is the broker up?)");
}

// Assigns every partition of `topic` to the consumer, from the earliest offset.
inline void AssignAll(rd_kafka_t* consumer, const std::string& topic, int32_t partitions) {
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(partitions);
  for (int32_t p = 0; p < partitions; ++p) {
    rd_kafka_topic_partition_list_add(list, topic.c_str(), p)->offset = RD_KAFKA_OFFSET_BEGINNING;
  }
  rd_kafka_resp_err_t err = rd_kafka_assign(consumer, list);
  rd_kafka_topic_partition_list_destroy(list);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
    Die(std::string("assign failed: ") + rd_kafka_err2str(err));
}

// The value of integer field `"name":` in a record payload, or `def` when absent.
inline int64_t JsonIntField(std::string_view payload, std::string_view quoted_name_colon,
                            int64_t def) {
  size_t at = payload.find(quoted_name_colon);
  if (at == std::string_view::npos) return def;
  at += quoted_name_colon.size();
  bool neg = at < payload.size() && payload[at] == '-';
  if (neg) ++at;
  int64_t v = 0;
  bool any = false;
  while (at < payload.size() && payload[at] >= '0' && payload[at] <= '9') {
    v = v * 10 + (payload[at++] - '0');
    any = true;
  }
  if (!any) return def;
  return neg ? -v : v;
}

}  // namespace flow::bench
