#pragma once
// Wraps the engine-agnostic WindowAggregateOperator (operators/window_aggregate_operator.h) into
// the engine's OneInputOperator. The key groups of the subtask come from the OperatorContext at
// Open, so the upstream edge must be KeyBy with the same key hash as KeyHash<Key>{}(key_of(r))
// (see KeyHashOf below). Snapshot/restore delegate to the operator.
//
// The accumulator sees each record as Stamped<In> (record + its timestamp), so event-time
// aggregates (first/last) can read the time. key_of and make_output see the plain record.
//
// Processing time (config.processing_time): records count at the job clock's time on arrival
// (OperatorContext::clock); the adapter registers a processing-time timer for the earliest
// pending window (engine/timers.h), so a window fires once the clock reaches end + lateness
// (every record of the window is in) even when no further record or watermark arrives. Upstream watermarks also fire due windows (their value is
// ignored, so an event-time watermark never fires a clock window); end of input (kMaxWatermark)
// fires every open window. After RestoreState the timer is registered again: windows whose end
// passed while the job was down fire promptly. Outside the engine (no timer service) due windows
// fire after every batch and watermark instead.
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
#include "flow/runtime/exec/late_counter.h"
#include "flow/runtime/operators/window_aggregate_operator.h"
#include "flow/runtime/state/key_hash.h"

namespace flow::exec {

struct WindowConfig {
  rt::DurationMs size = 0;   // tumbling/sliding size; the gap of session windows
  rt::DurationMs slide = 0;  // == size for tumbling windows; unused for sessions
  rt::DurationMs allowed_lateness = 0;
  bool processing_time = false;
};

// A record with the time it counts at, as the accumulators of generated jobs receive it.
template <typename In>
struct Stamped {
  const In* record;
  rt::TimestampMs ts;
};

// Shared by the window adapters: the operator options of `config` for the subtask, or an error
// naming the operator.
inline rt::Result<rt::KeyedOperatorOptions> WindowOptions(const WindowConfig& config,
                                                          const rt::OperatorContext& ctx) {
  rt::KeyedOperatorOptions options;
  options.key_groups = {ctx.key_groups.first, ctx.key_groups.end};
  options.max_parallelism = ctx.max_parallelism;
  options.allowed_lateness = config.allowed_lateness;
  if (config.processing_time) options.time_domain = rt::TimeDomain::kProcessingTime;
  if (rt::Clock* clock = ctx.clock; clock != nullptr) options.clock = [clock] { return clock->NowMs(); };
  rt::Status valid = options.Validate();
  if (!valid.ok()) return rt::Status::InvalidArgument(fmt::format("{}: {}", ctx.name, valid.message()));
  return options;
}

// Feeds a batch to an operator taking Stamped<In>.
template <typename Op, typename In>
void FeedStamped(Op& op, const rt::Batch<In>& batch) {
  for (size_t i = 0; i < batch.size(); ++i) {
    op.ProcessElement(Stamped<In>{&batch.records[i], batch.timestamps[i]}, batch.timestamps[i]);
  }
}

// Upstream watermark: event time passes it on; processing time only takes end of input from it.
template <typename Op>
void AdvanceWindows(Op& op, rt::TimestampMs wm, bool processing_time) {
  if (!processing_time || wm == rt::kMaxWatermark) {
    op.OnWatermark(wm);
  } else {
    op.OnProcessingTime();
  }
}

// The key hash the engine's KeyBy must use so records reach the subtask owning their key group.
template <typename Key, typename KeyFn>
auto KeyHashOf(KeyFn key_of) {
  return [key_of](const auto& record) -> uint64_t { return rt::KeyHash<Key>{}(key_of(record)); };
}

// The engine side of a keyed window operator `Op` (sliding/tumbling or session windows): builds
// the operator at Open with the windows `kMakeWindows(config)` returns, feeds it Stamped records
// and watermarks, and delegates snapshot/restore to it.
template <typename Op, typename Key, typename In, typename Out, auto kMakeWindows>
class KeyedWindowAdapter final : public rt::OneInputOperator<In, Out> {
 public:
  using KeyFn = Key (*)(const In&);

