#pragma once
// Wraps the join operators (operators/window_join_operator.h, interval_join_operator.h) into the
// engine's TwoInputOperator: input 1 is the left stream, input 2 the right. Both upstream edges
// must be KeyBy with KeyHashOf<Key> of their side's key function, so equal keys of both sides
// reach the same subtask. State is released by the watermark (the minimum of both inputs'), as
// the operators describe; at end of input none remains. Late records the operators drop are
// counted in the subtask's flow_late_records_dropped_total.
//
// Errors: Open fails with kInvalidArgument for an invalid window, bound or lateness (naming the
// operator). Threading: one subtask thread.

#include <optional>
#include <utility>

#include <fmt/format.h>

#include "flow/runtime/engine/operator.h"
#include "flow/runtime/exec/collector_output.h"
#include "flow/runtime/exec/late_counter.h"
#include "flow/runtime/exec/window_aggregate_adapter.h"
#include "flow/runtime/operators/interval_join_operator.h"
#include "flow/runtime/operators/window_join_operator.h"

namespace flow::exec {

namespace join_detail {

// What both join adapters share: feeding each side, watermarks, snapshots.
template <typename Op, typename L, typename R, typename Out>
class JoinAdapterBase : public rt::TwoInputOperator<L, R, Out> {
 public:
  rt::Status ProcessBatch1(const rt::Batch<L>& batch, rt::Output<Out>& out) override {
    collector_.Bind(&out);
    for (size_t i = 0; i < batch.size(); ++i)
      op_->ProcessLeft(batch.records[i], batch.timestamps[i]);
    late_.Report(op_->counters().late_records_dropped);
    return rt::Status::Ok();
  }
  rt::Status ProcessBatch2(const rt::Batch<R>& batch, rt::Output<Out>& out) override {
    collector_.Bind(&out);
    for (size_t i = 0; i < batch.size(); ++i)
      op_->ProcessRight(batch.records[i], batch.timestamps[i]);
    late_.Report(op_->counters().late_records_dropped);
    return rt::Status::Ok();
  }
  rt::Status OnWatermark(rt::TimestampMs wm, rt::Output<Out>& out) override {
    collector_.Bind(&out);
    op_->OnWatermark(wm);
    return rt::Status::Ok();
  }
  rt::Status SnapshotState(rt::BinaryWriter* out) override {
    if (!op_) return rt::Status::Internal("SnapshotState called before Open");
    op_->SnapshotState(out);
    return rt::Status::Ok();
  }
  rt::Status RestoreState(rt::BinaryReader* in) override {
    if (!op_) return rt::Status::Internal("RestoreState called before Open");
    return op_->RestoreState(in);
  }

 protected:
  OutputCollector<Out> collector_;
  std::optional<Op> op_;
  LateCounter late_;
};

}  // namespace join_detail

// `a | join b on ... window tumbling|sliding S [every P] [lateness D]`.
template <typename Key, typename L, typename R, typename Out>
class WindowJoinAdapter final
    : public join_detail::JoinAdapterBase<rt::WindowJoinOperator<Key, L, R, Out>, L, R, Out> {
 public:
  using Op = rt::WindowJoinOperator<Key, L, R, Out>;
  using LeftKeyFn = Key (*)(const L&);
  using RightKeyFn = Key (*)(const R&);
  using JoinFn = Out (*)(const Key&, rt::TimestampMs, rt::TimestampMs, const L&, const R&);

  WindowJoinAdapter(WindowConfig config, LeftKeyFn left_key, RightKeyFn right_key, JoinFn join)
      : config_(config), left_key_(left_key), right_key_(right_key), join_(join) {}

  rt::Status Open(rt::OperatorContext& ctx) override {
    auto windows = SlidingWindowsOf(config_);
    if (!windows.ok()) {
      return rt::Status::InvalidArgument(
          fmt::format("{}: {}", ctx.name, windows.status().message()));
    }
    WindowConfig event_time = config_;
    event_time.processing_time = false;  // window joins are event-time only
    auto options = WindowOptions(event_time, ctx);
    if (!options.ok()) return options.status();
    this->op_.emplace(*windows, left_key_, right_key_, join_, &this->collector_,
                      std::move(*options));
    this->late_.Open(ctx);
    return rt::Status::Ok();
  }

 private:
  WindowConfig config_;
  LeftKeyFn left_key_;
  RightKeyFn right_key_;
  JoinFn join_;
};

// `a | join b on ... within D`: pairs with |ta - tb| <= D.
template <typename Key, typename L, typename R, typename Out>
class IntervalJoinAdapter final
    : public join_detail::JoinAdapterBase<rt::IntervalJoinOperator<Key, L, R, Out>, L, R, Out> {
 public:
  using Op = rt::IntervalJoinOperator<Key, L, R, Out>;
  using LeftKeyFn = Key (*)(const L&);
  using RightKeyFn = Key (*)(const R&);
  using JoinFn = Out (*)(const Key&, const L&, rt::TimestampMs, const R&, rt::TimestampMs);

  IntervalJoinAdapter(rt::DurationMs bound, LeftKeyFn left_key, RightKeyFn right_key, JoinFn join)
      : bound_(bound), left_key_(left_key), right_key_(right_key), join_(join) {}

  rt::Status Open(rt::OperatorContext& ctx) override {
    rt::Status bound = Op::ValidateBound(bound_);
    if (!bound.ok())
      return rt::Status::InvalidArgument(fmt::format("{}: {}", ctx.name, bound.message()));
    auto options = WindowOptions(WindowConfig{}, ctx);
    if (!options.ok()) return options.status();
    this->op_.emplace(bound_, left_key_, right_key_, join_, &this->collector_, std::move(*options));
    this->late_.Open(ctx);
    return rt::Status::Ok();
  }

 private:
  rt::DurationMs bound_;
  LeftKeyFn left_key_;
  RightKeyFn right_key_;
  JoinFn join_;
};

}  // namespace flow::exec
