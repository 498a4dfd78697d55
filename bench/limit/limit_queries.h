#pragma once
// Hand-written Nexmark queries: what a careful engineer writes without a framework, to show the
// practical limit of one core. Each query reads the events of `config` from our NexmarkGenerator
// (the same events Flow and the Flink peer see) and returns the result's row count and
// checksum (row_checksum.h). The column order of each query is documented in docs/benchmarks.md.
//
// Threading: a query function uses `threads` threads where it says so (the stateless ones);
// the stateful ones run on the calling thread.

#include <cstdint>
#include <string>
#include <string_view>

#include "flow/runtime/generators/nexmark.h"
#include "row_checksum.h"

namespace flow::bench {

struct LimitResult {
  int64_t rows = 0;
  uint64_t checksum = 0;
};

// Stateless, parallel over `threads` slices of the sequence.
LimitResult RunQ0(const rt::NexmarkConfig& config, int threads);
LimitResult RunQ1(const rt::NexmarkConfig& config, int threads);
LimitResult RunQ2(const rt::NexmarkConfig& config, int threads);
// Stateful, single-threaded.
LimitResult RunQ3(const rt::NexmarkConfig& config);
LimitResult RunQ5(const rt::NexmarkConfig& config);
LimitResult RunQ7(const rt::NexmarkConfig& config);
LimitResult RunQ8(const rt::NexmarkConfig& config);
LimitResult RunQ11(const rt::NexmarkConfig& config);

// Window sizes shared with the .flow scripts and the Flink peer (milliseconds).
inline constexpr int64_t kQ5WindowMs = 10000;
inline constexpr int64_t kQ5SlideMs = 2000;
inline constexpr int64_t kQ7WindowMs = 10000;
inline constexpr int64_t kQ8WindowMs = 10000;
inline constexpr int64_t kQ11GapMs = 10000;
inline constexpr int64_t kQ2AuctionModulus = 123;
inline constexpr int64_t kQ3Category = 10;

}  // namespace flow::bench
