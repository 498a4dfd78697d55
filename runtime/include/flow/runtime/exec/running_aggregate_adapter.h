#pragma once
// Wraps RunningAggregateOperator (operators/running_aggregate_operator.h) into the engine's
// OneInputOperator: unwindowed `key by k | aggregate ...`, one updated result per input record.
// The upstream edge must be KeyBy with KeyHashOf<Key>(key_of) (window_aggregate_adapter.h).
// The accumulator sees Stamped<In> (record + timestamp), so first/last can order by event time.
//
// Threading: one subtask thread.

#include <optional>
#include <span>
#include <utility>

#include <fmt/format.h>

#include "flow/runtime/engine/operator.h"
#include "flow/runtime/exec/collector_output.h"
#include "flow/runtime/exec/window_aggregate_adapter.h"
#include "flow/runtime/operators/running_aggregate_operator.h"

namespace flow::exec {

template <typename Key, typename In, typename Acc, typename Out>
class RunningAggregateAdapter final : public rt::OneInputOperator<In, Out> {
 public:
  using Op = rt::RunningAggregateOperator<Key, Stamped<In>, Acc, Out>;
  using KeyFn = Key (*)(const In&);

  RunningAggregateAdapter(KeyFn key_of, typename Op::MakeOutputFn make_output)
      : key_of_(key_of), make_output_(std::move(make_output)) {}

  rt::Status Open(rt::OperatorContext& ctx) override {
    rt::KeyedOperatorOptions options;
    options.key_groups = {ctx.key_groups.first, ctx.key_groups.end};
    options.max_parallelism = ctx.max_parallelism;
    if (ctx.state_backend != nullptr) options.state_backend = *ctx.state_backend;
    rt::Status valid = options.Validate();
    if (!valid.ok())
      return rt::Status::InvalidArgument(fmt::format("{}: {}", ctx.name, valid.message()));
    KeyFn key_of = key_of_;
    op_.emplace([key_of](const Stamped<In>& s) { return key_of(*s.record); }, make_output_,
                &collector_, std::move(options));
    return rt::Status::Ok();
  }
  rt::Status ProcessBatch(const rt::Batch<In>& batch, rt::Output<Out>& out) override {
    collector_.Bind(&out);
    FeedStamped(*op_, batch);
    return rt::Status::Ok();
  }
  rt::Status OnWatermark(rt::TimestampMs wm, rt::Output<Out>& out) override {
    collector_.Bind(&out);
    op_->OnWatermark(wm);
    return rt::Status::Ok();
  }
  rt::Status SnapshotState(rt::BinaryWriter* out) override {
    op_->SnapshotState(out);
    return rt::Status::Ok();
  }
  rt::Status RestoreState(rt::BinaryReader* in) override { return op_->RestoreState(in); }

 private:
  KeyFn key_of_;
  typename Op::MakeOutputFn make_output_;
  OutputCollector<Out> collector_;
  std::optional<Op> op_;
};

}  // namespace flow::exec
