#include "job_metrics.h"

#include <sys/resource.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace flow::rt {
namespace {

// Bytes, 1 KiB .. 64 GiB in powers of 4.
HistogramSpec SizeHistogram() {
  HistogramSpec spec;
  for (int64_t b = 1024; b <= (int64_t{64} << 30); b *= 4) spec.bounds.push_back(b);
  return spec;
}

constexpr double kNone = std::numeric_limits<double>::quiet_NaN();

// Fields 3.. of /proc/self/stat (after the command name, which may hold spaces and parentheses):
// fields[0] is field 3 (state). Empty when unreadable.
std::vector<std::string> StatFields() {
  std::ifstream in("/proc/self/stat");
  std::string line;
  if (!std::getline(in, line)) return {};
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream rest(line.substr(close + 1));
  std::vector<std::string> fields;
  for (std::string f; rest >> f;) fields.push_back(f);
  return fields;
}

// Field `n` (1-based, as in proc(5)) of /proc/self/stat as a number; NaN when missing.
double StatField(int n) {
  std::vector<std::string> f = StatFields();
  const size_t i = static_cast<size_t>(n - 3);
  if (n < 3 || i >= f.size()) return kNone;
  try {
    return std::stod(f[i]);
  } catch (...) {
    return kNone;
  }
}

// Boot time (seconds since the epoch), from /proc/stat's btime; NaN when missing.
double BootTimeSeconds() {
  std::ifstream in("/proc/stat");
  for (std::string key; in >> key;) {
    if (key == "btime") {
      double v = 0;
      return in >> v ? v : kNone;
    }
    in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return kNone;
}

}  // namespace

CheckpointMetrics::CheckpointMetrics(MetricsRegistry* registry)
    : registry_(registry),
      completed_(registry->Counter(kMetricCheckpointsCompleted,
                                   "Checkpoints (and savepoints) completed", {})),
      last_size_(registry->Gauge("flow_last_checkpoint_size_bytes",
                                 "Size of the last completed checkpoint", {})),
      duration_(registry->Histogram("flow_checkpoint_duration_seconds",
                                    "Time from a completed checkpoint's trigger to its completion",
                                    {}, DurationHistogramMs())),
      size_(registry->Histogram("flow_checkpoint_size_bytes",
                                "Bytes written by a completed checkpoint", {}, SizeHistogram())) {}

void CheckpointMetrics::Report(const CheckpointReport& r) {
  if (r.completed || r.reason != CheckpointFailureReason::kSubsumed) {
    std::lock_guard<std::mutex> lock(mu_);
    history_.push_back(Entry{r.checkpoint_id, r.completed,
                             r.completed ? "" : CheckpointFailureReasonName(r.reason),
                             r.duration_ms, r.bytes, WallNowMs()});
    if (history_.size() > kHistory) history_.pop_front();
  }
  if (r.completed) {
    completed_->Add(1);
    duration_->Observe(r.duration_ms);
    size_->Observe(static_cast<int64_t>(r.bytes));
    last_size_->Set(static_cast<int64_t>(r.bytes));
    last_completed_ms_.store(WallNowMs(), std::memory_order_relaxed);
    return;
  }
  // Refused triggers, subsumed checkpoints and shutdown say nothing about the job's health.
  if (!CountsAsFailure(r.reason)) return;
  registry_
      ->Counter(kMetricCheckpointsFailed, "Checkpoints that failed, by reason",
                {{"reason", CheckpointFailureReasonName(r.reason)}})
      ->Add(1);
}

std::vector<CheckpointMetrics::Entry> CheckpointMetrics::History() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {history_.begin(), history_.end()};
}

void CheckpointMetrics::AddCallbacks() {
  registry_->AddDoubleCallback(
      "flow_last_checkpoint_age_seconds",
      "Time since the last checkpoint completed (absent before the first)", {}, [this] {
        const int64_t at = last_completed_ms_.load(std::memory_order_relaxed);
        return at == 0 ? kNone : static_cast<double>(WallNowMs() - at) / 1000.0;
      });
}

void AddProcessMetrics(MetricsRegistry* registry) {
  static const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  static const double page = static_cast<double>(::sysconf(_SC_PAGESIZE));
  static const double boot = BootTimeSeconds();
  // getrusage: microseconds, where /proc/self/stat counts 10 ms clock ticks.
  registry->AddDoubleCallback(
      "process_cpu_seconds_total", "User and system CPU time spent by the process", {},
      [] {
        rusage u{};
        if (::getrusage(RUSAGE_SELF, &u) != 0) return kNone;
        auto seconds = [](const timeval& t) {
          return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6;
        };
        return seconds(u.ru_utime) + seconds(u.ru_stime);
      },
      MetricType::kCounter);
  registry->AddDoubleCallback("process_resident_memory_bytes", "Resident memory size", {},
                              [] { return StatField(24) * page; });
  registry->AddDoubleCallback("process_virtual_memory_bytes", "Virtual memory size", {},
                              [] { return StatField(23); });
  registry->AddDoubleCallback("process_threads", "Threads of the process", {},
                              [] { return StatField(20); });
  registry->AddDoubleCallback("process_start_time_seconds",
                              "Start time of the process since the Unix epoch", {},
                              [] { return boot + StatField(22) / ticks; });
  registry->AddDoubleCallback("process_open_fds", "Open file descriptors", {}, [] {
    std::error_code ec;
    double n = 0;
    for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end;
         it.increment(ec))
      ++n;
    return ec ? kNone : n - 1;  // less the descriptor reading the directory
  });
  registry->AddDoubleCallback("process_max_fds", "Limit of open file descriptors", {}, [] {
    rlimit r{};
    if (::getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return kNone;
    return static_cast<double>(r.rlim_cur);
  });
}

