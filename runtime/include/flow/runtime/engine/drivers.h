#pragma once
// Engine-internal: drivers run one operator (or sink) subtask inside a task. They count records,
// call the operator, flush its Output downstream, and forward control elements after the operator
// has seen them. Errors and exceptions from operator code become a Status naming the operator and
// subtask. Used by one task thread.

#include <exception>
#include <memory>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "flow/runtime/checkpoint/fault_injection.h"
#include "flow/runtime/engine/operator.h"
#include "flow/runtime/engine/sink.h"

namespace flow::rt {

namespace engine_detail {
// Runs operator code: adds "operator 'x' subtask i" to its errors and turns exceptions into errors.
template <typename F>
Status CallUser(const OperatorContext& ctx, F&& f) {
  try {
    Status s = f();
    if (s.ok() || s.code() == StatusCode::kCancelled) return s;
    return Status(s.code(),
                  fmt::format("operator '{}' subtask {}: {}", ctx.name, ctx.subtask, s.message()));
  } catch (const std::exception& e) {
    return Status::Internal(
        fmt::format("operator '{}' subtask {}: exception: {}", ctx.name, ctx.subtask, e.what()));
  } catch (...) {
    return Status::Internal(
        fmt::format("operator '{}' subtask {}: unknown exception", ctx.name, ctx.subtask));
  }
}
}  // namespace engine_detail

template <typename In, typename Out>
class OneInputDriver final : public BatchConsumer<In> {
 public:
  OneInputDriver(std::unique_ptr<OneInputOperator<In, Out>> op, OperatorContext ctx,
                 BatchConsumer<Out>* next, size_t batch_size)
      : op_(std::move(op)), ctx_(std::move(ctx)), next_(next), batch_size_(batch_size) {}

  Status Open() override {
    records_in_ = ctx_.metrics.Counter(kMetricRecordsIn, kHelpRecordsIn);
    watermark_ = ctx_.metrics.Gauge(kMetricWatermark, kHelpWatermark);
    watermark_->Set(kMinWatermark);
    out_ =
        Output<Out>(next_, batch_size_, ctx_.metrics.Counter(kMetricRecordsOut, kHelpRecordsOut));
    opened_ = true;
    return engine_detail::CallUser(ctx_, [&] { return op_->Open(ctx_); });
  }
  Status ConsumeView(const Batch<In>& batch) override {
    FLOW_RETURN_IF_ERROR(FaultPointStatus("before-batch", ctx_.name, ctx_.subtask));
    records_in_->Add(static_cast<int64_t>(batch.size()));
    FLOW_RETURN_IF_ERROR(
        engine_detail::CallUser(ctx_, [&] { return op_->ProcessBatch(batch, out_); }));
    return FlushOut();
  }
  Status OnProcessingTime(TimestampMs now) override {
    FLOW_RETURN_IF_ERROR(
        engine_detail::CallUser(ctx_, [&] { return op_->OnProcessingTime(now, out_); }));
    return FlushOut();
  }
  Status OnWatermark(TimestampMs wm) override {
    watermark_->Set(wm);
    FLOW_RETURN_IF_ERROR(engine_detail::CallUser(ctx_, [&] { return op_->OnWatermark(wm, out_); }));
    FLOW_RETURN_IF_ERROR(FlushOut());
    return next_ ? next_->OnWatermark(wm) : Status::Ok();
  }
  Status OnIdle(bool idle) override { return next_ ? next_->OnIdle(idle) : Status::Ok(); }
  Status OnBarrier(int64_t id) override { return next_ ? next_->OnBarrier(id) : Status::Ok(); }
  Status OnCancelCheckpoint(int64_t id) override {
    return next_ ? next_->OnCancelCheckpoint(id) : Status::Ok();
  }
  Status OnEnd(bool drained) override {
    FLOW_RETURN_IF_ERROR(engine_detail::CallUser(ctx_, [&] { return op_->Finish(out_); }));
    FLOW_RETURN_IF_ERROR(FlushOut());
    return next_ ? next_->OnEnd(drained) : Status::Ok();
  }
  const OperatorContext* operator_context() const override { return &ctx_; }
  Status SnapshotOperator(BinaryWriter* out) override {
    return engine_detail::CallUser(ctx_, [&] { return op_->SnapshotState(out); });
  }
  Status RestoreOperator(BinaryReader* in) override {
    return engine_detail::CallUser(ctx_, [&] { return op_->RestoreState(in); });
  }
  void Close() override {
    if (!opened_) return;
    opened_ = false;
    engine_detail::CallUser(ctx_, [&] {
      op_->Close();
      return Status::Ok();
    }).IgnoreError();  // nothing to report to
  }

