#pragma once
// Metrics: counters, gauges and histograms per operator and subtask, rendered in the Prometheus
// text format (docs/runtime.md, "Metrics").
//
// A gauge is created absent: while it holds kMetricAbsent or INT64_MAX (the engine's "no
// watermark yet" and "input ended"), or its callback returns one of them or NaN, it is left out
// of the rendering. A value that is not known is an absent series, never a sentinel number.
//
// Threading: registration (Counter/Gauge/Histogram/AddCallback) takes a lock and is done when
// tasks open; updating a metric is a few relaxed atomic operations and may happen from any
// thread. Rendering is thread-safe. Metric objects live as long as the registry.

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace flow::rt {

using MetricLabels = std::vector<std::pair<std::string, std::string>>;

// A gauge value that is not rendered (see above). Also the engine's "no watermark yet".
inline constexpr int64_t kMetricAbsent = std::numeric_limits<int64_t>::min();

class Metric {
 public:
  void Add(int64_t n) { v_.fetch_add(n, std::memory_order_relaxed); }
  void Set(int64_t v) { v_.store(v, std::memory_order_relaxed); }
  int64_t value() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> v_{0};
};

// Bucket upper bounds in the unit observations are made in (e.g. milliseconds), and how many of
// those make one rendered unit (1000: rendered in seconds, as names ending in _seconds require;
// a divisor, so that 565 ms renders as 0.565 exactly).
struct HistogramSpec {
  std::vector<int64_t> bounds;  // ascending; +Inf is implied
  int64_t per_unit = 1;
};

// Counts observations per bucket. Observe is wait-free: one relaxed increment per bucket, sum and
// count; a scrape may see them a few observations apart, as with any Prometheus client.
class HistogramMetric {
 public:
  explicit HistogramMetric(HistogramSpec spec);
  void Observe(int64_t value);
  const HistogramSpec& spec() const { return spec_; }
  int64_t count() const { return count_.load(std::memory_order_relaxed); }
  int64_t sum() const { return sum_.load(std::memory_order_relaxed); }
  // Observations in bucket i alone (i == bounds.size(): above the last bound).
  int64_t bucket(size_t i) const { return buckets_[i].load(std::memory_order_relaxed); }

 private:
  HistogramSpec spec_;
  std::unique_ptr<std::atomic<int64_t>[]> buckets_;
  std::atomic<int64_t> count_{0};
  std::atomic<int64_t> sum_{0};
};

enum class MetricType { kCounter, kGauge };

class MetricsRegistry {
 public:
  // Returns the metric with this name and labels, creating it (a counter at 0, a gauge absent).
  // Names follow Prometheus rules
  // (counters end in _total). The same name must always be used with the same type.
  Metric* Counter(std::string_view name, std::string_view help, const MetricLabels& labels);
  Metric* Gauge(std::string_view name, std::string_view help, const MetricLabels& labels);
  // A series computed when rendered (a gauge such as queue depth, or a counter that must then
  // never decrease). The callback must stay valid until ClearCallbacks() is called; it runs on
  // the rendering thread.
  void AddCallback(std::string_view name, std::string_view help, const MetricLabels& labels,
                   std::function<int64_t()> fn, MetricType type = MetricType::kGauge);
  // The same for a fractional value (seconds of CPU time); NaN leaves the series out.
  void AddDoubleCallback(std::string_view name, std::string_view help, const MetricLabels& labels,
                         std::function<double()> fn, MetricType type = MetricType::kGauge);
  // Returns the histogram with this name and labels, creating it empty with `spec`.
  HistogramMetric* Histogram(std::string_view name, std::string_view help,
                             const MetricLabels& labels, const HistogramSpec& spec);
  void ClearCallbacks();

  // Prometheus text exposition format 0.0.4: "# HELP", "# TYPE", one line per series.
  std::string RenderPrometheus() const;
  // Sum of all series of `name` (0 when absent), for progress reports and tests.
  int64_t Sum(std::string_view name) const;
  // Minimum over the series of `name`; `fallback` when there is none.
  int64_t Min(std::string_view name, int64_t fallback) const;
  // Every present series of the counter or gauge `name` with its labels (absent gauges left
  // out; a histogram gives its count), for the job page.
  std::vector<std::pair<MetricLabels, int64_t>> Values(std::string_view name) const;

 private:
  struct Series {
    std::string name;
    std::string help;
    MetricType type = MetricType::kGauge;
    std::string labels;  // rendered: {a="b",c="d"}
    MetricLabels label_list;
    Metric* metric = nullptr;
    HistogramMetric* histogram = nullptr;
    std::function<int64_t()> callback;
    std::function<double()> double_callback;
    bool owned() const { return metric != nullptr || histogram != nullptr; }
  };
  static Series MakeSeries(std::string_view name, std::string_view help, MetricType type,
                           const MetricLabels& labels);
  Metric* Get(std::string_view name, std::string_view help, MetricType type,
              const MetricLabels& labels);
  static std::string RenderLabels(const MetricLabels& labels);
  static void RenderHistogram(const Series& s, std::string* out);
  // A histogram's value for Sum/Min is its count.
  static int64_t ValueOf(const Series& s);
  // A gauge whose value is unknown (see the top of this file): left out.
  static bool Absent(const Series& s, int64_t value);

  mutable std::mutex mu_;
  std::deque<Metric> storage_;
  std::deque<HistogramMetric> histograms_;
  std::vector<Series> series_;
};

// The metrics of one operator subtask: labels operator="<name>", subtask="<i>".
class MetricGroup {
 public:
  MetricGroup() = default;
  MetricGroup(MetricsRegistry* registry, std::string op, uint32_t subtask)
      : registry_(registry), op_(std::move(op)), subtask_(subtask) {}

  // Both return a metric that is always valid (a shared sink metric without a registry).
  Metric* Counter(std::string_view name, std::string_view help) const;
  Metric* Gauge(std::string_view name, std::string_view help) const;
  HistogramMetric* Histogram(std::string_view name, std::string_view help,
                             const HistogramSpec& spec) const;
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
inline constexpr std::string_view kMetricRestoreMs = "flow_restore_duration_ms";
inline constexpr std::string_view kMetricRestarts = "flow_job_restarts_total";
// Records a window or join dropped because their windows had fired (exec/late_counter.h).
inline constexpr std::string_view kMetricLateRecordsDropped = "flow_late_records_dropped_total";
inline constexpr std::string_view kMetricReassignedRestarts = "flow_job_reassigned_restarts_total";
inline constexpr std::string_view kMetricKafkaRebalances = "flow_kafka_rebalances_total";
inline constexpr std::string_view kMetricKafkaAssignedPartitions = "flow_kafka_assigned_partitions";
inline constexpr std::string_view kMetricLatency = "flow_end_to_end_latency_seconds";
inline constexpr std::string_view kMetricKafkaLag = "flow_kafka_consumer_lag";
inline constexpr std::string_view kMetricCheckpointsCompleted = "flow_checkpoints_completed_total";
inline constexpr std::string_view kMetricCheckpointsFailed = "flow_checkpoints_failed_total";
// The help texts of the series several places register (one text per name: Prometheus's rule).
inline constexpr std::string_view kHelpRecordsIn = "Records received by an operator subtask";
inline constexpr std::string_view kHelpRecordsOut = "Records emitted by an operator subtask";
inline constexpr std::string_view kHelpWatermark = "Current input watermark (ms since epoch)";

// Milliseconds from 1 ms to ~17 min, rendered in seconds: checkpoint durations, latencies.
HistogramSpec DurationHistogramMs();
// The end-to-end latency of records reaching a sink subtask (now minus their event time), one
// observation per batch (its newest record): metrics without a cost per record.
HistogramMetric* LatencyHistogram(const MetricGroup& group);
// Observes now (wall clock) minus the event time of the last of the `n` records that has one
// (INT64_MIN: none; at most a few records are looked at). Event times ahead of the clock count 0.
void ObserveLatency(HistogramMetric* latency, const int64_t* event_times, size_t n);

}  // namespace flow::rt
