// Job::StatusJson: what the job page (job_page.cpp) shows, read from the graph, the metrics
// registry, the rates the monitor loop samples and the checkpoint history.

#include <map>
#include <optional>
#include <string>

#include "flow/runtime/engine/job.h"
#include "flow/runtime/formats/json_encoder.h"
#include "job_metrics.h"

namespace flow::rt {
namespace {

const char* PartitioningName(Partitioning p) {
  switch (p) {
    case Partitioning::kDefault:
      return "default";
    case Partitioning::kForward:
      return "forward";
    case Partitioning::kRebalance:
      return "rebalance";
    case Partitioning::kBroadcast:
      return "broadcast";
    case Partitioning::kHash:
      return "key";
  }
  return "unknown";
}

}  // namespace

std::string Job::StatusJson() {
  const Status ready = Readiness();
  using Totals = std::map<std::string, int64_t>;
  const Totals in = SumPerOperator(metrics_, kMetricRecordsIn),
               out = SumPerOperator(metrics_, kMetricRecordsOut),
               backpressure = SumPerOperator(metrics_, kMetricBackpressure),
               depth = SumPerOperator(metrics_, kMetricQueueDepth),
               capacity = SumPerOperator(metrics_, kMetricQueueCapacity),
               watermark = MinPerOperator(metrics_, kMetricWatermark);
  const std::map<std::string, OperatorRates::Rate> rates = rates_->Get();
  auto field = [](JsonEncoder& e, std::string_view key, const Totals& m, const std::string& op) {
    e.Key(key);
    auto it = m.find(op);
    if (it == m.end()) {
      e.Null();
    } else {
      e.Int(it->second);
    }
  };
  auto rate = [](JsonEncoder& e, std::string_view key, const std::optional<double>& v) {
    e.Key(key);
    if (v) {
      e.Float(*v);
    } else {
      e.Null();
    }
  };
  JsonEncoder e;
  e.BeginObject();
  e.Key("job");
  e.String(options_.job_id);
  if (!options_.instance.empty()) {
    e.Key("instance");  // one of several instances of the job (docs/deploy.md)
    e.String(options_.instance);
  }
  e.Key("ready");
  e.Bool(ready.ok());
  e.Key("status");
  e.String(ready.ok() ? "ready" : ready.message());
  e.Key("now_ms");
  e.Int(WallNowMs());
  e.Key("parallelism");
  e.Int(options_.parallelism);
  e.Key("restarts");
  e.Int(metrics_.Sum(kMetricRestarts));
  e.Key("operators");
  e.BeginArray();
  for (const auto& node : nodes_) {
    e.BeginObject();
    e.Key("name");
    e.String(node->name);
    e.Key("kind");
    e.String(node->kind());
    e.Key("parallelism");
    e.Int(node->parallelism);
    field(e, "records_in", in, node->name);
    field(e, "records_out", out, node->name);
    field(e, "backpressure_ms", backpressure, node->name);
    field(e, "queue_depth", depth, node->name);
    field(e, "queue_capacity", capacity, node->name);
    field(e, "watermark_ms", watermark, node->name);
    const auto r = rates.find(node->name);
    const OperatorRates::Rate none;
    const OperatorRates::Rate& per_second = r == rates.end() ? none : r->second;
    rate(e, "rate_in", per_second.in);
    rate(e, "rate_out", per_second.out);
    rate(e, "backpressure_ms_per_s", per_second.backpressure_ms);
    e.EndObject();
  }
  e.EndArray();
  e.Key("edges");
  e.BeginArray();
  for (const auto& edge : edges_) {
    e.BeginObject();
    e.Key("from");
    e.String(nodes_[edge->from]->name);
    e.Key("to");
    e.String(nodes_[edge->to]->name);
    e.Key("partitioning");
    e.String(PartitioningName(edge->kind));
    e.Key("key");
    e.String(edge->key_name);
    e.EndObject();
  }
  e.EndArray();
  e.Key("checkpoints");
  e.BeginObject();
  e.Key("completed");
  e.Int(metrics_.Sum(kMetricCheckpointsCompleted));
  e.Key("failed");
  e.Int(metrics_.Sum(kMetricCheckpointsFailed));
  e.Key("interval_ms");
  e.Int(options_.checkpoint.options.interval_ms);
  e.Key("history");
  e.BeginArray();
  for (const CheckpointMetrics::Entry& c : checkpoint_metrics_->History()) {
    e.BeginObject();
    e.Key("id");
    e.Int(c.id);
    e.Key("result");
    e.String(c.completed ? "completed" : c.reason);
    e.Key("duration_ms");
    e.Int(c.duration_ms);
    e.Key("bytes");
    e.Int(static_cast<int64_t>(c.bytes));
    e.Key("end_ms");
    e.Int(c.end_ms);
    e.EndObject();
  }
  e.EndArray();
  e.EndObject();
  e.EndObject();
  return std::string(e.view());
}

}  // namespace flow::rt
