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
// (every record of the window is in) even when no further record or watermark arrives. Upstream
// watermarks also fire due windows (their value is ignored, so an event-time watermark never fires
// a clock window); end of input (kMaxWatermark) fires every open window. After RestoreState the
// timer is registered again: windows whose end passed while the job was down fire promptly. Outside
// the engine (no timer service) due windows fire after every batch and watermark instead.
//
// Late records (`window ... on late into <sink>`): with Emitted = WithLate<Out, In> the adapter
// emits its results as index 0 and every late input record (with its own timestamp) as index 1,
// counted in flow_late_records_routed_total instead of flow_late_records_dropped_total;
// WindowResults and LateRecords split that stream for the downstream operators and the late sink.
//
// Errors: Open fails with kInvalidArgument for invalid window sizes or lateness (naming the
// operator). Threading: one subtask thread.

#include <cassert>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include <fmt/format.h>

#include "flow/runtime/engine/job.h"
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
  // Tumbling/sliding windows: the IANA time zone whose wall clock they align to; "" is UTC.
  std::string zone = "";
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
  if (ctx.state_backend != nullptr) options.state_backend = *ctx.state_backend;
  options.allowed_lateness = config.allowed_lateness;
  if (config.processing_time) options.time_domain = rt::TimeDomain::kProcessingTime;
  if (rt::Clock* clock = ctx.clock; clock != nullptr)
    options.clock = [clock] { return clock->NowMs(); };
  rt::Status valid = options.Validate();
  if (!valid.ok())
    return rt::Status::InvalidArgument(fmt::format("{}: {}", ctx.name, valid.message()));
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

// A window's output with its late records: index 0 a result, index 1 a late input record. By
// index, not type: Out and In may be the same type.
template <typename Out, typename In>
using WithLate = std::variant<Out, In>;

// Writes an operator's results into the call's Output<Emitted>: as they are, or as index 0 of
// WithLate; Late writes a late record as index 1.
template <typename Out, typename Emitted>
class WindowCollector final : public rt::Collector<Out> {
 public:
  void Bind(rt::Output<Emitted>* out) { out_ = out; }
  void Collect(Out record, rt::TimestampMs timestamp) override {
    assert(out_ != nullptr && "WindowCollector used outside an operator call");
    if constexpr (std::is_same_v<Emitted, Out>) {
      out_->Emit(std::move(record), timestamp);
    } else {
      out_->Emit(Emitted(std::in_place_index<0>, std::move(record)), timestamp);
    }
  }
  template <typename In>
  void Late(const In& record, rt::TimestampMs timestamp) {
    assert(out_ != nullptr && "WindowCollector used outside an operator call");
    out_->Emit(Emitted(std::in_place_index<1>, record), timestamp);
  }

 private:
  rt::Output<Emitted>* out_ = nullptr;
};

// The engine side of a keyed window operator `Op` (sliding/tumbling or session windows): builds
// the operator at Open with the windows `kMakeWindows(config)` returns, feeds it Stamped records
// and watermarks, and delegates snapshot/restore to it. Emitted: Out, or WithLate<Out, In> to
// route late records (see the top of this file).
template <typename Op, typename Key, typename In, typename Out, auto kMakeWindows,
          typename Emitted = Out>
class KeyedWindowAdapter final : public rt::OneInputOperator<In, Emitted> {
  static constexpr bool kRoutesLate = !std::is_same_v<Emitted, Out>;
  static_assert(!kRoutesLate || std::is_same_v<Emitted, WithLate<Out, In>>,
                "Emitted is Out or WithLate<Out, In>");

 public:
  using KeyFn = Key (*)(const In&);

  KeyedWindowAdapter(WindowConfig config, KeyFn key_of, typename Op::MakeOutputFn make_output)
      : config_(config), key_of_(key_of), make_output_(std::move(make_output)) {}

