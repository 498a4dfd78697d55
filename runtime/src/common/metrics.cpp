#include "flow/runtime/common/metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "flow/runtime/common/time.h"

namespace flow::rt {
namespace {
std::string EscapeLabel(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out.push_back('\\');
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out.push_back(c);
  }
  return out;
}
Metric* Discarded() {
  static Metric metric;
  return &metric;
}
// Prometheus floats: shortest round-trip form; +Inf spelled as the format wants.
std::string FormatDouble(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);
}
// `labels` ({a="b"} or "") with one more label appended.
std::string WithLabel(const std::string& labels, std::string_view name, const std::string& value) {
  std::string extra = fmt::format("{}=\"{}\"", name, value);
  if (labels.empty()) return "{" + extra + "}";
  return labels.substr(0, labels.size() - 1) + "," + extra + "}";
}
}  // namespace

HistogramMetric::HistogramMetric(HistogramSpec spec)
    : spec_(std::move(spec)), buckets_(new std::atomic<int64_t>[spec_.bounds.size() + 1]) {
  for (size_t i = 0; i <= spec_.bounds.size(); ++i) buckets_[i].store(0, std::memory_order_relaxed);
}

void HistogramMetric::Observe(int64_t value) {
  // Few buckets: a linear scan beats a binary search and stays branch-predictable.
  size_t i = 0;
  while (i < spec_.bounds.size() && value > spec_.bounds[i]) ++i;
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
}

HistogramSpec DurationHistogramMs() {
  HistogramSpec spec;
  spec.per_unit = 1000;
  for (int64_t b = 1; b <= 1024 * 1024; b *= 4) spec.bounds.push_back(b);  // 1 ms .. ~17.5 min
  return spec;
}

void ObserveLatency(HistogramMetric* latency, const int64_t* event_times, size_t n) {
  // Records without event time (processing-time jobs) are common: give up after a few.
  for (size_t k = 0; k < n && k < 8; ++k) {
    const int64_t ts = event_times[n - 1 - k];
    if (ts == kMetricAbsent) continue;
    latency->Observe(std::max<int64_t>(0, WallNowMs() - ts));
    return;
  }
}

HistogramMetric* LatencyHistogram(const MetricGroup& group) {
  return group.Histogram(kMetricLatency,
                         "Time from a record's event time until it reached this sink subtask "
                         "(one observation per batch, its newest record)",
                         DurationHistogramMs());
}

std::string MetricsRegistry::RenderLabels(const MetricLabels& labels) {
  if (labels.empty()) return "";
  std::string out = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i) out += ",";
    out += labels[i].first + "=\"" + EscapeLabel(labels[i].second) + "\"";
  }
  return out + "}";
}

Metric* MetricsRegistry::Get(std::string_view name, std::string_view help, MetricType type,
                             const MetricLabels& labels) {
  std::string rendered = RenderLabels(labels);
  std::lock_guard<std::mutex> lock(mu_);
  for (const Series& s : series_) {
    if (s.metric && s.name == name && s.labels == rendered) return s.metric;
  }
  storage_.emplace_back();
  if (type == MetricType::kGauge) storage_.back().Set(kMetricAbsent);  // not measured yet
  Series s = MakeSeries(name, help, type, labels);
  s.metric = &storage_.back();
  series_.push_back(std::move(s));
  return &storage_.back();
}

Metric* MetricsRegistry::Counter(std::string_view name, std::string_view help,
                                 const MetricLabels& labels) {
  return Get(name, help, MetricType::kCounter, labels);
}

Metric* MetricsRegistry::Gauge(std::string_view name, std::string_view help,
                               const MetricLabels& labels) {
  return Get(name, help, MetricType::kGauge, labels);
}

void MetricsRegistry::AddCallback(std::string_view name, std::string_view help,
                                  const MetricLabels& labels, std::function<int64_t()> fn,
                                  MetricType type) {
  std::lock_guard<std::mutex> lock(mu_);
  Series s = MakeSeries(name, help, type, labels);
  s.callback = std::move(fn);
  series_.push_back(std::move(s));
}

void MetricsRegistry::AddDoubleCallback(std::string_view name, std::string_view help,
                                        const MetricLabels& labels, std::function<double()> fn,
                                        MetricType type) {
  std::lock_guard<std::mutex> lock(mu_);
  Series s = MakeSeries(name, help, type, labels);
  s.double_callback = std::move(fn);
  series_.push_back(std::move(s));
}

HistogramMetric* MetricsRegistry::Histogram(std::string_view name, std::string_view help,
                                            const MetricLabels& labels, const HistogramSpec& spec) {
  std::string rendered = RenderLabels(labels);
  std::lock_guard<std::mutex> lock(mu_);
  for (const Series& s : series_) {
    if (s.histogram && s.name == name && s.labels == rendered) return s.histogram;
  }
  histograms_.emplace_back(spec);
  Series s = MakeSeries(name, help, MetricType::kGauge, labels);
  s.histogram = &histograms_.back();
  series_.push_back(std::move(s));
  return &histograms_.back();
}

