#pragma once
// WindowClock: when the sliding-window operators' windows fire (window_aggregate_operator.h,
// window_join_operator.h). Their panes, timers and window bounds are in window time
// (SlidingWindows::WindowTime: instants for UTC windows, a zone's wall clock for zone-aligned
// ones); watermarks and the record's time are instants.
//
// A window [s, e) of window time holds the instants [Instant(s), Instant(e)) and fires when the
// watermark reaches Instant(e) - 1 + lateness. Its timer is stored as e - 1 + lateness and timers
// advance with TimerWatermark(), the window-time image of the watermark, so a timer is due exactly
// when its window fires. For UTC windows every conversion is the identity: timers and snapshots
// are the same as before zones existed.
//
// Threading: the operator's subtask thread.

#include <algorithm>
#include <string>

#include "flow/runtime/operators/keyed_operator_core.h"
#include "flow/runtime/operators/window_spec.h"

namespace flow::rt {

class WindowClock {
 public:
  // Both must outlive the clock (they are the operator's members).
  WindowClock(const SlidingWindows* windows, const KeyedOperatorCore* core)
      : windows_(windows), core_(core) {}
  // It points into its operator: neither it nor the operator moves.
  WindowClock(const WindowClock&) = delete;
  WindowClock& operator=(const WindowClock&) = delete;

  // A window ending at `end` (window time) has fired iff end <= FiredThrough().
  TimestampMs FiredThrough() {
    TimestampMs w = core_->watermark();
    if (w != seen_watermark_) {
      seen_watermark_ = w;
      // Fired iff Instant(end) - 1 + lateness <= w, i.e. Instant(end) <= w + 1 - lateness, i.e.
      // end <= WindowTime(w + 1 - lateness).
      fired_through_ = w == kMinWatermark || w == kMaxWatermark
                           ? w
                           : windows_->WindowTime(SaturatingAdd(w + 1, -lateness()));
    }
    return fired_through_;
  }
  bool Fired(TimestampMs end) { return end <= FiredThrough(); }

  // The timer of the window ending at `end`, and the value timers advance with.
  TimestampMs Timer(TimestampMs end) const { return SaturatingAdd(end - 1, lateness()); }
  TimestampMs TimerWatermark() {
    TimestampMs w = core_->watermark();
    if (w == kMinWatermark || w == kMaxWatermark) return w;
    return SaturatingAdd(SaturatingAdd(FiredThrough(), -1), lateness());
  }
  // The window end of a due timer, and the watermark (instant) at which a timer is due.
  TimestampMs WindowEnd(TimestampMs timer) const { return timer + 1 - lateness(); }
  TimestampMs TimerInstant(TimestampMs timer) const {
    if (timer == kMaxWatermark) return timer;
    return SaturatingAdd(windows_->Instant(WindowEnd(timer)) - 1, lateness());
  }

  // The end of the first window containing the pane starting at `pane_start` that has not fired
  // yet (the record's lateness check guarantees there is one).
  TimestampMs FirstOpenWindowEnd(TimestampMs pane_start) {
    TimestampMs end = windows_->FirstWindowEnd(pane_start);
    if (!Fired(end)) return end;
    return std::max(end, windows_->FirstWindowEndAbove(FiredThrough()));
  }

 private:
  DurationMs lateness() const { return core_->options().allowed_lateness; }

  const SlidingWindows* windows_;
  const KeyedOperatorCore* core_;
  TimestampMs seen_watermark_ = kMinWatermark;
  TimestampMs fired_through_ = kMinWatermark;
};

// The snapshot signature of a sliding-window operator: its shape, lateness and zone (timers and
// panes are in the zone's window time, so a snapshot restores only under the same zone).
inline std::string SlidingWindowSignature(std::string_view kind, const SlidingWindows& windows,
                                          DurationMs lateness) {
  std::string s = OperatorSignature(
      kind, {{"size", windows.size()}, {"slide", windows.slide()}, {"lateness", lateness}});
  if (!windows.zone_name().empty()) s += "@" + windows.zone_name();
  return s;
}

}  // namespace flow::rt
