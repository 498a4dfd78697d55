#pragma once
// Wraps the engine-agnostic WindowAggregateOperator (operators/window_aggregate_operator.h) into
// the engine's OneInputOperator. The key groups of the subtask come from the OperatorContext at
// Open, so the upstream edge must be KeyBy with the same key hash as KeyHash<Key>{}(key_of(r))
// (see KeyHashOf below). Snapshot/restore delegate to the operator.
//
// Errors: Open fails with kInvalidArgument for invalid window sizes or lateness (naming the
// operator). Threading: one subtask thread.

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "flow/runtime/engine/operator.h"
#include "flow/runtime/exec/collector_output.h"
#include "flow/runtime/operators/window_aggregate_operator.h"
#include "flow/runtime/state/key_hash.h"

namespace flow::exec {

struct WindowConfig {
  rt::DurationMs size = 0;
  rt::DurationMs slide = 0;  // == size for tumbling windows
  rt::DurationMs allowed_lateness = 0;
};

// The key hash the engine's KeyBy must use so records reach the subtask owning their key group.
template <typename Key, typename KeyFn>
auto KeyHashOf(KeyFn key_of) {
  return [key_of](const auto& record) -> uint64_t { return rt::KeyHash<Key>{}(key_of(record)); };
}

template <typename Key, typename In, typename Acc, typename Out>
class WindowAggregateAdapter final : public rt::OneInputOperator<In, Out> {
 public:
  using Op = rt::WindowAggregateOperator<Key, In, Acc, Out>;

  WindowAggregateAdapter(WindowConfig config, typename Op::KeyFn key_of, typename Op::MakeOutputFn make_output)
      : config_(config), key_of_(std::move(key_of)), make_output_(std::move(make_output)) {}

  rt::Status Open(rt::OperatorContext& ctx) override {
    auto windows = config_.slide == config_.size ? rt::SlidingWindows::Tumbling(config_.size)
                                                 : rt::SlidingWindows::Sliding(config_.size, config_.slide);
    if (!windows.ok()) {
      return rt::Status::InvalidArgument(fmt::format("{}: {}", ctx.name, windows.status().message()));
    }
    rt::KeyedOperatorOptions options;
    options.key_groups = {ctx.key_groups.first, ctx.key_groups.end};
    options.max_parallelism = ctx.max_parallelism;
    options.allowed_lateness = config_.allowed_lateness;
    rt::Status valid = options.Validate();
    if (!valid.ok()) return rt::Status::InvalidArgument(fmt::format("{}: {}", ctx.name, valid.message()));
    op_.emplace(*windows, key_of_, make_output_, &collector_, std::move(options));
    return rt::Status::Ok();
  }
  rt::Status ProcessBatch(const rt::Batch<In>& batch, rt::Output<Out>& out) override {
    collector_.Bind(&out);
    op_->ProcessBatch(std::span<const In>(batch.records.data(), batch.size()),
                      std::span<const rt::TimestampMs>(batch.timestamps.data(), batch.size()));
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
  WindowConfig config_;
  typename Op::KeyFn key_of_;
  typename Op::MakeOutputFn make_output_;
  OutputCollector<Out> collector_;
  std::optional<Op> op_;
};

}  // namespace flow::exec
