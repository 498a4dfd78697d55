#pragma once
// Collector<T>: where an operator emits its output records, each with an event timestamp. The
// engine supplies an implementation that appends to the outgoing batch; tests use VectorCollector.
// Threading: called on the operator's subtask thread only.

#include <utility>
#include <vector>

#include "flow/runtime/common/time.h"

namespace flow::rt {

template <typename T>
class Collector {
 public:
  virtual ~Collector() = default;
  virtual void Collect(T record, TimestampMs timestamp) = 0;
};

template <typename T>
class VectorCollector : public Collector<T> {
 public:
  void Collect(T record, TimestampMs timestamp) override {
    records.emplace_back(std::move(record), timestamp);
  }
  std::vector<std::pair<T, TimestampMs>> records;
};

}  // namespace flow::rt
