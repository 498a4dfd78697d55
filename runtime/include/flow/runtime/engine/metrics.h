#pragma once
// Metrics: counters and gauges per operator and subtask, rendered in the Prometheus text format.
//
// Threading: registration (Counter/Gauge/AddCallback) takes a lock and is done when tasks open;
// updating a metric is one relaxed atomic operation and may happen from any thread. Rendering
// is thread-safe. Metric objects live as long as the registry.

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace flow::rt {

using MetricLabels = std::vector<std::pair<std::string, std::string>>;

class Metric {
 public:
  void Add(int64_t n) { v_.fetch_add(n, std::memory_order_relaxed); }
  void Set(int64_t v) { v_.store(v, std::memory_order_relaxed); }
  int64_t value() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> v_{0};
};

enum class MetricType { kCounter, kGauge };

class MetricsRegistry {
 public:
  // Returns the metric with this name and labels, creating it at 0. Names follow Prometheus rules
  // (counters end in _total). The same name must always be used with the same type.
  Metric* Counter(std::string_view name, std::string_view help, const MetricLabels& labels);
  Metric* Gauge(std::string_view name, std::string_view help, const MetricLabels& labels);
  // A series computed when rendered (a gauge such as queue depth, or a counter that must then
  // never decrease). The callback must stay valid until ClearCallbacks() is called; it runs on
  // the rendering thread.
  void AddCallback(std::string_view name, std::string_view help, const MetricLabels& labels,
                   std::function<int64_t()> fn, MetricType type = MetricType::kGauge);
  void ClearCallbacks();

  // Prometheus text exposition format 0.0.4: "# HELP", "# TYPE", one line per series.
  std::string RenderPrometheus() const;
  // Sum of all series of `name` (0 when absent), for progress reports and tests.
  int64_t Sum(std::string_view name) const;
  // Minimum over the series of `name`; `fallback` when there is none.
  int64_t Min(std::string_view name, int64_t fallback) const;

 private:
  struct Series {
    std::string name;
    std::string help;
    MetricType type;
    std::string labels;  // rendered: {a="b",c="d"}
    Metric* metric = nullptr;
    std::function<int64_t()> callback;
  };
  Metric* Get(std::string_view name, std::string_view help, MetricType type, const MetricLabels& labels);
  static std::string RenderLabels(const MetricLabels& labels);
  int64_t ValueOf(const Series& s) const { return s.metric ? s.metric->value() : s.callback(); }

  mutable std::mutex mu_;
  std::deque<Metric> storage_;
  std::vector<Series> series_;
};

// The metrics of one operator subtask: labels operator="<name>", subtask="<i>".
class MetricGroup {
 public:
  MetricGroup() = default;
  MetricGroup(MetricsRegistry* registry, std::string op, uint32_t subtask)
      : registry_(registry), op_(std::move(op)), subtask_(subtask) {}

  // Both return a metric that is always valid (a shared sink metric without a registry).
  Metric* Counter(std::string_view name, std::string_view help);
  Metric* Gauge(std::string_view name, std::string_view help);
  MetricsRegistry* registry() const { return registry_; }
  MetricLabels Labels() const;

 private:
  MetricsRegistry* registry_ = nullptr;
  std::string op_;
  uint32_t subtask_ = 0;
};

// Names used by the engine (see docs/runtime.md).
inline constexpr std::string_view kMetricRecordsIn = "flow_records_in_total";
inline constexpr std::string_view kMetricRecordsOut = "flow_records_out_total";
inline constexpr std::string_view kMetricBytesIn = "flow_bytes_in_total";
inline constexpr std::string_view kMetricBytesOut = "flow_bytes_out_total";
inline constexpr std::string_view kMetricWatermark = "flow_watermark_ms";
inline constexpr std::string_view kMetricQueueDepth = "flow_input_queue_depth";
inline constexpr std::string_view kMetricQueueCapacity = "flow_input_queue_capacity";
inline constexpr std::string_view kMetricBackpressure = "flow_backpressure_ms_total";
inline constexpr std::string_view kMetricDecodeErrors = "flow_decode_errors_total";
inline constexpr std::string_view kMetricAlignmentMs = "flow_checkpoint_alignment_ms";
inline constexpr std::string_view kMetricRestarts = "flow_job_restarts_total";

}  // namespace flow::rt
