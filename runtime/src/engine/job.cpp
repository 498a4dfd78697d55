#include "flow/runtime/engine/job.h"

#include "job_metrics.h"
#include "job_runtime.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "flow/runtime/engine/metrics_server.h"
#include "flow/runtime/log/log.h"
#include "flow/runtime/state/keyed_state_backend.h"

namespace flow::rt {
namespace {
std::atomic<bool> g_stop_signal{false};

extern "C" void OnStopSignal(int) {
  g_stop_signal.store(true);
}
}  // namespace

void InstallStopSignalHandlers() {
  struct sigaction sa {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  // The handler runs once; a second signal gets the default action (terminate) for an impatient
  // user.
  sa.sa_flags = SA_RESETHAND;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool StopSignalReceived() {
  return g_stop_signal.load();
}

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

namespace {
// The help texts drivers register with; the first registration of a name sets its # HELP line.
constexpr std::string_view kHelpRecordsIn = "Records received by an operator subtask";
constexpr std::string_view kHelpRecordsOut = "Records emitted by an operator subtask";
constexpr std::string_view kHelpWatermark = "Current input watermark (ms since epoch)";

int64_t SumOf(const std::vector<Metric*>& metrics) {
  int64_t s = 0;
  for (Metric* m : metrics) s += m->value();
  return s;
}

int64_t BlockedMs(InputGate* gate) {
  int64_t ns = 0;
  for (size_t i = 0; i < gate->size(); ++i) ns += gate->channel(i)->BlockedNanos();
  return ns / 1000000;
}
}  // namespace

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
        MetricLabels labels = MetricGroup(&metrics_, node.name, j).Labels();
        rt->sink_in.push_back(metrics_.Counter(kMetricRecordsIn, kHelpRecordsIn, labels));
        rt->sink_watermark.push_back(metrics_.Gauge(kMetricWatermark, kHelpWatermark, labels));
      }
    }
  }

  // One task per chain head subtask.
  for (size_t v = 0; v < n; ++v) {
    if (head[v] != static_cast<int>(v)) continue;
    auto& node = *nodes_[v];
    for (uint32_t j = 0; j < node.parallelism; ++j) {
      std::unique_ptr<Task> task;
      if (node.is_source) {
        task = node.MakeSourceTask(make_ctx(v, j), output[v][j], options_.batch_size, &control_);
        rt->source_out.push_back(metrics_.Counter(kMetricRecordsOut, kHelpRecordsOut,
                                                  MetricGroup(&metrics_, node.name, j).Labels()));
      } else {
        std::vector<std::unique_ptr<ChannelBindingBase>> bindings;
        for (const GateEntry& ge : gate_entries[v][j]) {
          auto& e = *edges_[ge.edge];
          bindings.push_back(e.MakeBinding(ge.channel, node.InputOf(driver[v][j], e.input_index)));
        }
        InputGate* gate = gates[v][j].get();
        MetricLabels labels = MetricGroup(&metrics_, node.name, j).Labels();
        metrics_.AddCallback(kMetricQueueDepth, "Elements queued in a subtask's input channels",
                             labels, [gate] {
                               int64_t d = 0;
                               for (size_t i = 0; i < gate->size(); ++i)
                                 d += static_cast<int64_t>(gate->channel(i)->Depth());
                               return d;
                             });
        metrics_.AddCallback(kMetricQueueCapacity,
                             "Capacity of a subtask's input channels (elements)", labels, [gate] {
                               int64_t d = 0;
                               for (size_t i = 0; i < gate->size(); ++i)
                                 d += static_cast<int64_t>(gate->channel(i)->capacity());
                               return d;
                             });
        std::atomic<int64_t>* before = &backpressure_before_[fmt::format("{}/{}", node.name, j)];
        rt->backpressure.emplace_back(gate, before);
        metrics_.AddCallback(
            kMetricBackpressure,
            "Time upstream writers waited on this subtask's full input channels", labels,
            [gate, before] { return before->load() + BlockedMs(gate); }, MetricType::kCounter);
        rt->gates.push_back(gate);
        Metric* wm = metrics_.Gauge(kMetricWatermark, kHelpWatermark, labels);
        auto input = std::make_unique<InputTask>(node.name, j, std::move(gates[v][j]),
                                                 std::move(bindings), driver[v][j], wm);
        input->SetAlignmentMetric(metrics_.Gauge(
            kMetricAlignmentMs, "Duration of the last checkpoint barrier alignment (ms)", labels));
        task = std::move(input);
      }
      task->SetMembers(std::move(members[v][j]));
      task->SetRestoreMetric(
          metrics_.Gauge(kMetricRestoreMs,
                         "How long the subtask's last start from a checkpoint took to open its "
                         "operators and restore their state (ms)",
                         MetricGroup(&metrics_, node.name, j).Labels()));
      if (!task_timers[v].empty() && task_timers[v][j])
        task->SetTimers(std::move(task_timers[v][j]));
      rt->tasks.push_back(std::move(task));
    }
  }
  return Status::Ok();
}