namespace {

std::map<std::string, int64_t> PerOperator(const MetricsRegistry& registry, std::string_view name,
                                           bool min) {
  std::map<std::string, int64_t> out;
  for (const auto& [labels, v] : registry.Values(name)) {
    auto op = std::find_if(labels.begin(), labels.end(),
                           [](const auto& l) { return l.first == "operator"; });
    if (op == labels.end()) continue;
    auto [it, fresh] = out.emplace(op->second, v);
    if (!fresh) it->second = min ? std::min(it->second, v) : it->second + v;
  }
  return out;
}

}  // namespace

std::map<std::string, int64_t> SumPerOperator(const MetricsRegistry& registry,
                                              std::string_view name) {
  return PerOperator(registry, name, false);
}

std::map<std::string, int64_t> MinPerOperator(const MetricsRegistry& registry,
                                              std::string_view name) {
  return PerOperator(registry, name, true);
}

void OperatorRates::Sample(const MetricsRegistry& registry, int64_t now_ms) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (last_ms_ != 0 && now_ms - last_ms_ < 1000) return;
  }
  Totals now{SumPerOperator(registry, kMetricRecordsIn),
             SumPerOperator(registry, kMetricRecordsOut),
             SumPerOperator(registry, kMetricBackpressure)};
  std::lock_guard<std::mutex> lock(mu_);
  if (last_ms_ != 0) {
    const double seconds = static_cast<double>(now_ms - last_ms_) / 1000.0;
    rates_.clear();
    // Operators in both samples get a rate; the others stay unknown.
    auto fill = [&](const std::map<std::string, int64_t>& now_totals,
                    const std::map<std::string, int64_t>& last_totals,
                    std::optional<double> Rate::*field) {
      for (const auto& [op, v] : now_totals) {
        auto before = last_totals.find(op);
        if (before == last_totals.end()) continue;
        rates_[op].*field = static_cast<double>(std::max<int64_t>(0, v - before->second)) / seconds;
      }
    };
    fill(now.in, last_.in, &Rate::in);
    fill(now.out, last_.out, &Rate::out);
    fill(now.backpressure, last_.backpressure, &Rate::backpressure_ms);
  }
  last_ = std::move(now);
  last_ms_ = now_ms;
}

std::map<std::string, OperatorRates::Rate> OperatorRates::Get() const {
  std::lock_guard<std::mutex> lock(mu_);
  return rates_;
}

SubtaskSeries::SubtaskSeries(MetricsRegistry* registry, const std::string& op, uint32_t subtask)
    : registry_(registry), labels_(MetricGroup(registry, op, subtask).Labels()) {}

// The first registration of a name sets its # HELP line; drivers register the same texts.
Metric* SubtaskSeries::RecordsIn() {
  return registry_->Counter(kMetricRecordsIn, kHelpRecordsIn, labels_);
}
Metric* SubtaskSeries::RecordsOut() {
  return registry_->Counter(kMetricRecordsOut, kHelpRecordsOut, labels_);
}
Metric* SubtaskSeries::Watermark() {
  return registry_->Gauge(kMetricWatermark, kHelpWatermark, labels_);
}
Metric* SubtaskSeries::AlignmentMs() {
  return registry_->Gauge(kMetricAlignmentMs,
                          "Duration of the last checkpoint barrier alignment (ms)", labels_);
}
Metric* SubtaskSeries::RestoreMs() {
  return registry_->Gauge(kMetricRestoreMs,
                          "How long the subtask's last start from a checkpoint took to open its "
                          "operators and restore their state (ms)",
                          labels_);
}

namespace {
// The sum of `of(channel)` over the gate's channels.
template <typename Of>
int64_t OverChannels(InputGate* gate, Of of) {
  int64_t sum = 0;
  for (size_t i = 0; i < gate->size(); ++i) sum += static_cast<int64_t>(of(*gate->channel(i)));
  return sum;
}
}  // namespace

void SubtaskSeries::AddInputGate(InputGate* gate, std::atomic<int64_t>* before) {
  registry_->AddCallback(
      kMetricQueueDepth, "Elements queued in a subtask's input channels", labels_,
      [gate] { return OverChannels(gate, [](ChannelBase& c) { return c.Depth(); }); });
  registry_->AddCallback(
      kMetricQueueCapacity, "Capacity of a subtask's input channels (elements)", labels_,
      [gate] { return OverChannels(gate, [](ChannelBase& c) { return c.capacity(); }); });
  registry_->AddCallback(
      kMetricBackpressure, "Time upstream writers waited on this subtask's full input channels",
      labels_, [gate, before] { return before->load() + BlockedMs(gate); }, MetricType::kCounter);
}

int64_t BlockedMs(InputGate* gate) {
  return OverChannels(gate, [](ChannelBase& c) { return c.BlockedNanos(); }) / 1000000;
}

int64_t SumOf(const std::vector<Metric*>& metrics) {
  int64_t s = 0;
  for (Metric* m : metrics) s += m->value();
  return s;
}

}  // namespace flow::rt
