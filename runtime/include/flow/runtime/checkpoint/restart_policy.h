#pragma once
// Restart with exponential backoff: after a failure the job waits, restores the latest checkpoint
// and runs again; the wait grows by `multiplier` per consecutive failure up to `max_delay_ms`;
// after `max_attempts` restarts in a row the job gives up (exit code 1). Reset() after the job
// ran healthily (e.g. a checkpoint completed after the restart), so old failures are forgotten.
//
// Threading: not thread-safe; owned by the job's supervising thread.

#include <cstdint>
#include <optional>

#include "flow/runtime/common/status.h"
#include "flow/runtime/common/time.h"

namespace flow::rt {

struct RestartPolicyOptions {
  DurationMs initial_delay_ms = 1000;  // Default: 1 s
  DurationMs max_delay_ms = 60000;     // Default: 60 s
  double multiplier = 2.0;             // Default: 2
  uint32_t max_attempts = 10;          // consecutive restarts; 0 = never restart. Default: 10

  // InvalidArgument naming the field: initial < 0, max < initial, multiplier < 1 or not finite.
  [[nodiscard]] Status Validate() const;
};

class RestartBackoff {
 public:
  // Options must be valid (asserted).
  explicit RestartBackoff(RestartPolicyOptions options);

  // The delay before the next restart, or nullopt when attempts are exhausted (give up).
  std::optional<DurationMs> NextDelay();
  void Reset() { attempts_ = 0; }
  uint32_t attempts() const { return attempts_; }

 private:
  RestartPolicyOptions options_;
  uint32_t attempts_ = 0;
};

}  // namespace flow::rt