void Job::RequestStop() {
  control_.stop.store(true);
}

Status Job::Readiness() {
  std::lock_guard<std::mutex> lock(run_mu_);  // running_ stays valid while it is held
  if (running_ == nullptr)
    return Status::Unavailable("not running: starting, restarting or finished");
  if (control_.stop.load()) return Status::Unavailable("stopping");
  {
    std::lock_guard<std::mutex> error_lock(running_->error_mu);
    if (!running_->error.ok()) return Status::Unavailable("failing: " + running_->error.ToString());
  }
  const auto& tasks = running_->tasks;
  const size_t started = static_cast<size_t>(std::count_if(
      tasks.begin(), tasks.end(), [](const std::unique_ptr<Task>& t) { return t->started(); }));
  if (started < tasks.size()) {
    return Status::Unavailable(fmt::format("starting: {} of {} tasks opened{}", started,
                                           tasks.size(),
                                           running_->restore ? " and restored their state" : ""));
  }
  return Status::Ok();
}

namespace {
bool IsRetriable(const Status& s) {
  switch (s.code()) {
    case StatusCode::kIoError:      // a file system or network hiccup
    case StatusCode::kUnavailable:  // a broker or service not reachable right now
    case StatusCode::kTimedOut:
    case StatusCode::kAborted:  // e.g. too many failed checkpoints in a row
      return true;
    default:  // bad input or configuration, corruption, fencing, our own bugs: the same again
      return false;
  }
}
}  // namespace

Status Job::Execute() {
  {
    std::lock_guard<std::mutex> lock(run_mu_);
    if (ran_) return Status::Internal("Job::Execute called twice");
    ran_ = true;
  }
  // The state dir's lock is held across restarts and let go when the job is done.
  struct ReleaseStateDir {
    std::unique_ptr<StateDirectory>* dir;
    ~ReleaseStateDir() { dir->reset(); }
  } release_state_dir{&state_dir_};
  const CheckpointFlags flags = options_.checkpoint;
  // Without a state dir a restart would replay every source from its start: fail instead.
  const bool can_restart =
      !flags.state_dir.empty() && flags.restart.max_attempts > 0 && flags.restart.Validate().ok();
  RestartBackoff backoff(can_restart ? flags.restart : RestartPolicyOptions{});
  Metric* restarts =
      metrics_.Counter(kMetricRestarts, "In-process restarts of the job after a failure", {});
  Metric* reassigned = metrics_.Counter(
      kMetricReassignedRestarts,
      "In-process restarts because a consumer-group rebalance moved partitions away (--instance)",
      {});
  while (true) {
    bool completed = false;
    Status s = ExecuteOnce(&completed);
    if (s.code() == StatusCode::kReassigned && can_restart && !control_.stop.load() &&
        !StopSignalReceived()) {
      // Not a failure: partitions moved to another instance. Run again at once from the last
      // commit, with the partitions the group gives this instance now.
      reassigned->Add(1);
      Log(LogLevel::kInfo, "engine",
          "work moved between instances: restarting from the last commit",
          {{"reason", s.message()}});
      if (completed) options_.checkpoint.restore.clear();
      control_.cancel.store(false);
      continue;
    }
    if (s.code() == StatusCode::kReassigned && (control_.stop.load() || StopSignalReceived())) {
      // Stopping anyway, and what this instance had not committed is another instance's now:
      // the stop it was asked for, not a failure.
      Log(LogLevel::kInfo, "engine", "stopped: its partitions had moved to another instance",
          {{"reason", s.message()}});
      return Status::Ok();
    }
    if (s.ok() || !can_restart) return s;
    if (!IsRetriable(s)) {
      Log(LogLevel::kError, "engine", "not restarting: the error is not retriable",
          {{"error", s.ToString()}});
      return s;
    }
    if (control_.stop.load() || StopSignalReceived()) return s;
    // A checkpoint completed since the last restart: the job was healthy, forget old failures.
    if (completed) backoff.Reset();
    std::optional<DurationMs> delay = backoff.NextDelay();
    if (!delay) {
      Log(LogLevel::kError, "engine", "restart attempts exhausted",
          {{"attempts", std::to_string(flags.restart.max_attempts)}, {"error", s.ToString()}});
      return Status(s.code(), fmt::format("{} (gave up after {} restarts)", s.message(),
                                          flags.restart.max_attempts));
    }
    // From now on restore the newest checkpoint of the state dir, not a --restore PATH given at
    // start.
    if (completed) options_.checkpoint.restore.clear();
    restarts->Add(1);
    Log(LogLevel::kWarn, "engine", "restarting job",
        {{"reason", s.ToString()},
         {"attempt", fmt::format("{}/{}", backoff.attempts(), flags.restart.max_attempts)},
         {"delay_ms", std::to_string(*delay)}});
    const int64_t until = SteadyNowMs() + *delay;
    while (SteadyNowMs() < until && !control_.stop.load() && !StopSignalReceived()) {
      std::this_thread::sleep_for(
          std::chrono::milliseconds(std::min<int64_t>(20, until - SteadyNowMs() + 1)));
    }
    if (control_.stop.load() || StopSignalReceived()) {
      Log(LogLevel::kInfo, "engine", "stop requested while waiting to restart");
      return Status::Ok();
    }
    control_.cancel.store(false);
  }
}