 private:
  Status FlushOut() {
    FLOW_RETURN_IF_ERROR(out_.TakeStatus());
    return out_.Flush();
  }
  std::unique_ptr<OneInputOperator<In, Out>> op_;
  OperatorContext ctx_;
  BatchConsumer<Out>* next_;
  size_t batch_size_;
  Output<Out> out_;
  Metric* records_in_ = nullptr;
  Metric* watermark_ = nullptr;
  bool opened_ = false;
};

// Input 1 arrives through the driver itself, input 2 through input2(). Control elements (already
// combined over both inputs by the task) go to the driver.
template <typename In1, typename In2, typename Out>
class TwoInputDriver final : public BatchConsumer<In1> {
 public:
  TwoInputDriver(std::unique_ptr<TwoInputOperator<In1, In2, Out>> op, OperatorContext ctx,
                 BatchConsumer<Out>* next, size_t batch_size)
      : op_(std::move(op)),
        ctx_(std::move(ctx)),
        next_(next),
        batch_size_(batch_size),
        second_(this) {}

  BatchConsumer<In2>* input2() { return &second_; }

  Status Open() override {
    records_in_ = ctx_.metrics.Counter(kMetricRecordsIn, kHelpRecordsIn);
    watermark_ = ctx_.metrics.Gauge(kMetricWatermark, kHelpWatermark);
    watermark_->Set(kMinWatermark);
    out_ =
        Output<Out>(next_, batch_size_, ctx_.metrics.Counter(kMetricRecordsOut, kHelpRecordsOut));
    opened_ = true;
    return engine_detail::CallUser(ctx_, [&] { return op_->Open(ctx_); });
  }
  Status ConsumeView(const Batch<In1>& batch) override {
    FLOW_RETURN_IF_ERROR(FaultPointStatus("before-batch", ctx_.name, ctx_.subtask));
    records_in_->Add(static_cast<int64_t>(batch.size()));
    FLOW_RETURN_IF_ERROR(
        engine_detail::CallUser(ctx_, [&] { return op_->ProcessBatch1(batch, out_); }));
    return FlushOut();
  }
  Status ConsumeView2(const Batch<In2>& batch) {
    FLOW_RETURN_IF_ERROR(FaultPointStatus("before-batch", ctx_.name, ctx_.subtask));
    records_in_->Add(static_cast<int64_t>(batch.size()));
    FLOW_RETURN_IF_ERROR(
        engine_detail::CallUser(ctx_, [&] { return op_->ProcessBatch2(batch, out_); }));
    return FlushOut();
  }
  Status OnProcessingTime(TimestampMs now) override {
    FLOW_RETURN_IF_ERROR(
        engine_detail::CallUser(ctx_, [&] { return op_->OnProcessingTime(now, out_); }));
    return FlushOut();
  }
  Status OnWatermark(TimestampMs wm) override {
    watermark_->Set(wm);
    FLOW_RETURN_IF_ERROR(engine_detail::CallUser(ctx_, [&] { return op_->OnWatermark(wm, out_); }));
    FLOW_RETURN_IF_ERROR(FlushOut());
    return next_ ? next_->OnWatermark(wm) : Status::Ok();
  }
  Status OnIdle(bool idle) override { return next_ ? next_->OnIdle(idle) : Status::Ok(); }
  Status OnBarrier(int64_t id) override { return next_ ? next_->OnBarrier(id) : Status::Ok(); }
  Status OnCancelCheckpoint(int64_t id) override {
    return next_ ? next_->OnCancelCheckpoint(id) : Status::Ok();
  }
  Status OnEnd(bool drained) override {
    FLOW_RETURN_IF_ERROR(engine_detail::CallUser(ctx_, [&] { return op_->Finish(out_); }));
    FLOW_RETURN_IF_ERROR(FlushOut());
    return next_ ? next_->OnEnd(drained) : Status::Ok();
  }
  const OperatorContext* operator_context() const override { return &ctx_; }
  Status SnapshotOperator(BinaryWriter* out) override {
    return engine_detail::CallUser(ctx_, [&] { return op_->SnapshotState(out); });
  }
  Status RestoreOperator(BinaryReader* in) override {
    return engine_detail::CallUser(ctx_, [&] { return op_->RestoreState(in); });
  }
  void Close() override {
    if (!opened_) return;
    opened_ = false;
    engine_detail::CallUser(ctx_, [&] {
      op_->Close();
      return Status::Ok();
    }).IgnoreError();  // nothing to report to
  }

