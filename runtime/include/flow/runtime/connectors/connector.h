#pragma once
// The byte-level connector contract between the engine and the connectors (file, stdin, kafka).
// A RawSource yields raw records (payload bytes + key + timestamp); the engine decodes them with a
// format (JSON/CSV/raw) into the job's typed record structs. A RawSink takes encoded bytes.
// Generators that make typed records directly (datagen, nexmark) do not use this interface.
//
// Threading: one instance per source/sink subtask; an instance is used by one thread at a time.
// Errors: every call returns Status/Result; a broker that is down is kUnavailable (retried by the
// caller), bad configuration is kInvalidArgument, a fenced producer is kFenced.

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "flow/runtime/common/metrics.h"
#include "flow/runtime/common/run_handover.h"
#include "flow/runtime/common/serde.h"
#include "flow/runtime/common/status.h"
#include "flow/runtime/common/time.h"

namespace flow::rt {

inline constexpr TimestampMs kNoTimestamp = kMinWatermark;

// A record's headers (Kafka), valid as long as its payload.
class RawHeaders {
 public:
  virtual ~RawHeaders() = default;
  // The value of the last header called `name`; false when there is none (or its value is null).
  // `name` as a std::string: librdkafka needs it NUL-terminated, and copying it per call is waste.
  virtual bool Last(const std::string& name, std::string_view* value) const = 0;
};

// A header of a record a sink writes (Kafka).
struct OutHeader {
  std::string name;
  std::string value;
};

// What a sink's encoder may set besides the key and payload: a kafka sink's `metadata:` fills
// them from the record's fields (docs/connectors.md, "Message metadata").
struct OutMeta {
  TimestampMs timestamp = kNoTimestamp;  // kNoTimestamp: the record's event time
  std::vector<OutHeader> headers;        // in order; cleared by the encoder for every record
};

struct RawRecord {
  std::string_view payload;              // valid until the next Poll() on the same source
  std::string_view key;                  // empty when the record has none
  bool has_key = false;                  // Kafka: the message has a key (possibly empty)
  const RawHeaders* headers = nullptr;   // Kafka: the message's headers, if any
  TimestampMs timestamp = kNoTimestamp;  // the broker's/log's timestamp, if any
  int32_t partition = -1;                // Kafka partition, or -1
  int64_t offset = -1;                   // Kafka offset, file line number (1-based), or -1
};

enum class PollResult {
  kRecords,  // zero or more records were appended
  kIdle,     // nothing now; poll again (the engine may mark the split idle for watermarks)
  kEnd,      // bounded input exhausted; no further records will ever come
};

// The position one subtask of an earlier run snapshotted, for restoring at another parallelism
// (RawSource::RestoreRescaled, SourceFunction::RestoreRescaled).
struct OldSourcePosition {
  uint32_t subtask = 0;
  bool finished = false;  // that subtask had read all its input: none of its splits is left
  std::string position;   // its SnapshotPosition bytes (empty when finished)
};

// The error of a source that would read its whole input in every instance of a job scaled out
// through Kafka (--instance, docs/deploy.md): instances share Kafka partitions only.
inline Status UnsharedSourceError(std::string_view source, std::string_view instance) {
  std::string m(source);
  m.append(": --instance ").append(instance);
  m.append(
      ": every instance would read the whole input; instances of a job share Kafka "
      "partitions only (docs/deploy.md)");
  return Status::InvalidArgument(std::move(m));
}

// What the engine hands a connector before Open (RawSource::Bind, RawSink::Bind). Every field is
// optional: a connector used outside the engine gets the defaults.
struct ConnectorContext {
  // Set when the running job fails and is being cancelled. Calls that wait on something outside
  // the process (a broker) poll it and return kCancelled within about 100 ms once it is set, so a
  // failed job does not sit out their deadlines. Null: never cancelled. Owned by the engine; it
  // outlives the connector.
  const std::atomic<bool>* cancel = nullptr;
  // A directory private to this connector's operator that survives process restarts of the job:
  // <state dir>/connectors/<operator>. Empty without --state-dir. Created by the connector when it
  // needs it; what a connector keeps there must be safe for every subtask to read and write.
  std::string durable_dir;
  // The job's --kafka-properties (connectors/kafka_properties.h): settings for every Kafka client
  // of the job, under the connector's own. Null: none. Owned by the engine.
  const std::map<std::string, std::string>* kafka_properties = nullptr;
  // The operator subtask's metrics (labels operator, subtask), for what only the connector knows
  // (Kafka consumer lag). Without a registry its metrics are discarded.
  MetricGroup metrics;
  // The job's id, the operator's name and, for one instance of a job scaled out through Kafka
  // (--instance, docs/deploy.md), the instance's name; "" otherwise. A connector that cannot
  // share its input or output with other instances refuses to open when `instance` is set.
  std::string job_id;
  std::string operator_name;
  std::string instance;
  // What the connector may keep for its successor in the next run of the job, when the engine
  // restarts at once (common/run_handover.h). Null: nothing is kept. Owned by the engine.
  RunHandover* handover = nullptr;

