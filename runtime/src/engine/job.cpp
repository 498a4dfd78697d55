// Building a job: its graph of operators and edges, then per run the channels, chains and tasks
// (Build). Running it, with restarts, is job_run.cpp's.
#include "flow/runtime/engine/job.h"

#include "job_metrics.h"
#include "job_runtime.h"

#include <algorithm>

#include <fmt/format.h>

#include "flow/runtime/log/log.h"
#include "flow/runtime/state/keyed_state_backend.h"

namespace flow::rt {

KeyGroupRange KeyGroupsOfSubtask(uint32_t subtask, uint32_t parallelism, uint32_t max_parallelism) {
  KeyGroupRange r{max_parallelism, max_parallelism};
  bool found = false;
  for (uint32_t g = 0; g < max_parallelism; ++g) {
    if (SubtaskForKeyGroup(g, max_parallelism, parallelism) != subtask) continue;
    if (!found) r.first = g;
    found = true;
    r.end = g + 1;
  }
  if (!found) r.first = r.end = 0;
  return r;
}

Job::Job(JobOptions options)
    : options_(std::move(options)),
      checkpoint_metrics_(std::make_unique<CheckpointMetrics>(&metrics_)),
      rates_(std::make_unique<OperatorRates>()) {
  if (options_.parallelism == 0) options_.parallelism = 1;
}

Job::~Job() = default;

int Job::AddNode(std::unique_ptr<engine_detail::NodeBase> node, std::string name,
                 uint32_t parallelism) {
  node->name = std::move(name);
  node->parallelism = parallelism == 0 ? options_.parallelism : parallelism;
  if (node->parallelism > options_.max_parallelism && build_status_.ok()) {
    build_status_ = Status::InvalidArgument(
        fmt::format("operator '{}': parallelism {} exceeds the maximum {}", node->name,
                    node->parallelism, options_.max_parallelism));
  }
  for (const auto& other : nodes_) {
    // Snapshots, restores and metrics are keyed by operator name.
    if (other->name == node->name && build_status_.ok()) {
      build_status_ = Status::Internal(fmt::format("two operators named '{}'", node->name));
    }
  }
  nodes_.push_back(std::move(node));
  return static_cast<int>(nodes_.size() - 1);
}

void Job::SetStateSchema(const std::string& name, std::vector<std::string> parts) {
  state_schemas_ = true;
  for (auto& node : nodes_) {
    if (node->name != name) continue;
    node->state_schema = std::move(parts);
    return;
  }
  if (build_status_.ok()) {
    build_status_ = Status::Internal(
        fmt::format("a state schema for operator '{}', which the job does not have", name));
  }
}

void Job::AddEdgeBase(std::unique_ptr<engine_detail::EdgeBase> edge) {
  if (edge->from < 0 || edge->from >= edge->to) {
    if (build_status_.ok())
      build_status_ = Status::Internal("edge does not point forward in the graph");
    return;
  }
  nodes_[edge->from]->out_edges.push_back(static_cast<int>(edges_.size()));
  nodes_[edge->to]->in_edges.push_back(static_cast<int>(edges_.size()));
  edges_.push_back(std::move(edge));
}

Status Job::Build(Runtime* rt) {
  FLOW_RETURN_IF_ERROR(build_status_);
  if (nodes_.empty()) return Status::InvalidArgument("the job has no sources");
  if (options_.batch_size == 0) return Status::InvalidArgument("batch size must be at least 1");
  if (options_.max_parallelism == 0)
    return Status::InvalidArgument("max parallelism must be at least 1");
  // Keyed operators build their backends with these when they open.
  auto kind = ParseStateBackendKind(options_.state_backend);
  if (!kind.ok())
    return Status(kind.status().code(), "--state-backend: " + kind.status().message());
  auto state_backend = std::make_shared<StateBackendOptions>();
  state_backend->kind = *kind;
  state_backend->local_dir = options_.state_local_dir;
  if (options_.state_cache_entries > 0)
    state_backend->cache_entries = static_cast<size_t>(options_.state_cache_entries);
  state_backend_ = std::move(state_backend);
  const size_t n = nodes_.size();
  const uint32_t maxp = options_.max_parallelism;
  for (auto& e : edges_) {
    auto& up = *nodes_[e->from];
    auto& down = *nodes_[e->to];
    if (e->kind == Partitioning::kDefault) {
      e->kind =
          up.parallelism == down.parallelism ? Partitioning::kForward : Partitioning::kRebalance;
    }
    if (e->kind == Partitioning::kForward && up.parallelism != down.parallelism) {
      return Status::InvalidArgument(
          fmt::format("edge '{}' -> '{}': forward needs equal parallelism ({} vs {})", up.name,
                      down.name, up.parallelism, down.parallelism));
    }
  }
  FLOW_RETURN_IF_ERROR(CheckInstancePlan());
  std::vector<bool> chained(n, false);
  std::vector<int> head(n);
  for (size_t v = 0; v < n; ++v) {
    auto& node = *nodes_[v];
    if (!node.is_source && node.in_edges.empty()) {
      return Status::Internal(fmt::format("operator '{}' has no input", node.name));
    }
    chained[v] = options_.chaining && !node.is_source && node.in_edges.size() == 1 &&
                 edges_[node.in_edges[0]]->kind == Partitioning::kForward;
    head[v] = chained[v] ? head[edges_[node.in_edges[0]]->from] : static_cast<int>(v);
  }

  // Gates of input tasks, and the channels of every edge that crosses threads.
  std::vector<std::vector<std::unique_ptr<InputGate>>> gates(n);
  struct GateEntry {
    int edge;
    ChannelBase* channel;
  };
  std::vector<std::vector<std::vector<GateEntry>>> gate_entries(n);
  // writer_channels[e][i] = channels written by upstream subtask i of edge e, by downstream
  // subtask.
  std::vector<std::vector<std::vector<ChannelBase*>>> writer_channels(edges_.size());
  for (size_t v = 0; v < n; ++v) {
    if (head[v] != static_cast<int>(v) || nodes_[v]->is_source) continue;
    for (uint32_t j = 0; j < nodes_[v]->parallelism; ++j)
      gates[v].push_back(std::make_unique<InputGate>());
    gate_entries[v].resize(nodes_[v]->parallelism);
  }
  for (size_t ei = 0; ei < edges_.size(); ++ei) {
    auto& e = *edges_[ei];
    if (chained[e.to]) continue;
    uint32_t up_p = nodes_[e.from]->parallelism;
    uint32_t down_p = nodes_[e.to]->parallelism;
    writer_channels[ei].resize(up_p);
    for (uint32_t i = 0; i < up_p; ++i) {
      for (uint32_t j = 0; j < down_p; ++j) {
        if (e.kind == Partitioning::kForward && i != j) continue;
        InputGate* gate = gates[e.to][j].get();
        rt->channels.push_back(e.MakeChannel(gate, options_.channel_capacity));
        ChannelBase* c = rt->channels.back().get();
        gate->Add(c);
        gate_entries[e.to][j].push_back(GateEntry{static_cast<int>(ei), c});
        writer_channels[ei][i].push_back(c);
      }
    }
  }

  Clock* clock = options_.clock ? options_.clock.get() : DefaultClock();
  // Processing-time timers, one TaskTimers per task (by head node and subtask), made on first use.
  std::vector<std::vector<std::unique_ptr<TaskTimers>>> task_timers(n);
  auto timers_of = [&](size_t head_node, uint32_t j) {
    auto& slot = task_timers[head_node];
    if (slot.empty()) slot.resize(nodes_[head_node]->parallelism);
    if (!slot[j]) slot[j] = std::make_unique<TaskTimers>(clock);
    return slot[j].get();
  };
  // Instances with a shared state root adopt their repartition partitions' state each run.
  const bool any_reader = std::any_of(nodes_.begin(), nodes_.end(),
                                      [](const auto& node) { return node->shuffle_reader; });
  if (any_reader && !options_.instance.empty() && !options_.state_root.empty()) {
    rt->adoption = std::make_unique<StateAdoption>(options_.instance, options_.state_root, maxp);
    for (const auto& node : nodes_) {
      if (node->shuffle_reader) rt->adoption->Expect(node->name, node->parallelism);
    }
  }
  // The repartition source a keyed node reads through its key-by; "" when none.
  auto reader_of = [&](size_t v) -> std::string {
    for (int e : nodes_[v]->in_edges) {
      const auto& edge = *edges_[e];
      if (edge.kind == Partitioning::kHash && nodes_[edge.from]->shuffle_reader)
        return nodes_[edge.from]->name;
    }
    return "";
  };
  auto make_ctx = [&](size_t v, uint32_t j) {
    OperatorContext ctx;
    ctx.name = nodes_[v]->name;
    ctx.subtask = j;
    ctx.parallelism = nodes_[v]->parallelism;
    ctx.max_parallelism = maxp;
    ctx.key_groups = KeyGroupsOfSubtask(j, ctx.parallelism, maxp);
    ctx.keyed_input = !nodes_[v]->in_edges.empty() &&
                      std::all_of(nodes_[v]->in_edges.begin(), nodes_[v]->in_edges.end(),
                                  [&](int e) { return edges_[e]->kind == Partitioning::kHash; });
    ctx.metrics = MetricGroup(&metrics_, ctx.name, j);
    ctx.params = &options_.params;
    ctx.clock = clock;
    ctx.cancel = &control_.cancel;
    ctx.state_dir = options_.checkpoint.state_dir;
    ctx.kafka_properties = &options_.kafka_properties;
    ctx.job_id = options_.job_id;
    ctx.instance = options_.instance;
    ctx.handover = &handover_;
    ctx.state_backend = state_backend_.get();
    ctx.split_times = &rt->split_times;
    if (rt->adoption) {
      ctx.adoption = rt->adoption.get();
      if (ctx.keyed_input) ctx.shuffle_reader = reader_of(v);
    }
    return ctx;
  };
  auto own = [&](std::unique_ptr<Consumer> c) {
    rt->consumers.push_back(std::move(c));
    return rt->consumers.back().get();
  };

  // Drivers and outputs, downstream first so chained targets exist when their upstream is built.
  std::vector<std::vector<Consumer*>> driver(n), output(n);
  std::vector<std::vector<std::vector<Consumer*>>> members(n);  // by head node and subtask
  for (size_t v = 0; v < n; ++v) members[v].resize(nodes_[v]->parallelism);
  for (size_t vi = n; vi-- > 0;) {
    auto& node = *nodes_[vi];
    driver[vi].resize(node.parallelism, nullptr);
    output[vi].resize(node.parallelism, nullptr);
    const bool is_sink = node.is_sink;
    for (uint32_t j = 0; j < node.parallelism; ++j) {
      auto& mine = members[head[vi]][j];
      Consumer* out = nullptr;
      if (!is_sink) {
        std::vector<Consumer*> targets;
        for (int ei : node.out_edges) {
          auto& e = *edges_[ei];
          if (chained[e.to]) {
            targets.push_back(nodes_[e.to]->InputOf(driver[e.to][j], e.input_index));
          } else {
            Consumer* w = own(e.MakeWriter(writer_channels[ei][j], j, maxp, options_.batch_size));
            mine.push_back(w);
            targets.push_back(w);
          }
        }
        if (targets.size() == 1) {
          out = targets[0];
        } else {
          out = own(node.MakeOutput(std::move(targets)));
          mine.push_back(out);
        }
      }
      output[vi][j] = out;
      if (!node.is_source) {
        OperatorContext ctx = make_ctx(vi, j);
        TaskTimers* timers = is_sink ? nullptr : timers_of(head[vi], j);
        if (timers != nullptr) ctx.timers = timers->NewService();
        ProcessingTimeService* service = ctx.timers;
        driver[vi][j] = own(node.MakeDriver(std::move(ctx), out, options_.batch_size));
        if (timers != nullptr) timers->Bind(service, driver[vi][j]);
        mine.push_back(driver[vi][j]);
      }
    }
    if (is_sink) {
      for (uint32_t j = 0; j < node.parallelism; ++j) {
        SubtaskSeries series(&metrics_, node.name, j);
        rt->sink_in.push_back(series.RecordsIn());
        rt->sink_watermark.push_back(series.Watermark());
      }
    }
  }

  // One task per chain head subtask.
  for (size_t v = 0; v < n; ++v) {
    if (head[v] != static_cast<int>(v)) continue;
    auto& node = *nodes_[v];
    for (uint32_t j = 0; j < node.parallelism; ++j) {
      std::unique_ptr<Task> task;
      SubtaskSeries series(&metrics_, node.name, j);
      if (node.is_source) {
        task = node.MakeSourceTask(make_ctx(v, j), output[v][j], options_.batch_size, &control_);
        rt->source_out.push_back(series.RecordsOut());
      } else {
        std::vector<std::unique_ptr<ChannelBindingBase>> bindings;
        for (const GateEntry& ge : gate_entries[v][j]) {
          auto& e = *edges_[ge.edge];
          bindings.push_back(e.MakeBinding(ge.channel, node.InputOf(driver[v][j], e.input_index)));
        }
        InputGate* gate = gates[v][j].get();
        std::atomic<int64_t>* before = &backpressure_before_[fmt::format("{}/{}", node.name, j)];
        series.AddInputGate(gate, before);
        rt->backpressure.emplace_back(gate, before);
        rt->gates.push_back(gate);
        auto input =
            std::make_unique<InputTask>(node.name, j, std::move(gates[v][j]), std::move(bindings),
                                        driver[v][j], series.Watermark());
        input->SetAlignmentMetric(series.AlignmentMs());
        task = std::move(input);
      }
      task->SetMembers(std::move(members[v][j]));
      task->SetRestoreMetric(series.RestoreMs());
      if (!task_timers[v].empty() && task_timers[v][j])
        task->SetTimers(std::move(task_timers[v][j]));
      rt->tasks.push_back(std::move(task));
    }
  }
  return Status::Ok();
}

}  // namespace flow::rt
