#include "flow/runtime/txn/txn_sink_spec.h"
#include "flow/runtime/connectors/kafka_properties.h"

#include <charconv>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "flow/runtime/common/time.h"
#include "flow/runtime/connectors/connector_catalog.h"

namespace flow::rt {

namespace {

// The job's one Kafka transaction group on `config.brokers`: every exactly-once Kafka sink and
// every repartition sink of a job share it, so they commit in one transaction.
CommitGroupSpec KafkaGroupSpec(const KafkaTxnSinkConfig& config) {
  CommitGroupSpec g;
  g.key = "Kafka brokers `" + config.brokers + "`";
  g.start = [config](const CommitGroupContext& ctx,
                     uint32_t participants) -> Result<std::unique_ptr<CommitGroup>> {
    if (ctx.job_id.empty()) {
      return Status::InvalidArgument(
          "exactly-once Kafka sinks need a job id: --job-id ID (stable across restarts, unique per "
          "job; [A-Za-z0-9._-])");
    }
    KafkaTransactionOptions o;
    o.brokers = config.brokers;
    o.job_id = ctx.job_id;
    o.instance = ctx.instance;
    o.transaction_timeout_ms = config.transaction_timeout_ms;
    if (config.retry_timeout_ms > 0) {
      o.retry_timeout_ms = static_cast<int>(config.retry_timeout_ms);
    } else if (!ctx.instance.empty()) {
      // The transaction timeout of an instance grows with this bound (kafka_exactly_once_sink.h).
      o.retry_timeout_ms = kInstanceRetryTimeoutMs;
    }
    // The job's failure ends the group's waits (full queue, commit) instead of their bounds.
    o.cancel = ctx.cancel;
    o.checkpoints = ctx.checkpoints;
    if (ctx.kafka_properties != nullptr) o.properties = *ctx.kafka_properties;
    for (const auto& [k, v] : config.properties) o.properties[k] = v;
    auto group = KafkaTransactionGroup::Start(std::move(o), participants);
    if (!group.ok()) return group.status();
    return std::unique_ptr<CommitGroup>(std::move(group).value());
  };
  return g;
}

}  // namespace

TxnSinkSpec KafkaTxnSink(KafkaTxnSinkConfig config) {
  CommitGroupSpec g = KafkaGroupSpec(config);
  g.participant = [sink = config.sink](CommitGroup* group, uint32_t participant) {
    // Only the group this spec's `start` made is ever handed back here.
    return std::make_unique<KafkaExactlyOnceSink>(static_cast<KafkaTransactionGroup*>(group),
                                                  participant, sink);
  };
  TxnSinkSpec spec;
  spec.group = std::move(g);
  return spec;
}

TxnSinkSpec RepartitionTxnSink(KafkaTxnSinkConfig config, RepartitionSinkOptions options) {
  CommitGroupSpec g = KafkaGroupSpec(config);
  g.participant = [options](CommitGroup* group, uint32_t participant) {
    return std::make_unique<RepartitionSink>(static_cast<KafkaTransactionGroup*>(group),
                                             participant, options);
  };
  TxnSinkSpec spec;
  spec.group = std::move(g);
  return spec;
}

TxnSinkSpec KafkaTxnSink(std::string brokers, KafkaExactlyOnceSinkOptions options,
                         std::map<std::string, std::string> properties) {
  return KafkaTxnSink(
      KafkaTxnSinkConfig{std::move(brokers), std::move(options), 0, std::move(properties)});
}

TxnSinkSpec FileTxnSink(ExactlyOnceFileSinkOptions options) {
  TxnSinkSpec spec;
  spec.factory = [options](uint32_t, uint32_t) {
    return std::make_unique<ExactlyOnceFileSink>(options);
  };
  return spec;
}

namespace {

// Reads options by name and remembers which were read, so the rest can be reported.
class Reader {
 public:
  Reader(std::string what, const std::map<std::string, std::string>& options)
      : what_(std::move(what)), o_(options) {}

  Status String(const std::string& name, std::string* out, bool required = false) {
    known_.insert(name);
    auto it = o_.find(name);
    if (it == o_.end()) return required ? Error(name, "is required") : Status::Ok();
    if (required && it->second.empty()) return Error(name, "must not be empty");
    *out = it->second;
    return Status::Ok();
  }
  Status Int(const std::string& name, int64_t lo, int64_t hi, int64_t* out) {
    known_.insert(name);
    auto it = o_.find(name);
    if (it == o_.end()) return Status::Ok();
    const std::string& v = it->second;
    int64_t n = 0;
    auto r = std::from_chars(v.data(), v.data() + v.size(), n);
    if (r.ec != std::errc() || r.ptr != v.data() + v.size() || n < lo || n > hi) {
      return Error(name, fmt::format("must be an integer from {} to {}, not \"{}\"", lo, hi, v));
    }
    *out = n;
    return Status::Ok();
  }
  Status Duration(const std::string& name, int64_t* out) {
    known_.insert(name);
    auto it = o_.find(name);
    if (it == o_.end()) return Status::Ok();
    DurationMs d = 0;
    const std::string& v = it->second;
    auto r = std::from_chars(v.data(), v.data() + v.size(), d);
    bool plain = r.ec == std::errc() && r.ptr == v.data() + v.size();
    if ((!plain && !ParseDuration(v, &d)) || d <= 0) {
      return Error(name, fmt::format("must be a positive duration like 15m, not \"{}\"", v));
    }
    *out = d;
    return Status::Ok();
  }
  // The librdkafka settings: `kafka.<key>` options and the script's `properties` lines.
  Status Passthrough(std::map<std::string, std::string>* out) {
    auto p = KafkaPropertiesOfOptions(o_, what_, &known_);
    if (!p.ok()) return p.status();
    *out = std::move(p).value();
    return Status::Ok();
  }
  Status RejectUnknown() const {
    for (const auto& [k, v] : o_) {
      if (known_.count(k) != 0) continue;
      std::vector<std::string> names;
      for (const std::string& n : known_) {
        if (!n.starts_with("kafka.")) names.push_back(n);
      }
      return Status::InvalidArgument(
          fmt::format("{}: unknown option `{}` (known: {})", what_, k, fmt::join(names, ", ")));
    }
    return Status::Ok();
  }