Status Job::ExecuteOnce(bool* checkpoint_completed) {
  Runtime rt;
  Status built;
  try {
    built = Build(&rt);  // calls the user's operator/source/sink factories
  } catch (const std::exception& e) {
    built = Status::Internal(fmt::format("building the job: exception: {}", e.what()));
  } catch (...) {
    built = Status::Internal("building the job: unknown exception");
  }
  if (built.ok()) built = PrepareCheckpoints(&rt);
  if (!built.ok()) {
    metrics_.ClearCallbacks();
    return built;
  }
  checkpoint_metrics_->AddCallbacks();
  AddProcessMetrics(&metrics_);
  MetricsServer::Handlers handlers;
  handlers.savepoint = [this](const SavepointRequest& r) { return TakeSavepoint(r); };
  handlers.ready = [this] { return Readiness(); };
  handlers.status = [this] { return StatusJson(); };
  MetricsServer server(&metrics_, std::move(handlers));
  if (options_.metrics_port >= 0) {
    Status s = server.Start(options_.metrics_bind, options_.metrics_port);
    if (!s.ok()) {
      metrics_.ClearCallbacks();
      return s;
    }
    bound_port_ = server.port();
    Log(LogLevel::kInfo, "engine", "metrics endpoint",
        {{"url", fmt::format("http://{}:{}/metrics", options_.metrics_bind, server.port())}});
  }
  task_count_ = rt.tasks.size();
  Log(LogLevel::kInfo, "engine", "job running",
      {{"tasks", std::to_string(rt.tasks.size())},
       {"parallelism", std::to_string(options_.parallelism)}});
  rt.running = rt.tasks.size();
  std::vector<std::thread> threads;
  threads.reserve(rt.tasks.size());
  for (auto& t : rt.tasks) {
    Task* task = t.get();
    task->SetFailureHandler([this, &rt](const Status& s) {
      if (!(s.code() == StatusCode::kCancelled && control_.cancel.load())) Fail(&rt, s);
    });
    threads.emplace_back([this, task, &rt] {
      Status s = task->Run();
      if (!s.ok() && !(s.code() == StatusCode::kCancelled && control_.cancel.load())) {
        // Partitions moving to another instance is routine, not an error.
        const bool moved = s.code() == StatusCode::kReassigned;
        Log(moved ? LogLevel::kInfo : LogLevel::kError, "engine",
            moved ? "task ended: its partitions moved" : "task failed",
            {{"task", task->name()},
             {"subtask", std::to_string(task->subtask())},
             {"error", s.ToString()}});
        Fail(&rt, s);
      }
      rt.running.fetch_sub(1);
    });
  }
  StartCheckpoints(&rt);
  {
    std::lock_guard<std::mutex> lock(run_mu_);
    running_ = &rt;
  }
  Monitor(&rt);
  for (auto& th : threads) th.join();
  {
    // Savepoint calls in flight see `ended` and return before `rt` goes away.
    rt.ended.store(true);
    std::unique_lock<std::mutex> lock(run_mu_);
    running_ = nullptr;
    run_cv_.wait(lock, [this] { return savepoint_calls_ == 0; });
  }
  control_.pause_after_barrier.store(0);
  if (rt.checkpoint_timer) rt.checkpoint_timer->Stop();
  if (rt.txn)
    rt.txn->Finish(rt.coordinator.get(), rt.error.ok() && !control_.stop.load());  // final commit
  if (rt.coordinator) {
    rt.coordinator->JobFinishing();
    const int64_t first_id = rt.restore ? rt.restore->metadata.checkpoint_id + 1 : 1;
    *checkpoint_completed = rt.coordinator->LastCompletedId() >= first_id;
  }
  server.Stop();
  bound_port_ = 0;
  size_t max_depth = 0;
  for (auto& c : rt.channels) max_depth = std::max(max_depth, c->MaxDepth());
  max_channel_depth_ = max_depth;
  metrics_.ClearCallbacks();
  for (auto& [gate, before] : rt.backpressure) before->fetch_add(BlockedMs(gate));
  std::lock_guard<std::mutex> lock(rt.error_mu);
  if (rt.error.ok()) {
    Log(LogLevel::kInfo, "engine", control_.stop.load() ? "job stopped" : "job finished",
        {{"records_in", std::to_string(SumOf(rt.source_out))},
         {"records_out", std::to_string(SumOf(rt.sink_in))}});
  }
  return rt.error;
}

