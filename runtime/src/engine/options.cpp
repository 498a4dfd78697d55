#include "flow/runtime/engine/options.h"
#include "flow/runtime/connectors/kafka_properties.h"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "flow/runtime/checkpoint/checkpoint_store.h"
#include "flow/runtime/common/job_id.h"

namespace flow::rt {
namespace {

bool ParseInt(std::string_view text, int64_t* out) {
  if (text.empty()) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

bool ParseDouble(std::string_view text, double* out) {
  if (text.empty()) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size() && std::isfinite(*out);
}

bool ParseBool(std::string_view text, bool* out) {
  if (text == "true" || text == "1" || text == "yes" || text == "on") {
    *out = true;
    return true;
  }
  if (text == "false" || text == "0" || text == "no" || text == "off") {
    *out = false;
    return true;
  }
  return false;
}

const char* TypeName(ParamType t) {
  switch (t) {
    case ParamType::kInt:
      return "int";
    case ParamType::kDouble:
      return "double";
    case ParamType::kBool:
      return "bool";
    case ParamType::kString:
      return "string";
    case ParamType::kDuration:
      return "duration";
  }
  return "?";
}

bool Valid(ParamType t, std::string_view text) {
  int64_t i;
  double d;
  bool b;
  DurationMs ms;
  switch (t) {
    case ParamType::kInt:
      return ParseInt(text, &i);
    case ParamType::kDouble:
      return ParseDouble(text, &d);
    case ParamType::kBool:
      return ParseBool(text, &b);
    case ParamType::kString:
      return true;
    case ParamType::kDuration:
      return ParseDurationOrMillis(text, &ms);
  }
  return false;
}

const char* Example(ParamType t) {
  switch (t) {
    case ParamType::kInt:
      return "an integer, e.g. 42";
    case ParamType::kDouble:
      return "a number, e.g. 0.5";
    case ParamType::kBool:
      return "true or false";
    case ParamType::kString:
      return "text";
    case ParamType::kDuration:
      return "a duration, e.g. 500ms, 10s, 5m";
  }
  return "?";
}

}  // namespace

Result<JobParams> JobParams::Make(const std::vector<ParamSpec>& specs,
                                  const std::map<std::string, std::string>& values) {
  JobParams p;
  for (const ParamSpec& s : specs) {
    if (!Valid(s.type, s.default_value) && !s.default_value.empty()) {
      return Status::Internal(fmt::format("parameter '{}': default '{}' is not {}", s.name,
                                          s.default_value, Example(s.type)));
    }
    p.values_[s.name] = Value{s.type, s.default_value};
  }
  for (const auto& [name, text] : values) {
    auto it = p.values_.find(name);
    if (it == p.values_.end()) {
      std::string known;
      for (const ParamSpec& s : specs) known += (known.empty() ? "" : ", ") + s.name;
      return Status::InvalidArgument(fmt::format("--set {}: unknown parameter (known: {})", name,
                                                 known.empty() ? "none" : known));
    }
    if (!Valid(it->second.type, text)) {
      return Status::InvalidArgument(
          fmt::format("--set {}={}: expected {}", name, text, Example(it->second.type)));
    }
    it->second.text = text;
  }
  return p;
}

Result<const JobParams::Value*> JobParams::Find(std::string_view name, ParamType want) const {
  auto it = values_.find(name);
  if (it == values_.end())
    return Status::InvalidArgument(fmt::format("unknown parameter '{}'", name));
  if (it->second.type != want) {
    return Status::InvalidArgument(fmt::format("parameter '{}' is {}, not {}", name,
                                               TypeName(it->second.type), TypeName(want)));
  }
  if (it->second.text.empty() && want != ParamType::kString) {
    return Status::InvalidArgument(
        fmt::format("parameter '{}' has no value; use --set {}=...", name, name));
  }
  return &it->second;
}

bool JobParams::Has(std::string_view name) const {
  return values_.find(name) != values_.end();
}

Result<int64_t> JobParams::GetInt(std::string_view name) const {
  auto v = Find(name, ParamType::kInt);
  if (!v.ok()) return v.status();
  int64_t out = 0;
  ParseInt((*v)->text, &out);
  return out;
}

Result<double> JobParams::GetDouble(std::string_view name) const {
  auto v = Find(name, ParamType::kDouble);
  if (!v.ok()) return v.status();
  double out = 0;
  ParseDouble((*v)->text, &out);
  return out;
}

Result<bool> JobParams::GetBool(std::string_view name) const {
  auto v = Find(name, ParamType::kBool);
  if (!v.ok()) return v.status();
  bool out = false;
  ParseBool((*v)->text, &out);
  return out;
}

Result<std::string> JobParams::GetString(std::string_view name) const {
  auto v = Find(name, ParamType::kString);
  if (!v.ok()) return v.status();
  return (*v)->text;
}

Result<DurationMs> JobParams::GetDuration(std::string_view name) const {
  auto v = Find(name, ParamType::kDuration);
  if (!v.ok()) return v.status();
  DurationMs out = 0;
  ParseDurationOrMillis((*v)->text, &out);  // validated when the value was set
  return out;
}

Result<ParsedArgs> ParseJobArgs(int argc, const char* const* argv,
                                const std::vector<ParamSpec>& specs,
                                std::string_view default_job_id) {
  ParsedArgs parsed;
  JobOptions& o = parsed.options;
  o.parallelism = std::max(1u, std::thread::hardware_concurrency());
  o.progress_interval_s = 5;
  std::map<std::string, std::string> sets;
  std::string_view forget_only;  // a flag that needs --forget-instance
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    std::string_view value;
    bool has_inline = false;
    if (arg.starts_with("--")) {
      if (auto eq = arg.find('='); eq != std::string_view::npos && !arg.starts_with("--set")) {
        value = arg.substr(eq + 1);
        arg = arg.substr(0, eq);
        has_inline = true;
      }
    }
    auto next = [&](std::string_view* out) -> Status {
      if (has_inline) {
        *out = value;
        return Status::Ok();
      }
      if (i + 1 >= argc) return Status::InvalidArgument(fmt::format("{}: missing value", arg));
      *out = argv[++i];
      return Status::Ok();
    };
    std::string_view v;
    if (arg == "--help" || arg == "-h") {
      parsed.help = true;
    } else if (arg == "--parallelism") {
      FLOW_RETURN_IF_ERROR(next(&v));
      int64_t n;
      if (!ParseInt(v, &n) || n < 1 || n > o.max_parallelism) {
        return Status::InvalidArgument(fmt::format(
            "--parallelism {}: expected an integer from 1 to {}", v, o.max_parallelism));
      }
      o.parallelism = static_cast<uint32_t>(n);
    } else if (arg == "--set" || arg.starts_with("--set=")) {
      if (arg.starts_with("--set=")) {
        v = arg.substr(6);
      } else {
        FLOW_RETURN_IF_ERROR(next(&v));
      }
      auto eq = v.find('=');
      if (eq == std::string_view::npos || eq == 0) {
        return Status::InvalidArgument(fmt::format("--set {}: expected name=value", v));
      }
      sets[std::string(v.substr(0, eq))] = std::string(v.substr(eq + 1));
    } else if (arg == "--metrics-port") {
      FLOW_RETURN_IF_ERROR(next(&v));
      int64_t n;
      if (!ParseInt(v, &n) || n < 0 || n > 65535) {
        return Status::InvalidArgument(
            fmt::format("--metrics-port {}: expected a port from 0 to 65535", v));
      }
      o.metrics_port = static_cast<int>(n);
    } else if (arg == "--savepoint-on-stop") {
      if (has_inline && value != "true" && value != "false") {
        return Status::InvalidArgument(
            fmt::format("--savepoint-on-stop={}: expected true or false", value));
      }
      o.savepoint_on_stop = !has_inline || value == "true";
    } else if (arg == "--allow-dropped-state") {
      if (has_inline && value != "true" && value != "false") {
        return Status::InvalidArgument(
            fmt::format("--allow-dropped-state={}: expected true or false", value));
      }
      o.allow_dropped_state = !has_inline || value == "true";
    } else if (arg == "--kafka-properties") {
      FLOW_RETURN_IF_ERROR(next(&v));
      auto props = ReadKafkaPropertiesFile(std::string(v));
      if (!props.ok()) return Status::InvalidArgument(props.status().message());
      o.kafka_properties = std::move(props).value();
    } else if (arg == "--metrics-bind") {
      FLOW_RETURN_IF_ERROR(next(&v));
      o.metrics_bind = std::string(v);
    } else if (arg == "--progress-interval") {
      FLOW_RETURN_IF_ERROR(next(&v));
      double s;
      if (!ParseDouble(v, &s) || s < 0) {
        return Status::InvalidArgument(
            fmt::format("--progress-interval {}: expected seconds >= 0", v));
      }
      o.progress_interval_s = s;
    } else if (arg == "--job-id") {
      FLOW_RETURN_IF_ERROR(next(&v));
      if (!IsValidJobId(v)) {
        return Status::InvalidArgument(
            fmt::format("--job-id {}: expected 1 to 200 characters of A-Z a-z 0-9 . _ -", v));
      }
      o.job_id = std::string(v);
    } else if (arg == "--instance") {
      FLOW_RETURN_IF_ERROR(next(&v));
      if (v.size() > 64 || !IsValidJobId(v)) {
        return Status::InvalidArgument(
            fmt::format("--instance {}: expected 1 to 64 characters of A-Z a-z 0-9 . _ -", v));
      }
      o.instance = std::string(v);
    } else if (arg == "--forget-instance") {
      FLOW_RETURN_IF_ERROR(next(&v));
      if (v.size() > 64 || !IsValidJobId(v)) {
        return Status::InvalidArgument(fmt::format(
            "--forget-instance {}: expected 1 to 64 characters of A-Z a-z 0-9 . _ -", v));
      }
      parsed.forget_instance = std::string(v);
    } else if (arg == "--dry-run") {
      parsed.dry_run = true;
      forget_only = "--dry-run";
    } else if (arg == "--forget-wait") {
      forget_only = "--forget-wait";
      FLOW_RETURN_IF_ERROR(next(&v));
      DurationMs ms = 0;
      if (!ParseDurationOrMillis(v, &ms) || ms < 0) {
        return Status::InvalidArgument(
            fmt::format("--forget-wait {}: expected a duration such as 60s or 5m", v));
      }
      parsed.forget_wait_ms = ms;
    } else if (arg == "--shuffle-brokers") {
      FLOW_RETURN_IF_ERROR(next(&v));
      if (v.empty()) return Status::InvalidArgument("--shuffle-brokers: expected host:port[,...]");
      o.shuffle_brokers = std::string(v);
    } else if (arg == "--state-root") {
      FLOW_RETURN_IF_ERROR(next(&v));
      if (v.empty()) return Status::InvalidArgument("--state-root: expected a directory");
      o.state_root = std::string(v);
      if (Status where = CheckCheckpointLocation(o.state_root); !where.ok())
        return Status::InvalidArgument("--state-root: " + where.message());
    } else if (arg == "--shuffle-partitions") {
      FLOW_RETURN_IF_ERROR(next(&v));
      int64_t n;
      if (!ParseInt(v, &n) || n < 1 || n > 65536) {
        return Status::InvalidArgument(
            fmt::format("--shuffle-partitions {}: expected a partition count from 1 to 65536", v));
      }
      o.shuffle_partitions = static_cast<int32_t>(n);
    } else if (arg == "--state-backend") {
      FLOW_RETURN_IF_ERROR(next(&v));
      if (v != "heap" && v != "rocksdb") {
        return Status::InvalidArgument(
            fmt::format("--state-backend {}: expected heap or rocksdb", v));
      }
      o.state_backend = std::string(v);
    } else if (arg == "--state-local-dir") {
      FLOW_RETURN_IF_ERROR(next(&v));
      if (v.empty()) return Status::InvalidArgument("--state-local-dir: expected a directory");
      o.state_local_dir = std::string(v);
    } else if (arg == "--state-cache-entries") {
      FLOW_RETURN_IF_ERROR(next(&v));
      int64_t n;
      if (!ParseInt(v, &n) || n < 1) {
        return Status::InvalidArgument(
            fmt::format("--state-cache-entries {}: expected a positive integer", v));
      }
      o.state_cache_entries = static_cast<uint64_t>(n);
    } else if (arg == "--log-level") {
      FLOW_RETURN_IF_ERROR(next(&v));
      if (!ParseLogLevel(v, &o.log_level)) {
        return Status::InvalidArgument(
            fmt::format("--log-level {}: expected debug, info, warn, error or off", v));
      }
    } else if (arg == "--log-format") {
      FLOW_RETURN_IF_ERROR(next(&v));
      if (!ParseLogFormat(v, &o.log_format)) {
        return Status::InvalidArgument(fmt::format("--log-format {}: expected text or json", v));
      }
    } else {
      // Checkpoint flags all take a value; peek at it and consume it only when the flag is one.
      std::string_view peek =
          has_inline ? value : (i + 1 < argc ? std::string_view(argv[i + 1]) : std::string_view());
      auto consumed = ParseCheckpointFlag(arg, peek, &o.checkpoint);
      if (!consumed.ok()) return consumed.status();
      if (!*consumed)
        return Status::InvalidArgument(fmt::format("unknown flag '{}' (see --help)", argv[i]));
      if (!has_inline) {
        if (i + 1 >= argc) return Status::InvalidArgument(fmt::format("{}: missing value", arg));
        ++i;
      }
    }
  }
  if (o.job_id.empty())
    o.job_id = !default_job_id.empty() ? std::string(default_job_id)
                                       : JobIdFromName(argc > 0 ? argv[0] : "");
  if (parsed.forget_instance.empty() && !forget_only.empty())
    return Status::InvalidArgument(
        fmt::format("{}: only with --forget-instance NAME", forget_only));
  // Forgetting runs no job: the flags only a running instance needs are not checked.
  if (!parsed.forget_instance.empty()) return parsed;
  if (!o.state_root.empty()) {
    // Every instance's checkpoints under one root, so that whichever instance is given a
    // repartition partition next can read the state of its keys (docs/deploy.md).
    if (o.instance.empty()) {
      return Status::InvalidArgument(
          "--state-root: the state dirs of a job's instances, one per --instance name; give "
          "--instance NAME, or --state-dir DIR for one process");
    }
    if (!o.checkpoint.state_dir.empty()) {
      return Status::InvalidArgument(fmt::format(
          "--state-root {} and --state-dir {}: give one; under --state-root the instance's state "
          "dir is {}/{}",
          o.state_root, o.checkpoint.state_dir, o.state_root, o.instance));
    }
    o.checkpoint.state_dir = (std::filesystem::path(o.state_root) / o.instance).string();
  }
  FLOW_RETURN_IF_ERROR(ResolveCheckpointFlags(&o.checkpoint, /*has_exactly_once_sink=*/false));
  if (!o.state_root.empty() && o.checkpoint.retained < 3) {
    // Retention learns that a checkpoint is named by a committed offset up to two checkpoints
    // after it completed (engine/state_adoption.h).
    return Status::InvalidArgument(
        fmt::format("--retained-checkpoints {}: under --state-root at least 3 are kept",
                    o.checkpoint.retained));
  }
  if (!o.instance.empty() && o.checkpoint.state_dir.empty()) {
    // Offsets reach the group only when a checkpoint completes.
    return Status::InvalidArgument(
        "--instance: instances commit their progress at checkpoints; give --state-dir DIR (one "
        "per instance) or --state-root DIR (shared by all)");
  }
  if (!o.instance.empty()) {
    if (!o.checkpoint.interval_ms) {
      o.checkpoint.options.interval_ms = CheckpointOptions::ForJob(true).interval_ms;
      o.checkpoint.interval_ms = o.checkpoint.options.interval_ms;
    }
    if (o.checkpoint.options.interval_ms <= 0) {
      return Status::InvalidArgument(
          "--checkpoint-interval: an instance (--instance) hands its progress to the others at "
          "checkpoints; checkpoints cannot be off");
    }
    // An instance that dies for good leaves its open Kafka transaction until the transaction
    // timeout, which must outlive a checkpoint's timeout: with the 10 min default every reader of
    // its output would wait 15 min (docs/deploy.md).
    if (!o.checkpoint.timeout_given) o.checkpoint.options.timeout_ms = kInstanceCheckpointTimeoutMs;
  }
  if (o.savepoint_on_stop && o.checkpoint.state_dir.empty()) {
    return Status::InvalidArgument(
        "--savepoint-on-stop: savepoints are kept in the state dir; give --state-dir DIR");
  }
  auto params = JobParams::Make(specs, sets);
  if (!params.ok()) return params.status();
  o.params = std::move(params).value();
  return parsed;
}

std::string JobUsage(std::string_view program, const std::vector<ParamSpec>& specs) {
  std::string out = fmt::format(
      "usage: {} [flags]\n\n"
      "flags:\n"
      "  --parallelism N        parallel subtasks per operator (default: hardware threads)\n"
      "  --set name=value       set a job parameter (repeatable)\n"
      "  --metrics-port P       serve the job's HTTP endpoints at 127.0.0.1:P: GET /metrics\n"
      "                         (Prometheus), GET /healthz, GET /readyz,\n"
      "                         POST /savepoint[?stop=true&name=N]\n"
      "  --metrics-bind ADDR    address for the HTTP endpoints (default: 127.0.0.1)\n"
      "  --savepoint-on-stop    SIGINT/SIGTERM stop the job with a savepoint (needs --state-dir)\n"
      "  --allow-dropped-state  restoring into a changed script: drop the state of removed\n"
      "                         operators and of changed ones that cannot keep it (they start\n"
      "                         empty) instead of refusing the restore\n"
      "  --kafka-properties F   librdkafka settings (key=value lines, ${{ENV}} expanded) for "
      "every\n"
      "                         Kafka client of the job, e.g. security.protocol, sasl.*, ssl.*\n"
      "  --progress-interval S  seconds between progress lines on stderr, 0 = off (default: 5)\n"
      "  --log-level L          debug, info, warn, error or off (default: info)\n"
      "  --log-format F         text or json (one JSON object per line) (default: text)\n"
      "  --state-backend K      keyed state backend: heap or rocksdb (default: heap)\n"
      "  --state-local-dir DIR  rocksdb working files (default: $TMPDIR or /tmp)\n"
      "  --state-cache-entries N  rocksdb entries kept in memory per state (default: 65536)\n"
      "  --job-id ID            the job's identity: its state dir and Kafka transactions belong to "
      "it\n"
      "                         (default: compiled in from the script's file name)\n"
      "  --instance NAME        run as one instance of the job, sharing its Kafka partitions with\n"
      "                         the other instances of the same --job-id (docs/deploy.md); NAME "
      "is\n"
      "                         unique per instance and stable across its restarts\n"
      "  --state-root DIR       instances: a directory every instance can read (a shared file\n"
      "                         system); this instance's state dir is DIR/<instance>, and the\n"
      "                         state of a repartition partition's keys moves with the\n"
      "                         partition between instances\n"
      "  --shuffle-brokers B    instances: the Kafka cluster of the job's repartition topics "
      "(those\n"
      "                         of its key-by steps); the cluster of its exactly-once Kafka sinks\n"
      "  --shuffle-partitions N partitions of a repartition topic the job creates (default: 12)\n"
      "  --forget-instance NAME instead of running: remove what instance NAME, stopped for good,\n"
      "                         left (its checkpoints under --state-root once no committed offset\n"
      "                         names them, its progress topic) after fencing it; needs\n"
      "                         --shuffle-brokers (docs/deploy.md)\n"
      "  --dry-run              with --forget-instance: report, delete nothing\n"
      "  --forget-wait D        with --forget-instance: the longest wait for the instance's\n"
      "                         members to leave and the others to commit its partitions\n"
      "                         (default: 60s)\n"
      "  --help                 show this text\n",
      program);
  out += "\ncheckpoint flags:\n" + CheckpointFlagsUsage();
  if (!specs.empty()) {
    out += "\nparameters:\n";
    for (const ParamSpec& s : specs) {
      out += fmt::format("  {} ({}{}{}){}{}\n", s.name, TypeName(s.type),
                         s.default_value.empty() ? "" : ", default ", s.default_value,
                         s.help.empty() ? "" : "  ", s.help);
    }
  }
  return out;
}

}  // namespace flow::rt
