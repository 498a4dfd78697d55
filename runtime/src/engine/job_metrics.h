#pragma once
// Engine-internal: the job-level metrics (docs/runtime.md, "Metrics"): checkpoints, heard from
// the coordinator's reports, and the process, read from /proc/self when scraped.

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "flow/runtime/checkpoint/checkpoint_types.h"
#include "flow/runtime/common/metrics.h"
#include "flow/runtime/engine/channel.h"

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

  // The last kHistory checkpoints, oldest first, for the job page.
  struct Entry {
    int64_t id = 0;
    bool completed = false;
    std::string reason;  // CheckpointFailureReasonName when not completed
    int64_t duration_ms = 0;
    uint64_t bytes = 0;
    int64_t end_ms = 0;  // wall clock
  };
  static constexpr size_t kHistory = 30;
  std::vector<Entry> History() const;

 private:
  MetricsRegistry* registry_;
  Metric* completed_;
  Metric* last_size_;
  HistogramMetric* duration_;
  HistogramMetric* size_;
  std::atomic<int64_t> last_completed_ms_{0};  // wall clock of the last completion; 0: none yet
  mutable std::mutex mu_;
  std::deque<Entry> history_;  // guarded by mu_
};

// Totals of the series `name` per operator (label "operator"): the sum over its subtasks, or
// the minimum (watermarks). Absent series are left out.
std::map<std::string, int64_t> SumPerOperator(const MetricsRegistry& registry,
                                              std::string_view name);
std::map<std::string, int64_t> MinPerOperator(const MetricsRegistry& registry,
                                              std::string_view name);

// Per-operator rates for the job page, sampled by the job's monitor loop about once a second, so
// that every viewer sees the same numbers however often (or in whatever virtual time) it polls.
// Thread-safe.
class OperatorRates {
 public:
  struct Rate {
    std::optional<double> in, out;          // records per second
    std::optional<double> backpressure_ms;  // per second, summed over the subtasks
  };
  // Takes a sample when the last one is at least a second old (steady clock).
  void Sample(const MetricsRegistry& registry, int64_t now_ms);
  std::map<std::string, Rate> Get() const;

 private:
  struct Totals {
    std::map<std::string, int64_t> in, out, backpressure;
  };
  mutable std::mutex mu_;
  int64_t last_ms_ = 0;
  Totals last_;
  std::map<std::string, Rate> rates_;
};

// process_cpu_seconds_total, process_resident_memory_bytes, process_virtual_memory_bytes,
// process_open_fds, process_max_fds, process_threads, process_start_time_seconds: the names
// Prometheus' own clients use, so existing dashboards work. Callbacks: again after ClearCallbacks.
void AddProcessMetrics(MetricsRegistry* registry);

// The series of one operator subtask that the engine registers while it builds a run's tasks
// (docs/runtime.md, "Metrics"): graph building asks for them by meaning; their names and help
// texts are here. Counters and gauges are the registry's, so a restarted run's tasks get the same.
class SubtaskSeries {
 public:
  SubtaskSeries(MetricsRegistry* registry, const std::string& op, uint32_t subtask);
  Metric* RecordsIn();
  Metric* RecordsOut();
  Metric* Watermark();
  Metric* AlignmentMs();
  Metric* RestoreMs();
  // An input task's gate: queue depth, capacity and the time upstream writers waited on it,
  // computed when scraped. `before`: the waiting of earlier runs, so the counter never goes back.
  void AddInputGate(InputGate* gate, std::atomic<int64_t>* before);

 private:
  MetricsRegistry* registry_;
  MetricLabels labels_;
};

// Milliseconds upstream writers waited on the gate's full channels, in this run.
int64_t BlockedMs(InputGate* gate);
// The sum of the metrics' values.
int64_t SumOf(const std::vector<Metric*>& metrics);

}  // namespace flow::rt
