#pragma once
// Job options and parameters, parsed from the command line of a built job binary:
//
//   --parallelism N        default: the number of hardware threads
//   --set name=value       repeatable; a parameter the job declared (ParamSpec)
//   --metrics-port P       serve Prometheus metrics on 127.0.0.1:P (0 = ephemeral); default: off
//   --metrics-bind ADDR    default: 127.0.0.1
//   --progress-interval S  seconds between progress lines on stderr; 0 = off; default: 5
//   --log-level L          debug|info|warn|error|off; default: info
//   --job-id ID            stable id of the job for exactly-once Kafka sinks (transactional id
//                          "flow-<ID>"); default: the program's file name ([A-Za-z0-9._-], others
//                          -> '_')
//   --instance NAME        one instance of a job scaled out through Kafka (docs/deploy.md)
//   --shuffle-brokers B    the Kafka cluster of an instance's repartition topics (docs/deploy.md)
//   --shuffle-partitions N partitions of each repartition topic it creates; default: 12
//   --forget-instance NAME remove what an instance stopped for good left; runs no job
//   --dry-run              with --forget-instance: report only
//   --forget-wait D        with --forget-instance: the longest wait for the others; default: 60s
//   --help                 usage on stdout, exit 0
//   --state-backend K      keyed state backend: heap|rocksdb; default: heap
//   --state-local-dir DIR  rocksdb working files; default: $TMPDIR or /tmp
//   --state-cache-entries N  rocksdb in-memory entries per state; default: 65536
//   checkpoint flags       --state-dir, --checkpoint-interval, --restore, ... (checkpoint_flags.h)
//
// Errors are kInvalidArgument Statuses whose message names the flag or parameter; a job binary
// exits 2 on them (docs/runtime.md).

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "flow/runtime/checkpoint/checkpoint_flags.h"
#include "flow/runtime/common/status.h"
#include "flow/runtime/common/time.h"
#include "flow/runtime/engine/clock.h"
#include "flow/runtime/log/log.h"

namespace flow::rt {

enum class ParamType { kInt, kDouble, kBool, kString, kDuration };

// A parameter the job accepts via --set. `default_value` is text in the same syntax as --set
// (durations: "500ms", "10s", "5m", "1h", or plain milliseconds).
struct ParamSpec {
  std::string name;
  ParamType type = ParamType::kString;
  std::string default_value;
  std::string help;
};

// Typed, validated parameter values. Getters fail with kInvalidArgument for an unknown name or
// a type that does not match the declaration. Thread-safe for reading after construction.
class JobParams {
 public:
  JobParams() = default;
  // Validates every value against `specs`; unknown names and malformed values are errors.
  static Result<JobParams> Make(const std::vector<ParamSpec>& specs,
                                const std::map<std::string, std::string>& values);

  Result<int64_t> GetInt(std::string_view name) const;
  Result<double> GetDouble(std::string_view name) const;
  Result<bool> GetBool(std::string_view name) const;
  Result<std::string> GetString(std::string_view name) const;
  Result<DurationMs> GetDuration(std::string_view name) const;
  bool Has(std::string_view name) const;