  rt::Status Open(rt::OperatorContext& ctx) override {
    auto windows = kMakeWindows(config_);
    if (!windows.ok()) {
      return rt::Status::InvalidArgument(
          fmt::format("{}: {}", ctx.name, windows.status().message()));
    }
    auto options = WindowOptions(config_, ctx);
    if (!options.ok()) return options.status();
    KeyFn key_of = key_of_;
    op_.emplace(
        *windows, [key_of](const Stamped<In>& s) { return key_of(*s.record); }, make_output_,
        &collector_, std::move(*options));
    if constexpr (kRoutesLate) {
      op_->SetLateRecordHandler(
          [this](const Stamped<In>& s, rt::TimestampMs ts) { collector_.Late(*s.record, ts); });
    }
    late_.Open(ctx, kRoutesLate);
    timers_ = config_.processing_time ? ctx.timers : nullptr;
    registered_ = rt::kMaxWatermark;
    return rt::Status::Ok();
  }
  rt::Status ProcessBatch(const rt::Batch<In>& batch, rt::Output<Emitted>& out) override {
    collector_.Bind(&out);
    FeedStamped(*op_, batch);
    late_.Report(op_->counters().late_records_dropped);
    if (config_.processing_time && timers_ == nullptr) op_->OnProcessingTime();
    ScheduleNextWindow();
    return rt::Status::Ok();
  }
  rt::Status OnWatermark(rt::TimestampMs wm, rt::Output<Emitted>& out) override {
    collector_.Bind(&out);
    AdvanceWindows(*op_, wm, config_.processing_time);
    ScheduleNextWindow();
    return rt::Status::Ok();
  }
  rt::Status OnProcessingTime(rt::TimestampMs, rt::Output<Emitted>& out) override {
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
  WindowCollector<Out, Emitted> collector_;
  std::optional<Op> op_;
  LateCounter late_;  // flow_late_records_dropped_total, or _routed_total
  rt::ProcessingTimeService* timers_ = nullptr;     // processing time in the engine only
  rt::TimestampMs registered_ = rt::kMaxWatermark;  // earliest timer asked for and not yet fired
};

// Tumbling when slide == size, otherwise sliding; aligned to config.zone.
inline rt::Result<rt::SlidingWindows> SlidingWindowsOf(const WindowConfig& config) {
  auto windows = config.slide == config.size
                     ? rt::SlidingWindows::Tumbling(config.size)
                     : rt::SlidingWindows::Sliding(config.size, config.slide);
  if (!windows.ok() || config.zone.empty()) return windows;
  const date::time_zone* zone = rt::FindZone(config.zone);
  if (zone == nullptr) {
    return rt::Status::InvalidArgument(fmt::format(
        "unknown time zone \"{}\": the window's `zone` must be a name of the IANA time zone "
        "database, such as \"Europe/Berlin\" or \"UTC\"",
        config.zone));
  }
  return windows->InZone(zone, config.zone);
}

template <typename Key, typename In, typename Acc, typename Out, typename Emitted = Out>
using WindowAggregateAdapter =
    KeyedWindowAdapter<rt::WindowAggregateOperator<Key, Stamped<In>, Acc, Out>, Key, In, Out,
                       &SlidingWindowsOf, Emitted>;

// The results of a window that routes late records (index 0), at the window's parallelism so the
// edge is forward (chained: no extra thread or copy across a channel).
template <typename Out, typename In>
rt::Stream<Out> WindowResults(const rt::Stream<WithLate<Out, In>>& s, std::string name,
                              uint32_t parallelism) {
  return s.template Chain<Out>(
      std::move(name),
      [](const WithLate<Out, In>& v, rt::TimestampMs ts, rt::Output<Out>& out) {
        if (v.index() == 0) out.Emit(std::get<0>(v), ts);
      },
      parallelism);
}

// Its late input records (index 1), for the late sink.
template <typename Out, typename In>
rt::Stream<In> LateRecords(const rt::Stream<WithLate<Out, In>>& s, std::string name,
                           uint32_t parallelism) {
  return s.template Chain<In>(
      std::move(name),
      [](const WithLate<Out, In>& v, rt::TimestampMs ts, rt::Output<In>& out) {
        if (v.index() == 1) out.Emit(std::get<1>(v), ts);
      },
      parallelism);
}

}  // namespace flow::exec