  KeyedWindowAdapter(WindowConfig config, KeyFn key_of, typename Op::MakeOutputFn make_output)
      : config_(config), key_of_(key_of), make_output_(std::move(make_output)) {}

  rt::Status Open(rt::OperatorContext& ctx) override {
    auto windows = kMakeWindows(config_);
    if (!windows.ok()) {
      return rt::Status::InvalidArgument(fmt::format("{}: {}", ctx.name, windows.status().message()));
    }
    auto options = WindowOptions(config_, ctx);
    if (!options.ok()) return options.status();
    KeyFn key_of = key_of_;
    op_.emplace(*windows, [key_of](const Stamped<In>& s) { return key_of(*s.record); }, make_output_, &collector_,
                std::move(*options));
    late_.Open(ctx);
    timers_ = config_.processing_time ? ctx.timers : nullptr;
    registered_ = rt::kMaxWatermark;
    return rt::Status::Ok();
  }
  rt::Status ProcessBatch(const rt::Batch<In>& batch, rt::Output<Out>& out) override {
    collector_.Bind(&out);
    FeedStamped(*op_, batch);
    late_.Report(op_->counters().late_records_dropped);
    if (config_.processing_time && timers_ == nullptr) op_->OnProcessingTime();
    ScheduleNextWindow();
    return rt::Status::Ok();
  }
  rt::Status OnWatermark(rt::TimestampMs wm, rt::Output<Out>& out) override {
    collector_.Bind(&out);
    AdvanceWindows(*op_, wm, config_.processing_time);
    ScheduleNextWindow();
    return rt::Status::Ok();
  }
  rt::Status OnProcessingTime(rt::TimestampMs, rt::Output<Out>& out) override {
    collector_.Bind(&out);
    registered_ = rt::kMaxWatermark;  // the engine dropped the timer that called us
    op_->OnProcessingTime();
    ScheduleNextWindow();
    return rt::Status::Ok();
  }
  rt::Status SnapshotState(rt::BinaryWriter* out) override {
    op_->SnapshotState(out);
    return rt::Status::Ok();
  }
  rt::Status RestoreState(rt::BinaryReader* in) override {
    FLOW_RETURN_IF_ERROR(op_->RestoreState(in));
    ScheduleNextWindow();
    return rt::Status::Ok();
  }

 private:
  // Processing time: asks for a timer when the earliest pending window is due (its fire time is a
  // watermark; the clock must read one more: OnProcessingTime) unless one at or before it is
  // registered already (a later one left behind fires harmlessly).
  void ScheduleNextWindow() {
    if (timers_ == nullptr) return;
    rt::TimestampMs fire = op_->NextFireTime();
    if (fire == rt::kMaxWatermark) return;
    rt::TimestampMs next = fire + 1;
    if (next >= registered_) return;
    timers_->RegisterTimer(next);
    registered_ = next;
  }

  WindowConfig config_;
  KeyFn key_of_;
  typename Op::MakeOutputFn make_output_;
  OutputCollector<Out> collector_;
  std::optional<Op> op_;
  LateCounter late_;  // flow_late_records_dropped_total
  rt::ProcessingTimeService* timers_ = nullptr;  // processing time in the engine only
  rt::TimestampMs registered_ = rt::kMaxWatermark;  // earliest timer asked for and not yet fired
};

// Tumbling when slide == size, otherwise sliding.
inline rt::Result<rt::SlidingWindows> SlidingWindowsOf(const WindowConfig& config) {
  return config.slide == config.size ? rt::SlidingWindows::Tumbling(config.size)
                                     : rt::SlidingWindows::Sliding(config.size, config.slide);
}

template <typename Key, typename In, typename Acc, typename Out>
using WindowAggregateAdapter =
    KeyedWindowAdapter<rt::WindowAggregateOperator<Key, Stamped<In>, Acc, Out>, Key, In, Out, &SlidingWindowsOf>;

}  // namespace flow::exec
