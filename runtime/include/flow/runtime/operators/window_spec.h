#pragma once
// Window shapes. All windows are [start, end): `end` is exclusive and a window's records have
// start <= t < end. Windows are epoch-aligned: a tumbling window of 1 minute starts on a minute.
//
// Sliding windows are aligned to UTC or to a time zone's wall clock (InZone: a `1d` window is
// that zone's day, 23 or 25 hours long around clock changes). Their arithmetic is done in window
// time: instants for UTC, the zone's never-decreasing wall clock otherwise (WallClock in
// common/time_zone.h); WindowTime() maps a record's instant in, Instant() a bound back out.
//
// SlidingWindows covers tumbling (slide == size) and sliding (`size every slide`, slide <= size)
// windows. They are computed with panes: the time line is cut into panes of gcd(size, slide); a
// record is folded into exactly one pane, and a window's result merges its size/pane panes when
// it fires. Each window is a whole number of panes, so this equals folding every record into
// every window that contains it, at 1 accumulator update per record instead of size/slide.
//
// SessionWindows: records of one key less than `gap` apart share a session; a session is
// [first record time, last record time + gap).

#include <cstdint>
#include <string>
#include <utility>

#include "flow/runtime/common/status.h"
#include "flow/runtime/common/time.h"
#include "flow/runtime/common/time_zone.h"

namespace flow::rt {

// Sizes, slides, gaps and lateness above this are rejected; record timestamps beyond
// +-kMaxEventTime are dropped as invalid. Keeps every window computation free of overflow.
inline constexpr DurationMs kMaxWindowDuration = int64_t{1} << 60;
inline constexpr TimestampMs kMaxEventTime = int64_t{1} << 61;

class SlidingWindows {
 public:
  // InvalidArgument unless 0 < slide <= size <= kMaxWindowDuration.
  static Result<SlidingWindows> Tumbling(DurationMs size);
  static Result<SlidingWindows> Sliding(DurationMs size, DurationMs slide);

  // These windows aligned to `zone`'s wall clock (called `name`); a null zone is UTC.
  SlidingWindows InZone(const date::time_zone* zone, std::string name) const {
    SlidingWindows w = *this;
    w.clock_ = WallClock(zone);
    w.zone_name_ = zone == nullptr ? "" : std::move(name);
    return w;
  }
  // "" for UTC.
  const std::string& zone_name() const { return zone_name_; }
  // The window time of an instant, and the instant a window time starts at (identities for UTC).
  // WindowTime(t) >= w <=> t >= Instant(w), so a window [s, e) of window time holds exactly the
  // records at instants [Instant(s), Instant(e)). Not thread-safe (WindowTime caches).
  TimestampMs WindowTime(TimestampMs instant) const { return clock_.Read(instant); }
  TimestampMs Instant(TimestampMs window_time) const { return clock_.Instant(window_time); }

  // The rest is in window time.
  DurationMs size() const { return size_; }
  DurationMs slide() const { return slide_; }
  DurationMs pane() const { return pane_; }
  TimestampMs PaneStart(TimestampMs t) const { return AlignedStart(t, pane_); }
  // The start of the latest window that contains t (windows containing t start at
  // LastWindowStart(t), minus multiples of slide, while start > t - size).
  TimestampMs LastWindowStart(TimestampMs t) const { return AlignedStart(t, slide_); }
  // The end of the earliest window containing t.
  TimestampMs FirstWindowEnd(TimestampMs t) const {
    return AlignedStart(t - size_, slide_) + slide_ + size_;
  }
  // The smallest window end greater than `bound`.
  TimestampMs FirstWindowEndAbove(TimestampMs bound) const {
    return (FloorDiv(bound - size_, slide_) + 1) * slide_ + size_;
  }
  // Calls fn(start) for every window containing t, latest first.
  template <typename Fn>
  void ForEachWindow(TimestampMs t, Fn&& fn) const {
    for (TimestampMs s = LastWindowStart(t); s > t - size_; s -= slide_) fn(s);
  }

 private:
  SlidingWindows(DurationMs size, DurationMs slide, DurationMs pane)
      : size_(size), slide_(slide), pane_(pane) {}
  DurationMs size_, slide_, pane_;
  mutable WallClock clock_;  // mutable: a cache of the zone's current offset
  std::string zone_name_;
};

class SessionWindows {
 public:
  // InvalidArgument unless 0 < gap <= kMaxWindowDuration.
  static Result<SessionWindows> WithGap(DurationMs gap);
  DurationMs gap() const { return gap_; }

 private:
  explicit SessionWindows(DurationMs gap) : gap_(gap) {}
  DurationMs gap_;
};

}  // namespace flow::rt
