#include "flow/runtime/connectors/connector_factory.h"

#include <limits>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "flow/runtime/connectors/blackhole_sink.h"
#include "flow/runtime/connectors/connector_catalog.h"
#include "flow/runtime/connectors/file_sink.h"
#include "flow/runtime/connectors/file_source.h"
#include "flow/runtime/connectors/kafka_properties.h"
#include "flow/runtime/connectors/kafka_sink.h"
#include "flow/runtime/connectors/kafka_source.h"
#include "flow/runtime/connectors/stdin_source.h"
#include "flow/runtime/connectors/stdout_sink.h"
#include "flow/runtime/formats/value_text.h"

namespace flow::rt {
namespace {

constexpr std::string_view kKafkaPrefix = "kafka.";

// Reads typed options of one connector and remembers which were used, to reject unknown ones.
class OptionReader {
 public:
  OptionReader(std::string what, const ConnectorOptions& options)
      : what_(std::move(what)), options_(options) {}

  const std::string* Find(const std::string& name) {
    known_.insert(name);
    auto it = options_.find(name);
    return it == options_.end() ? nullptr : &it->second;
  }

  Status String(const std::string& name, std::string* out, bool required = false) {
    const std::string* v = Find(name);
    if (v == nullptr) {
      if (required) return Error(name, "is required");
      return Status::Ok();
    }
    if (v->empty()) return Error(name, "must not be empty");
    *out = *v;
    return Status::Ok();
  }

  Status Bool(const std::string& name, bool* out) {
    const std::string* v = Find(name);
    if (v == nullptr) return Status::Ok();
    if (*v == "true") {
      *out = true;
    } else if (*v == "false") {
      *out = false;
    } else {
      return Error(name, fmt::format("must be true or false, not \"{}\"", *v));
    }
    return Status::Ok();
  }

  template <typename T>
  Status Size(const std::string& name, T* out) {
    const std::string* v = Find(name);
    if (v == nullptr) return Status::Ok();
    std::string_view text = *v;
    uint64_t scale = 1;
    for (auto [suffix, s] : {std::pair<std::string_view, uint64_t>{"KiB", 1ULL << 10},
                             {"MiB", 1ULL << 20},
                             {"GiB", 1ULL << 30},
                             {"B", 1}}) {
      if (text.ends_with(suffix)) {
        text.remove_suffix(suffix.size());
        scale = s;
        break;
      }
    }
    int64_t n = 0;
    uint64_t bytes = 0;
    if (!ParseInt64(text, &n) || n <= 0 ||
        __builtin_mul_overflow(static_cast<uint64_t>(n), scale, &bytes) ||
        bytes > std::numeric_limits<T>::max()) {
      return Error(name, fmt::format("must be a positive size like 16MiB, not \"{}\"", *v));
    }
    *out = static_cast<T>(bytes);
    return Status::Ok();
  }

  Status Int(const std::string& name, int64_t lo, int64_t hi, int64_t* out) {
    const std::string* v = Find(name);
    if (v == nullptr) return Status::Ok();
    int64_t n;
    if (!ParseInt64(*v, &n) || n < lo || n > hi) {
      return Error(name, fmt::format("must be an integer in [{}, {}], not \"{}\"", lo, hi, *v));
    }
    *out = n;
    return Status::Ok();
  }

  // `zero_is_off`: 0 is accepted too (it switches the feature off).
  Status DurationMsInt(const std::string& name, int* out, bool zero_is_off = false) {
    const std::string* v = Find(name);
    if (v == nullptr) return Status::Ok();
    DurationMs d = 0;
    if (!(ParseInt64(*v, &d) || ParseDuration(*v, &d)) || d < 0 || (d == 0 && !zero_is_off) ||
        d > std::numeric_limits<int>::max()) {
      if (zero_is_off)
        return Error(name, fmt::format("must be a duration like 10s, or 0 (off), not \"{}\"", *v));
      return Error(name, fmt::format("must be a positive duration like 10s, not \"{}\"", *v));
    }
    *out = static_cast<int>(d);
    return Status::Ok();
  }

  Status Choice(const std::string& name, const std::vector<std::string_view>& choices,
                size_t* out) {
    const std::string* v = Find(name);
    if (v == nullptr) return Status::Ok();
    for (size_t i = 0; i < choices.size(); ++i) {
      if (*v == choices[i]) {
        *out = i;
        return Status::Ok();
      }
    }
    return Error(name, fmt::format("must be one of {}, not \"{}\"", fmt::join(choices, "|"), *v));
  }

  // The librdkafka settings: `kafka.<key>` options and the script's `properties` lines.
  Status Passthrough(std::map<std::string, std::string>* out) {
    auto p = KafkaPropertiesOfOptions(options_, what_, &known_);
    if (!p.ok()) return p.status();
    *out = std::move(p).value();
    return Status::Ok();
  }

