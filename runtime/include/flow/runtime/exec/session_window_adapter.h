#pragma once
// Wraps SessionWindowOperator (operators/session_window_operator.h) into the engine's
// OneInputOperator: `key by k | window session G [lateness L] [processing time] | aggregate ...`.
// config.size is the gap. Like WindowAggregateAdapter (window_aggregate_adapter.h): the upstream
// edge must be KeyBy with KeyHashOf<Key>(key_of), the accumulator sees Stamped<In>, and
// processing time fires due sessions after every batch and watermark, and all at end of input.
//
// Errors: Open fails with kInvalidArgument for an invalid gap or lateness (naming the operator).
// Threading: one subtask thread.

#include <optional>
#include <utility>

#include <fmt/format.h>

#include "flow/runtime/engine/operator.h"
#include "flow/runtime/exec/collector_output.h"
#include "flow/runtime/exec/window_aggregate_adapter.h"
#include "flow/runtime/operators/session_window_operator.h"

namespace flow::exec {

template <typename Key, typename In, typename Acc, typename Out>
class SessionWindowAdapter final : public rt::OneInputOperator<In, Out> {
 public:
  using Op = rt::SessionWindowOperator<Key, Stamped<In>, Acc, Out>;
  using KeyFn = Key (*)(const In&);

  SessionWindowAdapter(WindowConfig config, KeyFn key_of, typename Op::MakeOutputFn make_output)
      : config_(config), key_of_(key_of), make_output_(std::move(make_output)) {}

  rt::Status Open(rt::OperatorContext& ctx) override {
    auto windows = rt::SessionWindows::WithGap(config_.size);
    if (!windows.ok()) {
      return rt::Status::InvalidArgument(fmt::format("{}: {}", ctx.name, windows.status().message()));
    }
    auto options = WindowOptions(config_, ctx);
    if (!options.ok()) return options.status();
    KeyFn key_of = key_of_;
    op_.emplace(*windows, [key_of](const Stamped<In>& s) { return key_of(*s.record); }, make_output_, &collector_,
                std::move(*options));
    return rt::Status::Ok();
  }
  rt::Status ProcessBatch(const rt::Batch<In>& batch, rt::Output<Out>& out) override {
    collector_.Bind(&out);
    FeedStamped(*op_, batch);
    if (config_.processing_time) op_->OnProcessingTime();
    return rt::Status::Ok();
  }
  rt::Status OnWatermark(rt::TimestampMs wm, rt::Output<Out>& out) override {
    collector_.Bind(&out);
    AdvanceWindows(*op_, wm, config_.processing_time);
    return rt::Status::Ok();
  }
  rt::Status SnapshotState(rt::BinaryWriter* out) override {
    op_->SnapshotState(out);
    return rt::Status::Ok();
  }
  rt::Status RestoreState(rt::BinaryReader* in) override { return op_->RestoreState(in); }

 private:
  WindowConfig config_;
  KeyFn key_of_;
  typename Op::MakeOutputFn make_output_;
  OutputCollector<Out> collector_;
  std::optional<Op> op_;
};

}  // namespace flow::exec
