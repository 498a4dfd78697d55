#pragma once
// StatusChainOperator: a fused run of stateless steps (where/select/explode) generated as ONE
// function `Status fn(const In&, TimestampMs, Output<Out>&)`. Unlike engine/stateless.h's
// ChainOperator the function may fail: an expression error (integer division by zero) recorded
// through ops::Fail ends the job with a message naming the .flow line.
//
// Threading: one instance per subtask, called on its thread only.

#include <memory>
#include <string>
#include <utility>

#include "flow/runtime/engine/job.h"
#include "flow/runtime/engine/operator.h"
#include "flow/runtime/exec/ops.h"

namespace flow::exec {

template <typename In, typename Out, typename Fn>
class StatusChainOperator final : public rt::OneInputOperator<In, Out> {
 public:
  explicit StatusChainOperator(Fn fn) : fn_(std::move(fn)) {}
  rt::Status Open(rt::OperatorContext&) override { return ops::TakeError(); }
  bool stateless() const override { return true; }
  rt::Status ProcessBatch(const rt::Batch<In>& batch, rt::Output<Out>& out) override {
    const size_t n = batch.size();
    for (size_t i = 0; i < n; ++i) {
      FLOW_RETURN_IF_ERROR(fn_(batch.records[i], batch.timestamps[i], out));
      if (ops::HasError()) [[unlikely]]
        return ops::TakeError();
    }
    return rt::Status::Ok();
  }

 private:
  Fn fn_;
};

// stream | chain: adds the operator to the job graph.
template <typename Out, typename In, typename Fn>
rt::Stream<Out> AddChain(const rt::Stream<In>& in, std::string name, Fn fn,
                         uint32_t parallelism = 0) {
  return in.template Then<Out>(
      std::move(name), [fn] { return std::make_unique<StatusChainOperator<In, Out, Fn>>(fn); },
      parallelism);
}

}  // namespace flow::exec