void Job::Fail(Runtime* rt, const Status& s) {
  {
    std::lock_guard<std::mutex> lock(rt->error_mu);
    if (!rt->error.ok()) return;
    rt->error = s;
  }
  // Snapshot writes that drain after the cancel must complete no checkpoint (and so run no
  // retention and no commit): the restart restores what was complete before the failure.
  if (rt->coordinator) rt->coordinator->JobFailed(s.ToString());
  control_.cancel.store(true);
  for (InputGate* g : rt->gates) g->Cancel();
}

void Job::Monitor(Runtime* rt) {
  using Clock = std::chrono::steady_clock;
  const auto interval =
      std::chrono::milliseconds(static_cast<int64_t>(options_.progress_interval_s * 1000));
  auto last = Clock::now();
  int64_t last_in = 0, last_out = 0;
  std::thread stopper;  // --savepoint-on-stop
  struct Join {
    std::thread* t;
    ~Join() {
      if (t->joinable()) t->join();
    }
  } join_stopper{&stopper};
  while (rt->running.load() > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    rates_->Sample(metrics_, SteadyNowMs());
    if (rt->coordinator) {
      if (auto failure = rt->coordinator->JobFailure(); failure && !control_.cancel.load()) {
        Log(LogLevel::kError, "engine", "too many failed checkpoints",
            {{"error", failure->ToString()}});
        Fail(rt, *failure);
      }
    }
    if (StopSignalReceived() && !control_.stop.load() && !stopper.joinable()) {
      if (options_.savepoint_on_stop) {
        Log(LogLevel::kInfo, "engine", "stop requested by signal; taking a savepoint first");
        // On its own thread: this loop keeps watching for failures meanwhile.
        stopper = std::thread([this] {
          SavepointRequest request;
          request.stop = true;
          Result<SavepointResult> r = TakeSavepoint(request);
          if (!r.ok()) {
            Log(LogLevel::kError, "engine", "stop with savepoint failed; stopping without one",
                {{"error", r.status().ToString()}});
            stop_savepoint_failed_.store(true);
            RequestStop();
          }
        });
      } else {
        Log(LogLevel::kInfo, "engine", "stop requested by signal; draining");
        RequestStop();
      }
    }
    if (options_.progress_interval_s <= 0 || Clock::now() - last < interval) continue;
    auto now = Clock::now();
    double secs = std::chrono::duration<double>(now - last).count();
    last = now;
    int64_t in = SumOf(rt->source_out), out = SumOf(rt->sink_in);
    TimestampMs wm = kMaxWatermark;
    for (Metric* m : rt->sink_watermark) wm = std::min(wm, m->value());
    std::string lag = "n/a";
    if (wm != kMinWatermark && wm != kMaxWatermark && !rt->sink_watermark.empty()) {
      lag = fmt::format("{:.1f}s", (WallNowMs() - wm) / 1000.0);
    }
    Log(LogLevel::kInfo, "progress", "running",
        {{"in_per_s", fmt::format("{:.0f}", (in - last_in) / secs)},
         {"out_per_s", fmt::format("{:.0f}", (out - last_out) / secs)},
         {"in_total", std::to_string(in)},
         {"out_total", std::to_string(out)},
         {"watermark_lag", lag}});
    last_in = in;
    last_out = out;
  }
}

int Job::Run() {
  Status s = Execute();
  if (s.ok() && stop_savepoint_failed_.load()) return 1;  // asked for a savepoint, stopped without
  if (s.ok()) return 0;
  Log(LogLevel::kError, "engine", "job failed", {{"error", s.ToString()}});
  if (restore_refused_)
    return 2;  // a usage error: the wrong state dir or --restore for this script
  return s.code() == StatusCode::kFenced ? 3 : 1;
}

}  // namespace flow::rt
