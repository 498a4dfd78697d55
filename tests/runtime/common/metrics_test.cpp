// The metrics registry (runtime/src/common/metrics.cpp): the Prometheus text format of counters,
// gauges, callbacks and histograms, and series left out while their value is unknown.

#include "flow/runtime/common/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace flow::rt {
namespace {

TEST(MetricsRegistryTest, RendersPrometheusText) {
  MetricsRegistry r;
  MetricGroup g(&r, "win\"dow", 1);
  g.Counter("flow_records_in_total", "Records in")->Add(5);
  g.Counter("flow_records_in_total", "Records in")->Add(2);  // same series
  MetricGroup(&r, "src", 0).Counter("flow_records_in_total", "Records in")->Add(1);
  g.Gauge("flow_watermark_ms", "Watermark")->Set(-3);
  r.AddCallback("flow_input_queue_depth", "Depth", g.Labels(), [] { return int64_t{4}; });
  std::string text = r.RenderPrometheus();
  EXPECT_EQ(text,
            "# HELP flow_records_in_total Records in\n"
            "# TYPE flow_records_in_total counter\n"
            "flow_records_in_total{operator=\"win\\\"dow\",subtask=\"1\"} 7\n"
            "flow_records_in_total{operator=\"src\",subtask=\"0\"} 1\n"
            "# HELP flow_watermark_ms Watermark\n"
            "# TYPE flow_watermark_ms gauge\n"
            "flow_watermark_ms{operator=\"win\\\"dow\",subtask=\"1\"} -3\n"
            "# HELP flow_input_queue_depth Depth\n"
            "# TYPE flow_input_queue_depth gauge\n"
            "flow_input_queue_depth{operator=\"win\\\"dow\",subtask=\"1\"} 4\n");
  EXPECT_EQ(r.Sum("flow_records_in_total"), 8);
  r.ClearCallbacks();
  EXPECT_EQ(r.RenderPrometheus().find("flow_input_queue_depth"), std::string::npos);
}

// Expected text written out by hand from the exposition format: cumulative buckets, +Inf equal
// to _count, the sum in the rendered unit (observed in ms, rendered in seconds).
TEST(MetricsRegistryTest, RendersHistograms) {
  MetricsRegistry r;
  HistogramMetric* h =
      r.Histogram("flow_x_seconds", "X", {{"operator", "sink"}}, HistogramSpec{{10, 100}, 1000});
  for (int64_t v : {5, 10, 50, 500}) h->Observe(v);
  EXPECT_EQ(r.RenderPrometheus(),
            "# HELP flow_x_seconds X\n"
            "# TYPE flow_x_seconds histogram\n"
            "flow_x_seconds_bucket{operator=\"sink\",le=\"0.01\"} 2\n"
            "flow_x_seconds_bucket{operator=\"sink\",le=\"0.1\"} 3\n"
            "flow_x_seconds_bucket{operator=\"sink\",le=\"+Inf\"} 4\n"
            "flow_x_seconds_sum{operator=\"sink\"} 0.565\n"
            "flow_x_seconds_count{operator=\"sink\"} 4\n");
  // The same name and labels give the same histogram; without labels only "le" is rendered.
  EXPECT_EQ(
      r.Histogram("flow_x_seconds", "X", {{"operator", "sink"}}, HistogramSpec{{10, 100}, 1000}),
      h);
  MetricsRegistry bare;
  bare.Histogram("flow_bytes", "B", {}, HistogramSpec{{1024}, 1})->Observe(4096);
  EXPECT_EQ(bare.RenderPrometheus(),
            "# HELP flow_bytes B\n# TYPE flow_bytes histogram\n"
            "flow_bytes_bucket{le=\"1024\"} 0\nflow_bytes_bucket{le=\"+Inf\"} 1\n"
            "flow_bytes_sum 4096\nflow_bytes_count 1\n");
}

TEST(MetricsRegistryTest, UnknownValuesAreLeftOut) {
  MetricsRegistry r;
  Metric* wm = r.Gauge("flow_watermark_ms", "W", {{"operator", "a"}});
  r.AddDoubleCallback("flow_age_seconds", "A", {}, [] { return std::nan(""); });
  r.AddCallback("flow_depth", "D", {}, [] { return kMetricAbsent; });
  // A gauge is absent until set, and its whole family with it (no header without a series).
  EXPECT_EQ(r.RenderPrometheus(), "");
  wm->Set(1700000000000);
  EXPECT_EQ(r.RenderPrometheus(),
            "# HELP flow_watermark_ms W\n# TYPE flow_watermark_ms gauge\n"
            "flow_watermark_ms{operator=\"a\"} 1700000000000\n");
  // The end-of-input watermark is no time either.
  wm->Set(std::numeric_limits<int64_t>::max());
  EXPECT_EQ(r.RenderPrometheus(), "");
  // Counters start at 0 and are always shown; fractional values keep their fraction.
  r.Counter("flow_n_total", "N", {});
  r.AddDoubleCallback(
      "process_cpu_seconds_total", "C", {}, [] { return 1.25; }, MetricType::kCounter);
  EXPECT_EQ(r.RenderPrometheus(),
            "# HELP flow_n_total N\n# TYPE flow_n_total counter\nflow_n_total 0\n"
            "# HELP process_cpu_seconds_total C\n# TYPE process_cpu_seconds_total counter\n"
            "process_cpu_seconds_total 1.25\n");
}

}  // namespace
}  // namespace flow::rt
