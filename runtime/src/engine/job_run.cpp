// The running of a built job: the restart loop (Execute), one attempt (ExecuteOnce), the monitor
// and the stop signals. Building the graph of tasks is job.cpp's.
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
  // A signal that ends the job between two runs (restarting) meets no running job to take the
  // savepoint --savepoint-on-stop asks for: that stop ends as one whose savepoint failed (exit 1),
  // so that a script never takes an older savepoint for this stop's.
  auto stopped_between_runs = [this] {
    if (!options_.savepoint_on_stop || !StopSignalReceived() || stop_savepoint_taken_.load() ||
        stop_savepoint_failed_.load()) {
      return;
    }
    Log(LogLevel::kError, "engine",
        "stopped without a savepoint: the signal came while the job was restarting");
    stop_savepoint_failed_.store(true);
  };
  for (bool restart = false;; restart = true) {
    bool completed = false;
    bool running = false;
    Status s = ExecuteOnce(&completed, &running);
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
    // No run follows at once: what connectors kept for the next one goes. A Kafka group member
    // leaves its group when the job stops; after a failure it stays a member until its session
    // times out, so that a restart within that time gets its partitions back without a
    // rebalance.
    handover_.DropAll(/*stopping=*/s.ok() || control_.stop.load() || StopSignalReceived());
    if (s.code() == StatusCode::kReassigned && (control_.stop.load() || StopSignalReceived())) {
      // Stopping anyway, and what this instance had not committed is another instance's now:
      // the stop it was asked for, not a failure.
      Log(LogLevel::kInfo, "engine", "stopped: its partitions had moved to another instance",
          {{"reason", s.message()}});
      stopped_between_runs();
      return Status::Ok();
    }
    if (s.ok() || !can_restart) return s;
    if (restart && !running && IsRetriable(s) && (control_.stop.load() || StopSignalReceived())) {
      // Asked to stop while a restart was still starting (e.g. its commit group waiting out a
      // broker outage): nothing ran that a drain could have lost, and the next start resumes from
      // the last commit as this one would have. A stop, not a failure; a stop whose own drain
      // fails stays one.
      Log(LogLevel::kInfo, "engine",
          "stopped before the restart completed; the next start resumes from the last commit",
          {{"error", s.ToString()}});
      stopped_between_runs();
      return Status::Ok();
    }
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
      stopped_between_runs();
      return Status::Ok();
    }
    control_.cancel.store(false);
  }
}

Status Job::ExecuteOnce(bool* checkpoint_completed, bool* all_started) {
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
  *all_started = std::all_of(rt.tasks.begin(), rt.tasks.end(),
                             [](const std::unique_ptr<Task>& t) { return t->started(); });
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
    // Late records dropped over every run of the job: output a reader may miss, said at the end.
    Log(LogLevel::kInfo, "engine", control_.stop.load() ? "job stopped" : "job finished",
        {{"records_in", std::to_string(SumOf(rt.source_out))},
         {"records_out", std::to_string(SumOf(rt.sink_in))},
         {"late_records_dropped", std::to_string(metrics_.Sum(kMetricLateRecordsDropped))}});
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
          } else {
            stop_savepoint_taken_.store(true);
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
