#pragma once
// KeyedOperatorCore: what every keyed operator shares: its options, its KeyedStateBackend, the
// current watermark, record-time validation, counters, and the operator snapshot framing.
//
// Operator snapshot format: u32 magic "FLOP", u32 version (1), string operator signature,
// i64 watermark, then the keyed state backend snapshot (see state/keyed_state_backend.h).
// Restore may be called several times (one per old subtask when rescaling); it keeps the owned key
// groups of each and takes the smallest watermark, so no restored subtask sees time go backwards
// for state it did not have. Counters are metrics and are not snapshotted.
//
// Threading: one subtask thread.

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "flow/runtime/state/keyed_state_backend.h"

namespace flow::rt {

enum class TimeDomain {
  kEventTime,       // Default: record timestamps and watermarks
  kProcessingTime,  // the clock stamps records on arrival; OnProcessingTime() fires windows
};

struct KeyedOperatorOptions {
  // Default: all groups (parallelism 1).
  KeyGroupSpan key_groups = KeyGroupSpan::All();
  uint32_t max_parallelism = kDefaultMaxParallelism;
  // Windows fire when the watermark reaches end - 1 + allowed_lateness. Default: 0.
  DurationMs allowed_lateness = 0;
  TimeDomain time_domain = TimeDomain::kEventTime;
  // Default: SystemClockMs. Processing-time windows and processing-time TTL read it.
  ProcessingClock clock;
  // How the operator keeps its state. Default: StateBackendOptionsFromEnvironment() (the engine's
  // adapters pass the job's, OperatorContext::state_backend).
  std::optional<StateBackendOptions> state_backend;

  // InvalidArgument on a negative or oversized lateness or a range beyond max_parallelism.
  [[nodiscard]] Status Validate() const;
};

struct OperatorCounters {
  uint64_t late_records_dropped = 0;  // arrived after every window they belong to fired
  uint64_t invalid_timestamps = 0;    // beyond +-kMaxEventTime
};

// "window_aggregate(size=10,slide=5,lateness=0)": the kind plus the parameters the snapshot
// depends on. A snapshot restores only into an operator with the same signature (timers encode
// window ends and lateness), so changing them is an InvalidArgument at restore, not silent damage.
std::string OperatorSignature(std::string_view kind,
                              std::initializer_list<std::pair<std::string_view, int64_t>> params);

class KeyedOperatorCore {
 public:
  KeyedOperatorCore(std::string kind, KeyedOperatorOptions options);

  KeyedStateBackend& backend() { return backend_; }
  const KeyedStateBackend& backend() const { return backend_; }
  const KeyedOperatorOptions& options() const { return options_; }
  TimestampMs watermark() const { return watermark_; }
  OperatorCounters& counters() { return counters_; }
  const OperatorCounters& counters() const { return counters_; }

  // The time a record counts at: its timestamp, or the clock in processing-time mode. nullopt
  // (and counted) when out of range.
  std::optional<TimestampMs> RecordTime(TimestampMs timestamp);
  // The owned key group of `key`. A key outside the range means the engine routed it wrongly (our
  // bug): asserted, and in release builds the record is dropped.
  template <typename K>
  std::optional<uint32_t> OwnedKeyGroup(const K& key) const {
    uint32_t kg = backend_.KeyGroupFor(key);
    assert(backend_.Owns(kg) && "record routed to a subtask that does not own its key group");
    if (!backend_.Owns(kg)) return std::nullopt;
    return kg;
  }
  // The watermark at which a window ending at `end` fires.
  TimestampMs FireTime(TimestampMs end) const {
    return SaturatingAdd(end - 1, options_.allowed_lateness);
  }
  bool HasFired(TimestampMs end) const { return FireTime(end) <= watermark_; }
  // Moves the watermark forward; false (and nothing changes) when `watermark` is not newer.
  bool AdvanceWatermark(TimestampMs watermark);
  // The "watermark" of processing time: the clock now.
  TimestampMs ProcessingTimeNow() const { return options_.clock(); }

  void Snapshot(BinaryWriter* out) const;
  [[nodiscard]] Status Restore(BinaryReader* in);

 private:
  std::string kind_;
  KeyedOperatorOptions options_;
  KeyedStateBackend backend_;
  TimestampMs watermark_ = kMinWatermark;
  bool restored_ = false;
  OperatorCounters counters_;
};

}  // namespace flow::rt