 private:
  struct Value {
    ParamType type;
    std::string text;
  };
  Result<const Value*> Find(std::string_view name, ParamType want) const;
  std::map<std::string, Value, std::less<>> values_;
};

struct JobOptions {
  // Default parallelism of every operator. Default: 1 (ParseJobArgs: hardware threads).
  uint32_t parallelism = 1;
  // Number of key groups (upper bound for parallelism). Default: kDefaultMaxParallelism.
  uint32_t max_parallelism = 128;
  // Capacity of each channel in elements (batches + control). Default: 8.
  size_t channel_capacity = 8;
  // Maximum records per batch. Default: 1024.
  size_t batch_size = 1024;
  // Prometheus endpoint; -1 = off, 0 = ephemeral port. Default: -1.
  int metrics_port = -1;
  std::string metrics_bind = "127.0.0.1";
  // SIGINT/SIGTERM stop the job with a savepoint (Job::TakeSavepoint with stop) instead of
  // draining. Default: false.
  bool savepoint_on_stop = false;
  // --allow-dropped-state: a restore into a changed script drops state it cannot map
  // (checkpoint/state_mapping.h) instead of refusing.
  bool allow_dropped_state = false;
  // --kafka-properties FILE: librdkafka settings for every Kafka client of the job (a
  // connector's own `properties` win). Default: none.
  std::map<std::string, std::string> kafka_properties;
  // Seconds between progress lines; 0 = off. Default: 0 (ParseJobArgs: 5).
  double progress_interval_s = 0;
  // Applied process-wide by RunMain (SetLogLevel); a Job alone does not change the log level.
  LogLevel log_level = LogLevel::kInfo;
  // --log-format: text lines or JSON objects (SetLogFormat, by RunMain). Default: text.
  LogFormat log_format = LogFormat::kText;
  // Run consecutive forward operators of equal parallelism in one thread. Default: true.
  bool chaining = true;
  // Checkpoints and recovery (docs/checkpoints.md). Default: no state dir, checkpoints off.
  // ParseJobArgs fills it and calls ResolveCheckpointFlags.
  CheckpointFlags checkpoint;
  JobParams params;
  // Keyed state backend (docs/windows-and-state.md): "heap" or "rocksdb", RocksDB's local
  // working directory ("" = $TMPDIR or /tmp) and cache size per state (0 = 65536). Job start
  // hands them to the state layer as FLOW_STATE_BACKEND/_LOCAL_DIR/_CACHE_ENTRIES.
  std::string state_backend = "heap";
  std::string state_local_dir;
  uint64_t state_cache_entries = 0;
  // Stable across restarts, unique per job and Kafka cluster: the state dir records it (another
  // job's dir is refused) and exactly-once Kafka sinks use the transactional id "flow-<job_id>"
  // (docs/exactly-once.md). Default: "" = none (ParseJobArgs: --job-id, else the id compiled in
  // from the script, else the program's file name).
  std::string job_id;
  // --instance: this process is one of several instances of the job that share its Kafka input
  // through a consumer group (docs/deploy.md); unique per instance, stable across its restarts.
  // Default: "" = the job runs as one process and assigns partitions itself.
  std::string instance;
  // --shuffle-brokers: bootstrap servers of the cluster that carries the repartition topics of an
  // instance's key-by steps (engine/shuffle_key_by.h); it must be the cluster of the job's
  // exactly-once Kafka sinks, whose transaction the writes join. Default: "" (a job with a key-by
  // then cannot run with --instance).
  std::string shuffle_brokers;
  // --state-root: the directory every instance's state dir is in (<root>/<instance>), readable by
  // all of them; sets checkpoint.state_dir. With it, the state of a repartition partition's keys
  // moves to whichever instance reads the partition next (engine/state_adoption.h). Default: ""
  // (each instance has its own --state-dir, and a partition whose state is elsewhere is refused).
  std::string state_root;
  // --shuffle-partitions: partition count of a repartition topic the job creates (fixed once it
  // exists; 12 spreads evenly over 1, 2, 3, 4 or 6 instances). 1..max_parallelism. Default: 12.
  int32_t shuffle_partitions = 12;
  // The processing-time clock: what processing-time windows read and their timers wait for.
  // Default: null = the system clock (tests pass a ManualClock).
  std::shared_ptr<Clock> clock;
};

// The checkpoint timeout of an instance (--instance) unless --checkpoint-timeout is given.
inline constexpr DurationMs kInstanceCheckpointTimeoutMs = 30000;

struct ParsedArgs {
  JobOptions options;
  bool help = false;  // --help was given; print JobUsage and exit 0
  // --forget-instance NAME: instead of running, remove what instance NAME of the job left behind
  // (txn/forget_instance.h); --dry-run only reports it. The job's other flags and parameters
  // are accepted and not used, so an instance's own command line serves.
  std::string forget_instance;
  bool dry_run = false;
  // --forget-wait D: how long it waits for a member of the instance to leave and for offsets
  // that name its checkpoints to be committed again. Default: 60 s.
  int64_t forget_wait_ms = 60000;
};

// argv[0] is the program name. See the file comment for the flags. `default_job_id`: the job id
// when --job-id is not given (flowc compiles in one from the script's name); when empty, the
// program's file name (JobIdFromName).
Result<ParsedArgs> ParseJobArgs(int argc, const char* const* argv,
                                const std::vector<ParamSpec>& specs,
                                std::string_view default_job_id = {});
std::string JobUsage(std::string_view program, const std::vector<ParamSpec>& specs);

}  // namespace flow::rt
