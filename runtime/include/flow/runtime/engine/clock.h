#pragma once
// The engine's processing-time clock: what processing-time windows read and what task loops wait
// for when an operator registered a processing-time timer (engine/timers.h).
//
// SystemClock is the default (wall clock, ms since the epoch). ManualClock only moves when a test
// moves it, so tests of processing time neither sleep nor depend on timing: Advance/Set wakes
// every waiting task, which then fires the timers that became due.
//
// Threading: every method is thread-safe.

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>

#include "flow/runtime/common/time.h"

namespace flow::rt {

class Clock {
 public:
  virtual ~Clock() = default;
  // Milliseconds since the Unix epoch.
  virtual TimestampMs NowMs() const = 0;
  // How long (real milliseconds) a task waiting for `deadline` may sleep before it must read
  // NowMs() again; 0 when the deadline has passed.
  virtual int64_t RealWaitMs(TimestampMs deadline) const = 0;
  // `wake` is called (from any thread) whenever the clock jumps, so waiters re-read it. Returns an
  // id for RemoveWaker. SystemClock never jumps and ignores wakers.
  virtual uint64_t AddWaker(std::function<void()> wake) { return 0; }
  virtual void RemoveWaker(uint64_t id) {}
};

class SystemClock final : public Clock {
 public:
  TimestampMs NowMs() const override;
  int64_t RealWaitMs(TimestampMs deadline) const override;
};

// The process-wide SystemClock (the default of JobOptions::clock).
Clock* DefaultClock();

class ManualClock final : public Clock {
 public:
  explicit ManualClock(TimestampMs start) : now_(start) {}
  TimestampMs NowMs() const override;
  // 0 when due; otherwise a long safety interval (a jump wakes waiters anyway).
  int64_t RealWaitMs(TimestampMs deadline) const override;
  uint64_t AddWaker(std::function<void()> wake) override;
  void RemoveWaker(uint64_t id) override;
  // Moves the clock forward by `d` (>= 0) or to `t` (never backwards) and wakes every waiter.
  void Advance(DurationMs d);
  void Set(TimestampMs t);

 private:
  mutable std::mutex mu_;
  TimestampMs now_;
  uint64_t next_id_ = 1;
  std::map<uint64_t, std::function<void()>> wakers_;
};

}  // namespace flow::rt
