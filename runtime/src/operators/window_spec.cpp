#include "flow/runtime/operators/window_spec.h"

#include <numeric>
#include <string>

namespace flow::rt {

Result<SlidingWindows> SlidingWindows::Tumbling(DurationMs size) {
  return Sliding(size, size);
}

Result<SlidingWindows> SlidingWindows::Sliding(DurationMs size, DurationMs slide) {
  if (size <= 0 || size > kMaxWindowDuration) {
    return Status::InvalidArgument("window size must be between 1 ms and 2^60 ms, got " +
                                   std::to_string(size));
  }
  if (slide <= 0 || slide > size) {
    return Status::InvalidArgument("window slide must be between 1 ms and the size (" +
                                   std::to_string(size) + " ms), got " + std::to_string(slide));
  }
  return SlidingWindows(size, slide, std::gcd(size, slide));
}

Result<SessionWindows> SessionWindows::WithGap(DurationMs gap) {
  if (gap <= 0 || gap > kMaxWindowDuration) {
    return Status::InvalidArgument("session gap must be between 1 ms and 2^60 ms, got " +
                                   std::to_string(gap));
  }
  return SessionWindows(gap);
}

}  // namespace flow::rt
