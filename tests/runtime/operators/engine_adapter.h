#pragma once
// A test harness, not part of the runtime: generated jobs run these operators through the exec
// adapters (exec/window_aggregate_adapter.h, exec/join_adapter.h, ...); the tests of this folder
// drive them as engine operators through this simpler wrapper.
//
// Wraps the stateful operators of this folder as engine operators (engine/operator.h):
// KeyedOneInputOperator for WindowAggregateOperator, SessionWindowOperator and
// RunningAggregateOperator; KeyedTwoInputOperator for IntervalJoinOperator and WindowJoinOperator
// (input 1 = left, input 2 = right).
//
// Contract: the wrapped operator is built in Open, for the subtask's key groups, by the factory
// given to the constructor, so RestoreState must come after Open (Internal error otherwise), as
// must SnapshotState. Late records dropped are reported as the counter
// flow_late_records_dropped_total. Processing-time windows need OnProcessingTime() calls, which
// the engine interface has no hook for yet.
// Threading: as every engine operator, one subtask thread.

#include <functional>
#include <memory>
#include <utility>

#include "flow/runtime/engine/operator.h"
#include "flow/runtime/operators/collector.h"
#include "flow/runtime/operators/keyed_operator_core.h"

namespace flow::rt {

// Forwards a stateful operator's output into the engine's Output of the current call.
template <typename Out>
class OutputCollector final : public Collector<Out> {
 public:
  void Bind(Output<Out>* out) { out_ = out; }
  void Collect(Out record, TimestampMs timestamp) override {
    assert(out_ != nullptr && "operator emitted outside an engine call");
    out_->Emit(std::move(record), timestamp);
  }

 private:
  Output<Out>* out_ = nullptr;
};

namespace detail {

// What both adapters share: building the operator in Open, snapshots, the late-records counter.
template <typename Op, typename Out>
class KeyedAdapterCore {
 public:
  using Factory = std::function<std::unique_ptr<Op>(Collector<Out>*, KeyedOperatorOptions)>;

  KeyedAdapterCore(Factory make, KeyedOperatorOptions options)
      : make_(std::move(make)), options_(std::move(options)) {}

  Status Open(OperatorContext& ctx) {
    KeyedOperatorOptions o = options_;
    o.key_groups = KeyGroupSpan{ctx.key_groups.first, ctx.key_groups.end};
    o.max_parallelism = ctx.max_parallelism;
    Status valid = o.Validate();
    if (!valid.ok()) {
      return Status(valid.code(), "operator '" + ctx.name + "': " + valid.message());
    }
    op_ = make_(&collector_, std::move(o));
    late_ = ctx.metrics.Counter("flow_late_records_dropped_total",
                                "records dropped because their windows had fired");
    return Status::Ok();
  }
  Status Snapshot(BinaryWriter* out) {
    if (!op_) return Status::Internal("SnapshotState called before Open");
    op_->SnapshotState(out);
    return Status::Ok();
  }
  Status Restore(BinaryReader* in) {
    if (!op_) return Status::Internal("RestoreState called before Open");
    return op_->RestoreState(in);
  }
  // Binds the output for one engine call; reports new late records when the call is done.
  Op& Begin(Output<Out>& out) {
    assert(op_ && "engine called an operator before Open");
    collector_.Bind(&out);
    return *op_;
  }
  void End() {
    uint64_t late = op_->counters().late_records_dropped;
    if (late_ != nullptr && late > late_reported_) {
      late_->Add(static_cast<int64_t>(late - late_reported_));
    }
    late_reported_ = late;
  }
  Op* op() { return op_.get(); }

 private:
  Factory make_;
  KeyedOperatorOptions options_;
  std::unique_ptr<Op> op_;
  OutputCollector<Out> collector_;
  Metric* late_ = nullptr;
  uint64_t late_reported_ = 0;
};

}  // namespace detail

template <typename Op, typename In, typename Out>
class KeyedOneInputOperator final : public OneInputOperator<In, Out> {
 public:
  using Factory = typename detail::KeyedAdapterCore<Op, Out>::Factory;
  // `options` supplies lateness, time domain and clock; key groups come from the context.
  explicit KeyedOneInputOperator(Factory make, KeyedOperatorOptions options = {})
      : core_(std::move(make), std::move(options)) {}

  Status Open(OperatorContext& ctx) override { return core_.Open(ctx); }
  Status ProcessBatch(const Batch<In>& batch, Output<Out>& out) override {
    Op& op = core_.Begin(out);
    const size_t n = batch.size();
    for (size_t i = 0; i < n; ++i) op.ProcessElement(batch.records[i], batch.timestamps[i]);
    core_.End();
    return Status::Ok();
  }
  Status OnWatermark(TimestampMs wm, Output<Out>& out) override {
    core_.Begin(out).OnWatermark(wm);
    core_.End();
    return Status::Ok();
  }
  Status SnapshotState(BinaryWriter* out) override { return core_.Snapshot(out); }
  Status RestoreState(BinaryReader* in) override { return core_.Restore(in); }
  // The wrapped operator (nullptr before Open), for tests and processing-time drivers.
  Op* op() { return core_.op(); }

 private:
  detail::KeyedAdapterCore<Op, Out> core_;
};

template <typename Op, typename L, typename R, typename Out>
class KeyedTwoInputOperator final : public TwoInputOperator<L, R, Out> {
 public:
  using Factory = typename detail::KeyedAdapterCore<Op, Out>::Factory;
  explicit KeyedTwoInputOperator(Factory make, KeyedOperatorOptions options = {})
      : core_(std::move(make), std::move(options)) {}

  Status Open(OperatorContext& ctx) override { return core_.Open(ctx); }
  Status ProcessBatch1(const Batch<L>& batch, Output<Out>& out) override {
    Op& op = core_.Begin(out);
    for (size_t i = 0; i < batch.size(); ++i) op.ProcessLeft(batch.records[i], batch.timestamps[i]);
    core_.End();
    return Status::Ok();
  }
  Status ProcessBatch2(const Batch<R>& batch, Output<Out>& out) override {
    Op& op = core_.Begin(out);
    for (size_t i = 0; i < batch.size(); ++i)
      op.ProcessRight(batch.records[i], batch.timestamps[i]);
    core_.End();
    return Status::Ok();
  }
  Status OnWatermark(TimestampMs wm, Output<Out>& out) override {
    core_.Begin(out).OnWatermark(wm);
    core_.End();
    return Status::Ok();
  }
  Status SnapshotState(BinaryWriter* out) override { return core_.Snapshot(out); }
  Status RestoreState(BinaryReader* in) override { return core_.Restore(in); }
  Op* op() { return core_.op(); }

 private:
  detail::KeyedAdapterCore<Op, Out> core_;
};

}  // namespace flow::rt