  bool cancelled() const { return cancel != nullptr && cancel->load(std::memory_order_relaxed); }
};

class RawSource {
 public:
  virtual ~RawSource() = default;
  // Called once before Open by the engine. Default: ignored.
  virtual void Bind(const ConnectorContext& context) {}
  // Binds the instance to subtask `subtask` of `parallelism` and opens its splits (files,
  // partitions). Splits are assigned by the job, never by consumer-group rebalancing.
  [[nodiscard]] virtual Status Open(uint32_t subtask, uint32_t parallelism) = 0;
  // Appends up to `max_records` records to `*out`; waits at most `timeout_ms` when none is ready.
  [[nodiscard]] virtual Result<PollResult> Poll(std::vector<RawRecord>* out, size_t max_records,
                                                int timeout_ms) = 0;
  // Where a record came from, for error messages: "file clicks.jsonl line 17",
  // "kafka topic clicks partition 3 offset 1234".
  virtual std::string Locate(const RawRecord& record) const = 0;
  // The read position after the last record returned by Poll (per-partition offsets, file byte
  // offset), for checkpoints; RestorePosition seeks back to a snapshotted position.
  [[nodiscard]] virtual Status SnapshotPosition(BinaryWriter* out) const = 0;
  [[nodiscard]] virtual Status RestorePosition(BinaryReader* in) = 0;
  // Checkpoint `checkpoint_id` is taken here: called right before its SnapshotPosition.
  // Default: nothing.
  [[nodiscard]] virtual Status OnCheckpoint(int64_t checkpoint_id) { return Status::Ok(); }
  // Checkpoint `checkpoint_id` completed and its exactly-once output committed (ids only grow;
  // some may be skipped). Called between two polls. Default: nothing.
  [[nodiscard]] virtual Status OnCheckpointComplete(int64_t checkpoint_id) { return Status::Ok(); }
  // Restoring a checkpoint taken at `old_parallelism` (!= the parallelism given to Open): `old`
  // holds every old subtask's position; the source takes the splits it owns now, so that across
  // all new subtasks every split's position is restored exactly once. After Open, before Poll.
  // Default: InvalidArgument (this source cannot be rescaled).
  [[nodiscard]] virtual Status RestoreRescaled(const std::vector<OldSourcePosition>& old,
                                               uint32_t old_parallelism) {
    return Status::InvalidArgument("this source cannot restore positions taken at parallelism " +
                                   std::to_string(old_parallelism) + " into another parallelism");
  }
  // True while some split this instance reads has neither delivered a record nor reported that
  // it has none left (a Kafka partition not fetched since Open or since it was added). Such a
  // split may hold records older than the others': the engine emits no event-time watermark
  // until it is heard from (or, with an idle timeout, until that passes). Default: false.
  virtual bool SplitsPending() const { return false; }
  // The splits this subtask reads now and how many its input has (Kafka: the topic's partitions),
  // for writers of repartition topics (shuffle/split_times.h); nullopt when not known (yet) or
  // the source has no such splits. Default: nullopt.
  virtual std::optional<std::pair<uint32_t, std::vector<int32_t>>> OwnedSplits() const {
    return std::nullopt;
  }
  [[nodiscard]] virtual Status Close() = 0;
};

class RawSink {
 public:
  virtual ~RawSink() = default;
  // Called once before Open by the engine. Default: ignored.
  virtual void Bind(const ConnectorContext& context) {}
  [[nodiscard]] virtual Status Open(uint32_t subtask, uint32_t parallelism) = 0;
  // Buffers or writes one encoded record. May block for backpressure.
  [[nodiscard]] virtual Status Write(std::string_view key, std::string_view payload,
                                     TimestampMs timestamp) = 0;
  // The same with headers. Only Kafka has them; the checker allows header metadata on kafka
  // sinks only, so another sink that gets headers is a bug, not something to drop silently.
  [[nodiscard]] virtual Status WriteWithHeaders(std::string_view key, std::string_view payload,
                                                TimestampMs timestamp,
                                                std::span<const OutHeader> headers) {
    if (!headers.empty()) return Status::Internal("this sink cannot write message headers");
    return Write(key, payload, timestamp);
  }
  // Makes everything written so far durable/visible (at-least-once flush at a checkpoint).
  [[nodiscard]] virtual Status Flush() = 0;
  [[nodiscard]] virtual Status Close() = 0;
};

}  // namespace flow::rt
