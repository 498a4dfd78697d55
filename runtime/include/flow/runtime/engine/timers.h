#pragma once
// Processing-time timers: how an operator gets called when the clock passes a time, even when no
// record or watermark arrives.
//
// An operator finds a ProcessingTimeService in OperatorContext::timers (set by the engine; null
// when an operator runs outside a job). RegisterTimer(t) asks for one call of the operator's
// OnProcessingTime(now, out) once the job's clock reads >= t. The task that runs the operator
// fires due timers between elements and, while its input is empty, sleeps only until its earliest
// timer (a ManualClock wakes it when moved).
//
// Contract:
// - Registrations of the same time by one operator fire once; a time in the past fires at the
//   task's next turn. One OnProcessingTime call serves every timer due at `now`.
// - Timers are not part of checkpoints: an operator keeps what it is waiting for in its own state
//   and registers again in RestoreState, so a restore whose times have passed fires promptly.
// - A timer registered after the task's input ended never fires (end of input already fired
//   every window).
// - Source tasks check their chained operators' timers between polls, so a source blocking inside
//   one poll delays them; window operators always run in input tasks (after a key by).
//
// Threading: a task's TaskTimers and the services it hands out are used by that task's thread only.

#include <cstdint>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "flow/runtime/common/status.h"
#include "flow/runtime/common/time.h"
#include "flow/runtime/engine/clock.h"

namespace flow::rt {

class Consumer;

class ProcessingTimeService {
 public:
  virtual ~ProcessingTimeService() = default;
  // The job's processing clock (ms since the epoch).
  virtual TimestampMs Now() const = 0;
  virtual void RegisterTimer(TimestampMs time) = 0;
};

// Engine-internal: the timers of every operator chained in one task.
class TaskTimers {
 public:
  explicit TaskTimers(Clock* clock);
  ~TaskTimers();  // out of line: Service is complete there
  TaskTimers(const TaskTimers&) = delete;
  TaskTimers& operator=(const TaskTimers&) = delete;

  // A service for one chain member; valid as long as this object. Bind its target before use.
  ProcessingTimeService* NewService();
  // Due timers of `service` call target->OnProcessingTime(now).
  void Bind(ProcessingTimeService* service, Consumer* target);

  Clock* clock() const { return clock_; }
  bool empty() const { return queue_.empty(); }
  // The earliest registered time; kMaxWatermark when none.
  TimestampMs Next() const { return queue_.empty() ? kMaxWatermark : queue_.begin()->first; }
  // Real milliseconds until the earliest timer may be due (0: due now); -1 without timers.
  int64_t WaitMs() const { return queue_.empty() ? -1 : clock_->RealWaitMs(Next()); }
  // Calls OnProcessingTime(now) once on every member with a timer <= now (earliest first) and
  // returns the first error. Timers registered while firing wait for the next call.
  [[nodiscard]] Status FireDue();

 private:
  class Service;
  void Register(uint32_t owner, TimestampMs time) { queue_.emplace(time, owner); }

  Clock* clock_;
  std::vector<std::unique_ptr<Service>> services_;
  std::set<std::pair<TimestampMs, uint32_t>> queue_;  // (time, service index)
};

}  // namespace flow::rt