  // kInvalidArgument for the first option that no reader asked for.
  Status RejectUnknown() const {
    for (const auto& [k, v] : options_) {
      if (known_.count(k) == 0) {
        std::vector<std::string> names(known_.begin(), known_.end());
        std::erase_if(names, [](const std::string& n) { return n.starts_with(kKafkaPrefix); });
        return Status::InvalidArgument(fmt::format(
            "{}: unknown option `{}` (known: {})", what_, k,
            names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "))));
      }
    }
    return Status::Ok();
  }

 private:
  Status Error(const std::string& name, std::string problem) const {
    return Status::InvalidArgument(fmt::format("{}: option `{}` {}", what_, name, problem));
  }

  std::string what_;
  const ConnectorOptions& options_;
  std::set<std::string> known_;
};

Result<std::unique_ptr<RawSource>> MakeFileSource(OptionReader& r) {
  FileSourceOptions o;
  int64_t header = 0;
  FLOW_RETURN_IF_ERROR(r.String("path", &o.path, true));
  FLOW_RETURN_IF_ERROR(r.Size("max_line_bytes", &o.max_line_bytes));
  FLOW_RETURN_IF_ERROR(r.Size("read_chunk_bytes", &o.read_chunk_bytes));
  FLOW_RETURN_IF_ERROR(r.Bool("skip_empty_lines", &o.skip_empty_lines));
  FLOW_RETURN_IF_ERROR(r.Bool("quoted_newlines", &o.quoted_newlines));
  FLOW_RETURN_IF_ERROR(r.Int("header_lines", 0, 1000, &header));
  FLOW_RETURN_IF_ERROR(r.Bool("replay_first_line_on_restore", &o.replay_first_line_on_restore));
  o.header_lines = static_cast<uint32_t>(header);
  FLOW_RETURN_IF_ERROR(r.RejectUnknown());
  return std::unique_ptr<RawSource>(std::make_unique<FileSource>(std::move(o)));
}

Result<std::unique_ptr<RawSource>> MakeStdinSource(OptionReader& r) {
  StdinSourceOptions o;
  FLOW_RETURN_IF_ERROR(r.Size("max_line_bytes", &o.max_line_bytes));
  FLOW_RETURN_IF_ERROR(r.Bool("skip_empty_lines", &o.skip_empty_lines));
  FLOW_RETURN_IF_ERROR(r.Bool("quoted_newlines", &o.quoted_newlines));
  FLOW_RETURN_IF_ERROR(r.RejectUnknown());
  return std::unique_ptr<RawSource>(std::make_unique<StdinSource>(o));
}

Result<std::unique_ptr<RawSource>> MakeKafkaSource(OptionReader& r) {
  KafkaSourceOptions o;
  size_t start = 0, isolation = 0;
  FLOW_RETURN_IF_ERROR(r.String("brokers", &o.brokers, true));
  FLOW_RETURN_IF_ERROR(r.String("topic", &o.topic, true));
  FLOW_RETURN_IF_ERROR(r.String("group_id", &o.group_id));
  FLOW_RETURN_IF_ERROR(r.Choice("start", {"earliest", "latest", "committed"}, &start));
  FLOW_RETURN_IF_ERROR(r.Choice("isolation", {"read_committed", "read_uncommitted"}, &isolation));
  FLOW_RETURN_IF_ERROR(r.DurationMsInt("metadata_timeout", &o.metadata_timeout_ms));
  FLOW_RETURN_IF_ERROR(r.DurationMsInt("unavailable_timeout", &o.unavailable_timeout_ms));
  FLOW_RETURN_IF_ERROR(r.DurationMsInt("partition_discovery", &o.partition_discovery_interval_ms,
                                       /*zero_is_off=*/true));
  o.start = static_cast<KafkaStart>(start);
  o.read_committed = isolation == 0;
  FLOW_RETURN_IF_ERROR(r.Passthrough(&o.properties));
  FLOW_RETURN_IF_ERROR(r.RejectUnknown());
  return std::unique_ptr<RawSource>(std::make_unique<KafkaSource>(std::move(o)));
}

Result<std::unique_ptr<RawSink>> MakeFileSink(OptionReader& r) {
  FileSinkOptions o;
  FLOW_RETURN_IF_ERROR(r.String("directory", &o.directory, true));
  FLOW_RETURN_IF_ERROR(r.String("prefix", &o.prefix));
  if (const std::string* suffix = r.Find("suffix")) o.suffix = *suffix;  // may be empty
  FLOW_RETURN_IF_ERROR(r.Size("roll_bytes", &o.roll_bytes));
  FLOW_RETURN_IF_ERROR(r.Size("buffer_bytes", &o.buffer_bytes));
  FLOW_RETURN_IF_ERROR(r.RejectUnknown());
  return std::unique_ptr<RawSink>(std::make_unique<FileSink>(std::move(o)));
}

Result<std::unique_ptr<RawSink>> MakeKafkaSink(OptionReader& r) {
  KafkaSinkOptions o;
  size_t partitioner = 0;
  int64_t partition = 0;
  FLOW_RETURN_IF_ERROR(r.String("brokers", &o.brokers, true));
  FLOW_RETURN_IF_ERROR(r.String("topic", &o.topic, true));
  FLOW_RETURN_IF_ERROR(r.Choice("partitioner", {"key_hash", "explicit"}, &partitioner));
  FLOW_RETURN_IF_ERROR(r.Int("partition", 0, std::numeric_limits<int32_t>::max(), &partition));
  FLOW_RETURN_IF_ERROR(r.DurationMsInt("metadata_timeout", &o.metadata_timeout_ms));
  FLOW_RETURN_IF_ERROR(r.DurationMsInt("delivery_timeout", &o.delivery_timeout_ms));
  FLOW_RETURN_IF_ERROR(r.DurationMsInt("flush_timeout", &o.flush_timeout_ms));
  o.partitioner = static_cast<KafkaPartitioner>(partitioner);
  o.partition = static_cast<int32_t>(partition);
  FLOW_RETURN_IF_ERROR(r.Passthrough(&o.properties));
  FLOW_RETURN_IF_ERROR(r.RejectUnknown());
  return std::unique_ptr<RawSink>(std::make_unique<KafkaSink>(std::move(o)));
}

Result<std::unique_ptr<RawSink>> MakeStdoutSink(OptionReader& r) {
  StdoutSinkOptions o;
  FLOW_RETURN_IF_ERROR(r.Size("buffer_bytes", &o.buffer_bytes));
  FLOW_RETURN_IF_ERROR(r.RejectUnknown());
  return std::unique_ptr<RawSink>(std::make_unique<StdoutSink>(o));
}

Result<std::unique_ptr<RawSink>> MakeBlackholeSink(OptionReader& r) {
  FLOW_RETURN_IF_ERROR(r.RejectUnknown());
  return std::unique_ptr<RawSink>(std::make_unique<BlackholeSink>());
}

// The builders. Which kinds are offered is the catalog's to say; tests check both list the same.
struct SourceBuilder {
  std::string_view kind;
  Result<std::unique_ptr<RawSource>> (*make)(OptionReader&);
};
constexpr SourceBuilder kSourceBuilders[] = {
    {"file", MakeFileSource}, {"stdin", MakeStdinSource}, {"kafka", MakeKafkaSource}};

struct SinkBuilder {
  std::string_view kind;
  Result<std::unique_ptr<RawSink>> (*make)(OptionReader&);
};
constexpr SinkBuilder kSinkBuilders[] = {{"file", MakeFileSink},
                                         {"kafka", MakeKafkaSink},
                                         {"stdout", MakeStdoutSink},
                                         {"blackhole", MakeBlackholeSink}};

}  // namespace

Result<std::unique_ptr<RawSource>> MakeRawSource(std::string_view kind,
                                                 const ConnectorOptions& options) {
  if (!IsByteSourceKind(kind)) {
    return Status::InvalidArgument(fmt::format(
        "unknown source `{}` (known: {})", kind,
        ConnectorKindList([](const ConnectorCaps& c) { return c.source && !c.generator; }, ", ")));
  }
  OptionReader r(fmt::format("{} source", kind), options);
  for (const SourceBuilder& b : kSourceBuilders) {
    if (b.kind == kind) return b.make(r);
  }
  return Status::Internal(fmt::format("the connector factory cannot build a `{}` source", kind));
}

Result<std::unique_ptr<RawSink>> MakeRawSink(std::string_view kind,
                                             const ConnectorOptions& options) {
  if (!IsSinkKind(kind)) {
    return Status::InvalidArgument(
        fmt::format("unknown sink `{}` (known: {})", kind,
                    ConnectorKindList([](const ConnectorCaps& c) { return c.sink; }, ", ")));
  }
  OptionReader r(fmt::format("{} sink", kind), options);
  for (const SinkBuilder& b : kSinkBuilders) {
    if (b.kind == kind) return b.make(r);
  }
  return Status::Internal(fmt::format("the connector factory cannot build a `{}` sink", kind));
}

std::vector<std::string_view> RawSourceBuilderKinds() {
  std::vector<std::string_view> out;
  for (const SourceBuilder& b : kSourceBuilders) out.push_back(b.kind);
  return out;
}

std::vector<std::string_view> RawSinkBuilderKinds() {
  std::vector<std::string_view> out;
  for (const SinkBuilder& b : kSinkBuilders) out.push_back(b.kind);
  return out;
}

}  // namespace flow::rt
