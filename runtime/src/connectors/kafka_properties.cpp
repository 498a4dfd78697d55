#include "flow/runtime/connectors/kafka_properties.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "flow/runtime/common/env_refs.h"

namespace flow::rt {
namespace {

struct Reserved {
  std::string_view key;
  std::string_view why;
};

// What Flow sets itself. Sources and sinks share the table: a key reserved for one is harmless
// to refuse for the other.
constexpr Reserved kReserved[] = {
    {"bootstrap.servers", "set by the connector's `brokers:` argument"},
    {"metadata.broker.list", "set by the connector's `brokers:` argument"},
    {"group.id", "set by the source's `group:` argument"},
    {"isolation.level", "set by the source's `read_committed:` argument"},
    {"auto.offset.reset", "set by the source's `start:` argument"},
    {"enable.auto.commit", "Flow keeps source offsets in its checkpoints"},
    {"enable.auto.offset.store", "Flow keeps source offsets in its checkpoints"},
    {"enable.partition.eof", "Flow needs it to know when a partition has nothing more to read"},
    {"transactional.id", "exactly-once sinks derive it from the job id (--job-id)"},
    {"enable.idempotence", "exactly-once sinks need it on"},
    {"transaction.timeout.ms", "set by the exactly-once sink's `transaction_timeout` option"},
};

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<std::string_view> ReservedKafkaProperty(std::string_view key) {
  for (const Reserved& r : kReserved) {
    if (r.key == key) return r.why;
  }
  return std::nullopt;
}

std::string MaskedKafkaValue(std::string_view key, std::string_view value) {
  return IsSecretKafkaProperty(key) ? std::string("***") : std::string(value);
}

Status CheckKafkaProperties(const KafkaProperties& properties, std::string_view where) {
  for (const auto& [key, value] : properties) {
    if (auto why = ReservedKafkaProperty(key)) {
      return Status::InvalidArgument(
          fmt::format("{}: Kafka property `{}` cannot be set: {}", where, key, *why));
    }
  }
  return Status::Ok();
}

Result<KafkaProperties> ParseKafkaProperties(
    std::string_view text, std::string_view where,
    const std::function<const char*(const char*)>& getenv) {
  KafkaProperties out;
  size_t line_no = 0;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = Trim(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++line_no;
    if (line.empty() || line.front() == '#' || line.front() == '!') continue;
    const std::string at = fmt::format("{}, line {}", where, line_no);
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) {
      // Never echo the line: it may be a password typed without its key.
      return Status::InvalidArgument(fmt::format("{}: expected key=value", at));
    }
    const std::string key(Trim(line.substr(0, eq)));
    if (key.empty())
      return Status::InvalidArgument(fmt::format("{}: the key before '=' is empty", at));
    if (auto why = ReservedKafkaProperty(key)) {
      return Status::InvalidArgument(
          fmt::format("{}: Kafka property `{}` cannot be set: {}", at, key, *why));
    }
    auto value = ExpandEnvRefs(Trim(line.substr(eq + 1)), fmt::format("{}: `{}`", at, key), getenv);
    if (!value.ok()) return value.status();
    if (!out.emplace(key, std::move(*value)).second) {
      return Status::InvalidArgument(
          fmt::format("{}: Kafka property `{}` is given twice", at, key));
    }
  }
  return out;
}

Result<KafkaProperties> KafkaPropertiesOfOptions(const std::map<std::string, std::string>& options,
                                                 std::string_view what,
                                                 std::set<std::string>* used) {
  constexpr std::string_view kPrefix = "kafka.";
  KafkaProperties out;
  for (const auto& [k, v] : options) {
    if (k.size() <= kPrefix.size() || !k.starts_with(kPrefix)) continue;
    out[k.substr(kPrefix.size())] = v;
    used->insert(k);
  }
  FLOW_RETURN_IF_ERROR(CheckKafkaProperties(out, what));
  if (auto it = options.find("properties"); it != options.end()) {
    used->insert(it->first);
    auto listed = ParseKafkaProperties(it->second, fmt::format("{}: `properties:`", what));
    if (!listed.ok()) return listed.status();
    for (auto& [k, v] : *listed) {
      if (!out.emplace(k, v).second) {
        return Status::InvalidArgument(
            fmt::format("{}: Kafka property `{}` is given twice", what, k));
      }
    }
  }
  return out;
}

Result<KafkaProperties> ReadKafkaPropertiesFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError(fmt::format("--kafka-properties: cannot read '{}'", path));
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) return Status::IoError(fmt::format("--kafka-properties: cannot read '{}'", path));
  return ParseKafkaProperties(text.str(), "--kafka-properties " + path);
}

}  // namespace flow::rt
