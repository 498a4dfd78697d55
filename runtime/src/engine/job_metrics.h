#pragma once
// Engine-internal: the job-level metrics (docs/runtime.md, "Metrics"): checkpoints, heard from
// the coordinator's reports, and the process, read from /proc/self when scraped.

#include <atomic>
#include <cstdint>

#include "flow/runtime/checkpoint/checkpoint_types.h"
#include "flow/runtime/common/metrics.h"

namespace flow::rt {

// Lives as long as the Job: its counters and histograms must not go back across in-process
// restarts. Thread-safe.
class CheckpointMetrics {
 public:
  explicit CheckpointMetrics(MetricsRegistry* registry);
  // Every checkpoint (and savepoint) the coordinator completes or aborts.
  void Report(const CheckpointReport& report);
  // The computed series (age of the last completed checkpoint); again after each ClearCallbacks.
  void AddCallbacks();

 private:
  MetricsRegistry* registry_;
  Metric* completed_;
  Metric* last_size_;
  HistogramMetric* duration_;
  HistogramMetric* size_;
  std::atomic<int64_t> last_completed_ms_{0};  // wall clock of the last completion; 0: none yet
};

// process_cpu_seconds_total, process_resident_memory_bytes, process_virtual_memory_bytes,
// process_open_fds, process_max_fds, process_threads, process_start_time_seconds: the names
// Prometheus' own clients use, so existing dashboards work. Callbacks: again after ClearCallbacks.
void AddProcessMetrics(MetricsRegistry* registry);

}  // namespace flow::rt