void MetricsRegistry::ClearCallbacks() {
  std::lock_guard<std::mutex> lock(mu_);
  series_.erase(
      std::remove_if(series_.begin(), series_.end(), [](const Series& s) { return !s.owned(); }),
      series_.end());
}

int64_t MetricsRegistry::ValueOf(const Series& s) {
  if (s.metric) return s.metric->value();
  if (s.histogram) return s.histogram->count();
  if (s.double_callback) {
    double v = s.double_callback();
    return std::isnan(v) ? kMetricAbsent : static_cast<int64_t>(v);
  }
  return s.callback();
}

void MetricsRegistry::RenderHistogram(const Series& s, std::string* out) {
  const HistogramMetric& h = *s.histogram;
  const HistogramSpec& spec = h.spec();
  // Read the buckets first and derive the count from them, so that +Inf equals _count even
  // while observations arrive during the scrape.
  const double per_unit = static_cast<double>(spec.per_unit);
  int64_t cumulative = 0;
  for (size_t i = 0; i <= spec.bounds.size(); ++i) {
    cumulative += h.bucket(i);
    const double le = i < spec.bounds.size() ? static_cast<double>(spec.bounds[i]) / per_unit
                                             : std::numeric_limits<double>::infinity();
    *out += s.name + "_bucket" + WithLabel(s.labels, "le", FormatDouble(le)) + " " +
            std::to_string(cumulative) + "\n";
  }
  *out += s.name + "_sum" + s.labels + " " + FormatDouble(static_cast<double>(h.sum()) / per_unit) +
          "\n";
  *out += s.name + "_count" + s.labels + " " + std::to_string(cumulative) + "\n";
}

std::string MetricsRegistry::RenderPrometheus() const {
  std::lock_guard<std::mutex> lock(mu_);
  // Group series by name, keeping first-registration order, so each family has one header.
  std::vector<std::string> names;
  for (const Series& s : series_) {
    if (std::find(names.begin(), names.end(), s.name) == names.end()) names.push_back(s.name);
  }
  std::string out;
  for (const std::string& name : names) {
    bool header = false;
    for (const Series& s : series_) {
      if (s.name != name) continue;
      std::string value;
      if (s.double_callback) {
        const double v = s.double_callback();
        if (std::isnan(v)) continue;
        value = FormatDouble(v);
      } else if (!s.histogram) {
        const int64_t v = ValueOf(s);
        if (Absent(s, v)) continue;
        value = std::to_string(v);
      }
      if (!header) {
        out += "# HELP " + name + " " + s.help + "\n";
        const char* type = s.histogram                      ? " histogram\n"
                           : s.type == MetricType::kCounter ? " counter\n"
                                                            : " gauge\n";
        out += "# TYPE " + name + type;
        header = true;
      }
      if (s.histogram) {
        RenderHistogram(s, &out);
      } else {
        out += name + s.labels + " " + value + "\n";
      }
    }
  }
  return out;
}

int64_t MetricsRegistry::Sum(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t total = 0;
  for (const Series& s : series_) {
    if (s.name == name) total += ValueOf(s);
  }
  return total;
}

int64_t MetricsRegistry::Min(std::string_view name, int64_t fallback) const {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t low = std::numeric_limits<int64_t>::max();
  bool any = false;
  for (const Series& s : series_) {
    if (s.name != name) continue;
    low = std::min(low, ValueOf(s));
    any = true;
  }
  return any ? low : fallback;
}

MetricsRegistry::Series MetricsRegistry::MakeSeries(std::string_view name, std::string_view help,
                                                    MetricType type, const MetricLabels& labels) {
  Series s;
  s.name = std::string(name);
  s.help = std::string(help);
  s.type = type;
  s.labels = RenderLabels(labels);
  s.label_list = labels;
  return s;
}

std::vector<std::pair<MetricLabels, int64_t>> MetricsRegistry::Values(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::pair<MetricLabels, int64_t>> out;
  for (const Series& s : series_) {
    if (s.name != name) continue;
    const int64_t v = ValueOf(s);
    if (!Absent(s, v)) out.emplace_back(s.label_list, v);
  }
  return out;
}

bool MetricsRegistry::Absent(const Series& s, int64_t value) {
  // The int64 extremes are the engine's "none yet" and "ended" (watermarks), not values.
  return s.type == MetricType::kGauge && !s.histogram &&
         (value == kMetricAbsent || value == std::numeric_limits<int64_t>::max());
}

MetricLabels MetricGroup::Labels() const {
  return {{"operator", op_}, {"subtask", std::to_string(subtask_)}};
}

Metric* MetricGroup::Counter(std::string_view name, std::string_view help) const {
  return registry_ ? registry_->Counter(name, help, Labels()) : Discarded();
}

Metric* MetricGroup::Gauge(std::string_view name, std::string_view help) const {
  return registry_ ? registry_->Gauge(name, help, Labels()) : Discarded();
}

HistogramMetric* MetricGroup::Histogram(std::string_view name, std::string_view help,
                                        const HistogramSpec& spec) const {
  if (registry_) return registry_->Histogram(name, help, Labels(), spec);
  static HistogramMetric discarded{HistogramSpec{}};  // one bucket; written, never read
  return &discarded;
}

}  // namespace flow::rt