 private:
  class Second final : public BatchConsumer<In2> {
   public:
    explicit Second(TwoInputDriver* d) : d_(d) {}
    Status ConsumeView(const Batch<In2>& batch) override { return d_->ConsumeView2(batch); }
    // Control reaches the driver directly; the task never sends it here.
    Status OnWatermark(TimestampMs) override {
      return Status::Internal("control element on input 2 adapter");
    }
    Status OnIdle(bool) override { return Status::Internal("control element on input 2 adapter"); }
    Status OnBarrier(int64_t) override {
      return Status::Internal("control element on input 2 adapter");
    }
    Status OnEnd(bool) override { return Status::Internal("control element on input 2 adapter"); }

   private:
    TwoInputDriver* d_;
  };

  Status FlushOut() {
    FLOW_RETURN_IF_ERROR(out_.TakeStatus());
    return out_.Flush();
  }
  std::unique_ptr<TwoInputOperator<In1, In2, Out>> op_;
  OperatorContext ctx_;
  BatchConsumer<Out>* next_;
  size_t batch_size_;
  Second second_;
  Output<Out> out_;
  Metric* records_in_ = nullptr;
  Metric* watermark_ = nullptr;
  bool opened_ = false;
};

template <typename T>
class SinkDriver final : public BatchConsumer<T> {
 public:
  SinkDriver(std::unique_ptr<SinkFunction<T>> sink, OperatorContext ctx)
      : sink_(std::move(sink)), ctx_(std::move(ctx)) {}

  Status Open() override {
    records_in_ = ctx_.metrics.Counter(kMetricRecordsIn, kHelpRecordsIn);
    watermark_ = ctx_.metrics.Gauge(kMetricWatermark, kHelpWatermark);
    watermark_->Set(kMinWatermark);
    latency_ = LatencyHistogram(ctx_.metrics);
    opened_ = true;
    return engine_detail::CallUser(ctx_, [&] { return sink_->Open(ctx_); });
  }
  Status ConsumeView(const Batch<T>& batch) override {
    FLOW_RETURN_IF_ERROR(FaultPointStatus("before-batch", ctx_.name, ctx_.subtask));
    records_in_->Add(static_cast<int64_t>(batch.size()));
    ObserveLatency(latency_, batch.timestamps.data(), batch.timestamps.size());
    written_ = true;
    return engine_detail::CallUser(ctx_, [&] { return sink_->Write(batch); });
  }
  Status OnInputQuiet() override {
    if (!written_) return Status::Ok();
    written_ = false;
    return engine_detail::CallUser(ctx_, [&] { return sink_->OnInputQuiet(); });
  }
  Status OnWatermark(TimestampMs wm) override {
    watermark_->Set(wm);
    return Status::Ok();
  }
  Status OnIdle(bool) override { return Status::Ok(); }
  Status OnBarrier(int64_t) override {
    written_ = false;
    return engine_detail::CallUser(ctx_, [&] { return sink_->Flush(); });
  }
  Status OnEnd(bool) override {
    written_ = false;
    return engine_detail::CallUser(ctx_, [&] { return sink_->Flush(); });
  }
  // Sinks keep no state in checkpoints yet (they flush at barriers: at-least-once); the context
  // still identifies the subtask in the checkpoint.
  const OperatorContext* operator_context() const override { return &ctx_; }
  void Close() override {
    if (!opened_) return;
    opened_ = false;
    engine_detail::CallUser(ctx_, [&] {
      sink_->Close();
      return Status::Ok();
    }).IgnoreError();  // nothing to report to
  }

 private:
  std::unique_ptr<SinkFunction<T>> sink_;
  OperatorContext ctx_;
  Metric* records_in_ = nullptr;
  Metric* watermark_ = nullptr;
  HistogramMetric* latency_ = nullptr;
  bool opened_ = false;
  bool written_ = false;  // records written since the last flush
};

}  // namespace flow::rt
