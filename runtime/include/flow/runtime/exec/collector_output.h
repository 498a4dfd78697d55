#pragma once
// OutputCollector: lets an engine-agnostic operator (operators/*.h, which emit through
// Collector<T>) write into the engine's Output<T> of the current call. The adapter points it at
// the call's Output before every call into the wrapped operator.
//
// Threading: one subtask thread.

#include <cassert>
#include <utility>

#include "flow/runtime/engine/operator.h"
#include "flow/runtime/operators/collector.h"

namespace flow::exec {

template <typename T>
class OutputCollector final : public rt::Collector<T> {
 public:
  void Bind(rt::Output<T>* out) { out_ = out; }
  void Collect(T record, rt::TimestampMs timestamp) override {
    assert(out_ != nullptr && "OutputCollector used outside an operator call");
    out_->Emit(std::move(record), timestamp);
  }

 private:
  rt::Output<T>* out_ = nullptr;
};

}  // namespace flow::exec
