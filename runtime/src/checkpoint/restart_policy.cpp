#include "flow/runtime/checkpoint/restart_policy.h"

#include <cassert>
#include <cmath>
#include <string>

namespace flow::rt {

Status RestartPolicyOptions::Validate() const {
  if (initial_delay_ms < 0) {
    return Status::InvalidArgument("restart initial delay must be >= 0 ms, got " +
                                   std::to_string(initial_delay_ms));
  }
  if (max_delay_ms < initial_delay_ms) {
    return Status::InvalidArgument("restart max delay (" + std::to_string(max_delay_ms) +
                                   " ms) must be >= the initial delay (" +
                                   std::to_string(initial_delay_ms) + " ms)");
  }
  if (!std::isfinite(multiplier) || multiplier < 1.0) {
    return Status::InvalidArgument("restart backoff multiplier must be a finite number >= 1, got " +
                                   std::to_string(multiplier));
  }
  return Status::Ok();
}

RestartBackoff::RestartBackoff(RestartPolicyOptions options) : options_(options) {
  assert(options_.Validate().ok() &&
         "RestartBackoff built with invalid options; call Validate() first");
}

std::optional<DurationMs> RestartBackoff::NextDelay() {
  if (attempts_ >= options_.max_attempts) return std::nullopt;
  // Computed in double and clamped, so large attempt counts cannot overflow.
  double d =
      static_cast<double>(options_.initial_delay_ms) * std::pow(options_.multiplier, attempts_);
  ++attempts_;
  double max = static_cast<double>(options_.max_delay_ms);
  return static_cast<DurationMs>(d < max ? d : max);
}

}  // namespace flow::rt
