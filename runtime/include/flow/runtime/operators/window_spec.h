#pragma once
// Window shapes. All windows are [start, end): `end` is exclusive and a window's records have
// start <= t < end. Windows are epoch-aligned: a tumbling window of 1 minute starts on a minute.
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

#include "flow/runtime/common/status.h"
#include "flow/runtime/common/time.h"

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
