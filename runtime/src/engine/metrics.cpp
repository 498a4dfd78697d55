#include "flow/runtime/engine/metrics.h"

#include <algorithm>
#include <limits>

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
}  // namespace

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
  series_.push_back(Series{std::string(name), std::string(help), type, rendered, &storage_.back(), {}});
  return &storage_.back();
}

Metric* MetricsRegistry::Counter(std::string_view name, std::string_view help, const MetricLabels& labels) {
  return Get(name, help, MetricType::kCounter, labels);
}

Metric* MetricsRegistry::Gauge(std::string_view name, std::string_view help, const MetricLabels& labels) {
  return Get(name, help, MetricType::kGauge, labels);
}

void MetricsRegistry::AddCallback(std::string_view name, std::string_view help,
                                  const MetricLabels& labels, std::function<int64_t()> fn, MetricType type) {
  std::string rendered = RenderLabels(labels);
  std::lock_guard<std::mutex> lock(mu_);
  series_.push_back(Series{std::string(name), std::string(help), type, rendered, nullptr, std::move(fn)});
}

void MetricsRegistry::ClearCallbacks() {
  std::lock_guard<std::mutex> lock(mu_);
  series_.erase(std::remove_if(series_.begin(), series_.end(), [](const Series& s) { return !s.metric; }),
                series_.end());
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
      if (!header) {
        out += "# HELP " + name + " " + s.help + "\n";
        out += "# TYPE " + name + (s.type == MetricType::kCounter ? " counter\n" : " gauge\n");
        header = true;
      }
      out += name + s.labels + " " + std::to_string(ValueOf(s)) + "\n";
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

MetricLabels MetricGroup::Labels() const {
  return {{"operator", op_}, {"subtask", std::to_string(subtask_)}};
}

Metric* MetricGroup::Counter(std::string_view name, std::string_view help) {
  return registry_ ? registry_->Counter(name, help, Labels()) : Discarded();
}

Metric* MetricGroup::Gauge(std::string_view name, std::string_view help) {
  return registry_ ? registry_->Gauge(name, help, Labels()) : Discarded();
}

}  // namespace flow::rt