 private:
  Status Error(const std::string& name, const std::string& problem) const {
    return Status::InvalidArgument(fmt::format("{}: option `{}` {}", what_, name, problem));
  }
  std::string what_;
  const std::map<std::string, std::string>& o_;
  std::set<std::string> known_;
};

}  // namespace

Result<KafkaTxnSinkConfig> KafkaTxnSinkConfigFor(
    const std::map<std::string, std::string>& options) {
  Reader r("exactly-once kafka sink", options);
  KafkaTxnSinkConfig k;
  std::string partitioner = "key_hash";
  int64_t partition = 0;
  FLOW_RETURN_IF_ERROR(r.String("brokers", &k.brokers, true));
  FLOW_RETURN_IF_ERROR(r.String("topic", &k.sink.topic, true));
  FLOW_RETURN_IF_ERROR(r.String("partitioner", &partitioner));
  FLOW_RETURN_IF_ERROR(r.Int("partition", 0, std::numeric_limits<int32_t>::max(), &partition));
  FLOW_RETURN_IF_ERROR(r.Duration("transaction_timeout", &k.transaction_timeout_ms));
  FLOW_RETURN_IF_ERROR(r.Duration("retry_timeout", &k.retry_timeout_ms));
  if (k.retry_timeout_ms > std::numeric_limits<int>::max()) {
    return Status::InvalidArgument("exactly-once kafka sink: option `retry_timeout` is too long");
  }
  if (partitioner != "key_hash" && partitioner != "explicit") {
    return Status::InvalidArgument(
        fmt::format("exactly-once kafka sink: option `partitioner` must be one of "
                    "key_hash|explicit, not \"{}\"",
                    partitioner));
  }
  k.sink.partitioner =
      partitioner == "explicit" ? KafkaPartitioner::kExplicit : KafkaPartitioner::kKeyHash;
  k.sink.partition = static_cast<int32_t>(partition);
  FLOW_RETURN_IF_ERROR(r.Passthrough(&k.properties));
  FLOW_RETURN_IF_ERROR(r.RejectUnknown());
  return k;
}

namespace {

Result<TxnSinkSpec> KafkaSpec(const std::map<std::string, std::string>& options) {
  auto config = KafkaTxnSinkConfigFor(options);
  if (!config.ok()) return config.status();
  return KafkaTxnSink(std::move(config).value());
}

Result<TxnSinkSpec> FileSpec(const std::map<std::string, std::string>& options) {
  Reader r("exactly-once file sink", options);
  ExactlyOnceFileSinkOptions o;
  int64_t roll = 0, buffer = 0;
  FLOW_RETURN_IF_ERROR(r.String("directory", &o.directory, true));
  FLOW_RETURN_IF_ERROR(r.String("prefix", &o.prefix));
  FLOW_RETURN_IF_ERROR(r.String("suffix", &o.suffix));
  FLOW_RETURN_IF_ERROR(r.Int("roll_bytes", 1, std::numeric_limits<int64_t>::max(), &roll));
  FLOW_RETURN_IF_ERROR(r.Int("buffer_bytes", 1, int64_t{1} << 30, &buffer));
  if (roll > 0) o.roll_bytes = static_cast<uint64_t>(roll);
  if (buffer > 0) o.buffer_bytes = static_cast<size_t>(buffer);
  if (o.prefix.empty() || o.prefix.find('/') != std::string::npos || o.prefix[0] == '.') {
    return Status::InvalidArgument(
        "exactly-once file sink: option `prefix` must be a non-empty file name part not starting "
        "with '.'");
  }
  FLOW_RETURN_IF_ERROR(r.RejectUnknown());
  return FileTxnSink(std::move(o));
}

// The builders. Which sinks offer exactly-once is the catalog's to say; tests check both agree.
struct TxnBuilder {
  std::string_view kind;
  Result<TxnSinkSpec> (*make)(const std::map<std::string, std::string>&);
};
constexpr TxnBuilder kTxnBuilders[] = {{"kafka", KafkaSpec}, {"file", FileSpec}};

}  // namespace

Result<TxnSinkSpec> TxnSinkSpecFor(const std::string& kind,
                                   const std::map<std::string, std::string>& options) {
  if (!SinkOffers(kind, Delivery::kExactlyOnce)) {
    return Status::InvalidArgument(fmt::format("`exactly_once` is supported by {}, not by `{}`",
                                               ExactlyOnceSinksText(), kind));
  }
  for (const TxnBuilder& b : kTxnBuilders) {
    if (b.kind == kind) return b.make(options);
  }
  return Status::Internal(fmt::format("no exactly-once sink is built for `{}`", kind));
}

std::vector<std::string_view> TxnSinkBuilderKinds() {
  std::vector<std::string_view> out;
  for (const TxnBuilder& b : kTxnBuilders) out.push_back(b.kind);
  return out;
}

}  // namespace flow::rt
