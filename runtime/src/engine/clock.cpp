#include "flow/runtime/engine/clock.h"

#include <algorithm>
#include <chrono>
#include <vector>

namespace flow::rt {
namespace {
// A ManualClock waiter re-reads the clock at least this often even without a wake-up.
constexpr int64_t kManualRecheckMs = 200;
}  // namespace

TimestampMs SystemClock::NowMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t SystemClock::RealWaitMs(TimestampMs deadline) const {
  TimestampMs now = NowMs();
  return deadline <= now ? 0 : deadline - now;
}

Clock* DefaultClock() {
  static SystemClock clock;
  return &clock;
}

TimestampMs ManualClock::NowMs() const {
  std::lock_guard<std::mutex> lock(mu_);
  return now_;
}

int64_t ManualClock::RealWaitMs(TimestampMs deadline) const {
  return deadline <= NowMs() ? 0 : kManualRecheckMs;
}

uint64_t ManualClock::AddWaker(std::function<void()> wake) {
  std::lock_guard<std::mutex> lock(mu_);
  wakers_.emplace(next_id_, std::move(wake));
  return next_id_++;
}

void ManualClock::RemoveWaker(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  wakers_.erase(id);
}

void ManualClock::Advance(DurationMs d) {
  TimestampMs to;
  {
    std::lock_guard<std::mutex> lock(mu_);
    to = now_ + std::max<DurationMs>(0, d);
  }
  Set(to);
}

void ManualClock::Set(TimestampMs t) {
  std::lock_guard<std::mutex> lock(mu_);
  now_ = std::max(now_, t);
  // Wakers only notify condition variables (never call back into the clock), so holding the
  // lock keeps a waker from being removed while it runs.
  for (auto& [id, wake] : wakers_) wake();
}

}  // namespace flow::rt
