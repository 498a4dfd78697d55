#pragma once
// Stream elements. Records travel in batches (records + per-record event timestamps); control
// elements (watermarks, idleness, checkpoint barriers, end of input) travel in order between them.

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "flow/runtime/common/time.h"

namespace flow::rt {

// Timestamp of a record that has none (no event time assigned yet).
inline constexpr TimestampMs kNoEventTime = kMinWatermark;

// A batch of records of type T; timestamps[i] is the event time of records[i].
// Not thread-safe; a batch is owned by one thread at a time and handed over through channels.
template <typename T>
struct Batch {
  std::vector<T> records;
  std::vector<TimestampMs> timestamps;

  size_t size() const { return records.size(); }
  bool empty() const { return records.empty(); }
  void Add(const T& record, TimestampMs ts) {
    records.push_back(record);
    timestamps.push_back(ts);
  }
  void Add(T&& record, TimestampMs ts) {
    records.push_back(std::move(record));
    timestamps.push_back(ts);
  }
  // Keeps the allocated capacity so the buffer can be reused.
  void Clear() {
    records.clear();
    timestamps.clear();
  }
  void Reserve(size_t n) {
    records.reserve(n);
    timestamps.reserve(n);
  }
  void Append(const Batch& other) {
    records.insert(records.end(), other.records.begin(), other.records.end());
    timestamps.insert(timestamps.end(), other.timestamps.begin(), other.timestamps.end());
  }
};

enum class ElementKind : uint8_t {
  kBatch,
  kWatermark,         // value = watermark (ms)
  kIdle,              // the sending subtask has no data for now; exclude it from watermarks
  kActive,            // the sending subtask has data again
  kBarrier,           // value = checkpoint id
  kCancelCheckpoint,  // value = checkpoint id: an upstream task abandoned its alignment
  kEnd,               // value = 1: input exhausted (drained); 0: stopped on request
};

const char* ElementKindName(ElementKind kind);

// One element in a channel. Control elements carry an empty batch (no allocation).
template <typename T>
struct Element {
  ElementKind kind = ElementKind::kBatch;
  int64_t value = 0;
  Batch<T> batch;
};

}  // namespace flow::rt
