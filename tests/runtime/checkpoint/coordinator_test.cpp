// The coordinator driven by calls with an injected clock: no threads, no sleeps (except the one
// CheckpointTimer test, which only waits for an event).

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "flow/runtime/checkpoint/coordinator.h"

namespace flow::rt {
namespace {

struct Recorder : CheckpointListener {
  std::vector<std::string> events;
  void OnCheckpointComplete(int64_t id) override {
    events.push_back("complete " + std::to_string(id));
  }
  void OnCheckpointAborted(int64_t id, CheckpointFailureReason r) override {
    events.push_back("abort " + std::to_string(id) + " " + CheckpointFailureReasonName(r));
  }
};

struct FakeFinalizer : CheckpointFinalizer {
  std::vector<int64_t> finalized;
  std::vector<size_t> ack_counts;
  std::vector<int64_t> discarded;
  bool fail = false;
  Status Finalize(int64_t id, const std::vector<TaskAck>& acks) override {
    if (fail) return Status::IoError("disk full");
    finalized.push_back(id);
    ack_counts.push_back(acks.size());
    last_acks = acks;
    return Status::Ok();
  }
  void Discard(int64_t id) override { discarded.push_back(id); }
  std::vector<TaskAck> last_acks;
};

struct Fixture {
  explicit Fixture(CheckpointOptions o, size_t tasks = 3)
      : coordinator(
            o, Names(tasks), &finalizer, [this] { return now; }, 1,
            [this](const CheckpointReport& r) { reports.push_back(r); }) {
    coordinator.AddListener(&recorder);
    coordinator.Start();
  }
  static std::vector<std::string> Names(size_t n) {
    std::vector<std::string> v;
    for (size_t i = 0; i < n; ++i) v.push_back("task" + std::to_string(i));
    return v;
  }
  Status Ack(int64_t id, size_t task, uint64_t bytes = 10, DurationMs align = 0) {
    TaskAck a;
    a.checkpoint_id = id;
    a.task = task;
    a.stats.bytes = bytes;
    a.stats.alignment_ms = align;
    return coordinator.Acknowledge(a);
  }

  int64_t now = 0;
  FakeFinalizer finalizer;
  Recorder recorder;
  std::vector<CheckpointReport> reports;
  CheckpointCoordinator coordinator;
};

CheckpointOptions Periodic(DurationMs interval) {
  CheckpointOptions o;
  o.interval_ms = interval;
  return o;
}

TEST(CheckpointOptions, DefaultsAndValidation) {
  CheckpointOptions d;
  EXPECT_EQ(d.interval_ms, 0);
  EXPECT_EQ(d.timeout_ms, 600000);
  EXPECT_EQ(d.max_concurrent, 1u);
  EXPECT_EQ(d.tolerable_failures, 0u);
  EXPECT_EQ(CheckpointOptions::ForJob(true).interval_ms, 1000);
  EXPECT_EQ(CheckpointOptions::ForJob(false).interval_ms, 0);
  EXPECT_TRUE(d.Validate().ok());

  struct Bad {
    CheckpointOptions o;
    std::string words;
  };
  auto with = [](auto f) {
    CheckpointOptions o;
    f(o);
    return o;
  };
  std::vector<Bad> bad = {
      {with([](auto& o) { o.interval_ms = -1; }), "interval"},
      {with([](auto& o) { o.interval_ms = 5; }), "at least 10 ms"},
      {with([](auto& o) { o.timeout_ms = 0; }), "timeout"},
      {with([](auto& o) { o.min_pause_ms = -3; }), "min pause"},
      {with([](auto& o) { o.max_concurrent = 0; }), "max concurrent"},
      {with([](auto& o) { o.max_concurrent = 65; }), "max concurrent"},
  };
  for (const Bad& b : bad) {
    Status s = b.o.Validate();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find(b.words), std::string::npos) << s.message();
  }
}

TEST(CheckpointCoordinator, PeriodicTriggerAcksFinalizeAndNotify) {
  Fixture f(Periodic(1000));
  f.now = 999;
  EXPECT_FALSE(f.coordinator.Tick());
  f.now = 1000;
  auto id = f.coordinator.Tick();
  ASSERT_TRUE(id);
  EXPECT_EQ(*id, 1);
  f.now = 1050;
  ASSERT_TRUE(f.Ack(1, 0, 100, 3).ok());
  ASSERT_TRUE(f.Ack(1, 2, 50, 7).ok());
  EXPECT_TRUE(f.finalizer.finalized.empty());  // not before every task acked
  EXPECT_TRUE(f.recorder.events.empty());
  f.now = 1080;
  ASSERT_TRUE(f.Ack(1, 1, 25, 1).ok());
  EXPECT_EQ(f.finalizer.finalized, std::vector<int64_t>{1});
  EXPECT_EQ(f.finalizer.ack_counts, std::vector<size_t>{3});
  EXPECT_EQ(f.recorder.events, std::vector<std::string>{"complete 1"});
  EXPECT_EQ(f.coordinator.LastCompletedId(), 1);
  ASSERT_EQ(f.reports.size(), 1u);
  EXPECT_TRUE(f.reports[0].completed);
  EXPECT_EQ(f.reports[0].bytes, 175u);
  EXPECT_EQ(f.reports[0].max_alignment_ms, 7);
  EXPECT_EQ(f.reports[0].duration_ms, 80);
  // Next trigger one interval after the previous trigger.
  f.now = 1999;
  EXPECT_FALSE(f.coordinator.Tick());
  f.now = 2000;
  EXPECT_EQ(f.coordinator.Tick().value_or(-1), 2);
}

TEST(CheckpointCoordinator, IntervalZeroNeverTriggersPeriodically) {
  Fixture f(CheckpointOptions{});
  f.now = 100000000;
  EXPECT_FALSE(f.coordinator.Tick());
  auto id = f.coordinator.Trigger();  // manual triggers still work
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(*id, 1);
}

TEST(CheckpointCoordinator, MaxConcurrentRefusesAndTickWaits) {
  Fixture f(Periodic(100));
  f.now = 100;
  ASSERT_EQ(f.coordinator.Tick().value_or(-1), 1);
  f.now = 250;
  EXPECT_FALSE(f.coordinator.Tick());  // 1 still pending
  auto r = f.coordinator.Trigger();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("too_many_concurrent"), std::string::npos)
      << r.status().message();
  for (size_t t = 0; t < 3; ++t) ASSERT_TRUE(f.Ack(1, t).ok());
  EXPECT_EQ(f.coordinator.Tick().value_or(-1), 2);  // no id was consumed by the refusal
}

TEST(CheckpointCoordinator, TimeoutAbortsAndFailsJobWithZeroTolerance) {
  CheckpointOptions o = Periodic(1000);
  o.timeout_ms = 5000;
  Fixture f(o);
  f.now = 1000;
  ASSERT_EQ(f.coordinator.Tick().value_or(-1), 1);
  ASSERT_TRUE(f.Ack(1, 0).ok());
  f.now = 5999;
  f.coordinator.Tick();
  EXPECT_TRUE(f.recorder.events.empty());
  EXPECT_FALSE(f.coordinator.JobFailure());
  f.now = 6000;
  f.coordinator.Tick();
  ASSERT_FALSE(f.recorder.events.empty());
  EXPECT_EQ(f.recorder.events[0], "abort 1 timeout");
  EXPECT_EQ(f.finalizer.discarded, std::vector<int64_t>{1});
  ASSERT_TRUE(f.coordinator.JobFailure());
  EXPECT_NE(f.coordinator.JobFailure()->message().find("timeout"), std::string::npos);
  EXPECT_NE(f.coordinator.JobFailure()->message().find("tolerable_failures=0"), std::string::npos);
  EXPECT_FALSE(f.reports[0].completed);
  EXPECT_EQ(f.reports[0].acked_tasks, 1u);
  // A late ack of the aborted checkpoint is harmless.
  EXPECT_TRUE(f.Ack(1, 1).ok());
  // A failed job triggers nothing more.
  f.now = 100000;
  EXPECT_FALSE(f.coordinator.Tick());
}

TEST(CheckpointCoordinator, TolerableFailuresCountConsecutiveOnly) {
  CheckpointOptions o;
  o.tolerable_failures = 2;
  Fixture f(o, 2);
  auto trigger = [&] {
    auto r = f.coordinator.Trigger();
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : -1;
  };
  f.coordinator.Decline(trigger(), 1, "alignment aborted");
  f.coordinator.Decline(trigger(), 0, "x");
  EXPECT_EQ(f.coordinator.ConsecutiveFailures(), 2u);
  EXPECT_FALSE(f.coordinator.JobFailure());
  int64_t ok = trigger();  // a success resets the count
  ASSERT_TRUE(f.Ack(ok, 0).ok());
  ASSERT_TRUE(f.Ack(ok, 1).ok());
  EXPECT_EQ(f.coordinator.ConsecutiveFailures(), 0u);
  f.coordinator.Decline(trigger(), 1, "a");
  f.coordinator.Decline(trigger(), 1, "b");
  EXPECT_FALSE(f.coordinator.JobFailure());
  f.coordinator.Decline(trigger(), 1, "c");
  ASSERT_TRUE(f.coordinator.JobFailure());
  EXPECT_NE(f.coordinator.JobFailure()->message().find("task1: c"), std::string::npos)
      << f.coordinator.JobFailure()->message();
  EXPECT_EQ(f.recorder.events,
            (std::vector<std::string>{"abort 1 task_declined", "abort 2 task_declined",
                                      "complete 3", "abort 4 task_declined",
                                      "abort 5 task_declined", "abort 6 task_declined"}));
}

TEST(CheckpointCoordinator, StorageFailureAbortsWithIoReason) {
  Fixture f(CheckpointOptions{}, 1);
  f.finalizer.fail = true;
  auto id = f.coordinator.Trigger();
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE(f.Ack(*id, 0).ok());
  EXPECT_EQ(f.recorder.events, std::vector<std::string>{"abort 1 storage_io_error"});
  ASSERT_EQ(f.reports.size(), 1u);
  EXPECT_NE(f.reports[0].message.find("disk full"), std::string::npos);
  EXPECT_TRUE(f.coordinator.JobFailure());
  EXPECT_EQ(f.coordinator.LastCompletedId(), 0);
}

TEST(CheckpointCoordinator, NewerCompletionSubsumesOlderInOrder) {
  CheckpointOptions o;
  o.max_concurrent = 2;
  Fixture f(o, 2);
  ASSERT_EQ(f.coordinator.Trigger().value(), 1);
  ASSERT_EQ(f.coordinator.Trigger().value(), 2);
  ASSERT_TRUE(f.Ack(2, 0).ok());
  ASSERT_TRUE(f.Ack(1, 0).ok());
  ASSERT_TRUE(f.Ack(2, 1).ok());
  EXPECT_EQ(f.recorder.events, (std::vector<std::string>{"abort 1 subsumed", "complete 2"}));
  EXPECT_EQ(f.coordinator.ConsecutiveFailures(), 0u);
  EXPECT_FALSE(f.coordinator.JobFailure());
  EXPECT_TRUE(f.Ack(1, 1).ok());  // late, ignored
  EXPECT_EQ(f.coordinator.PendingCount(), 0u);
}

TEST(CheckpointCoordinator, MinPauseBetweenCompletionAndNextTrigger) {
  CheckpointOptions o = Periodic(100);
  o.min_pause_ms = 500;
  Fixture f(o, 1);
  f.now = 100;
  ASSERT_EQ(f.coordinator.Tick().value_or(-1), 1);
  f.now = 300;
  ASSERT_TRUE(f.Ack(1, 0).ok());
  f.now = 799;
  EXPECT_FALSE(f.coordinator.Tick());
  auto r = f.coordinator.Trigger();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("min_pause"), std::string::npos);
  f.now = 800;
  EXPECT_EQ(f.coordinator.Tick().value_or(-1), 2);
}

TEST(CheckpointCoordinator, AckValidation) {
  Fixture f(CheckpointOptions{}, 2);
  Status s = f.Ack(1, 0);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("never triggered"), std::string::npos);
  ASSERT_TRUE(f.coordinator.Trigger().ok());
  s = f.Ack(1, 5);
  EXPECT_NE(s.message().find("unknown task #5"), std::string::npos) << s.message();
  ASSERT_TRUE(f.Ack(1, 0).ok());
  s = f.Ack(1, 0);
  EXPECT_NE(s.message().find("twice"), std::string::npos);
  EXPECT_TRUE(f.recorder.events.empty());
}

TEST(CheckpointCoordinator, FinishedTasksAckAsFinished) {
  Fixture f(CheckpointOptions{}, 3);
  ASSERT_EQ(f.coordinator.Trigger().value(), 1);
  ASSERT_TRUE(f.Ack(1, 0).ok());
  ASSERT_TRUE(f.Ack(1, 1).ok());
  f.coordinator.TaskFinished(2, {"src", "map"});  // completes the pending checkpoint
  EXPECT_EQ(f.recorder.events, std::vector<std::string>{"complete 1"});
  ASSERT_EQ(f.finalizer.last_acks.size(), 3u);
  const TaskAck& fin = f.finalizer.last_acks.back();
  EXPECT_EQ(fin.task, 2u);
  ASSERT_EQ(fin.snapshots.size(), 2u);
  EXPECT_EQ(fin.snapshots[0].operator_name, "src");
  EXPECT_TRUE(fin.snapshots[0].finished);
  EXPECT_TRUE(fin.snapshots[1].finished);
  ASSERT_EQ(f.coordinator.Trigger().value(), 2);  // later checkpoints need only the live tasks
  ASSERT_TRUE(f.Ack(2, 0).ok());
  ASSERT_TRUE(f.Ack(2, 1).ok());
  EXPECT_EQ(f.recorder.events.back(), "complete 2");
}

TEST(CheckpointCoordinator, TaskFailureAndJobFinishing) {
  CheckpointOptions o;
  o.max_concurrent = 3;
  o.tolerable_failures = 5;
  Fixture f(o, 2);
  ASSERT_TRUE(f.coordinator.Trigger().ok());
  ASSERT_TRUE(f.coordinator.Trigger().ok());
  f.coordinator.TaskFailed(1, "boom");
  EXPECT_EQ(f.recorder.events,
            (std::vector<std::string>{"abort 1 task_failed", "abort 2 task_failed"}));
  EXPECT_EQ(f.coordinator.ConsecutiveFailures(), 2u);
  ASSERT_TRUE(f.coordinator.Trigger().ok());
  f.coordinator.JobFinishing();
  EXPECT_EQ(f.recorder.events.back(), "abort 3 job_finishing");
  EXPECT_EQ(f.coordinator.ConsecutiveFailures(), 2u);  // shutdown is not a failure
  auto r = f.coordinator.Trigger();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("job_finishing"), std::string::npos);
}

// After the job failed, snapshot writes that drain during the cancel still acknowledge: they
// must complete nothing (no metadata, no retention, no commit by a listener).
TEST(CheckpointCoordinator, JobFailedAbortsPendingAndIgnoresLaterAcks) {
  CheckpointOptions o;
  o.max_concurrent = 2;
  Fixture f(o, 2);
  ASSERT_TRUE(f.coordinator.Trigger().ok());
  ASSERT_TRUE(f.Ack(1, 0).ok());
  f.coordinator.JobFailed("sink commit failed");
  EXPECT_EQ(f.recorder.events, (std::vector<std::string>{"abort 1 not_running"}));
  ASSERT_TRUE(f.Ack(1, 1).ok());  // the drain's late ack
  EXPECT_TRUE(f.finalizer.finalized.empty());
  EXPECT_EQ(f.coordinator.LastCompletedId(), 0);
  EXPECT_EQ(f.coordinator.ConsecutiveFailures(), 0u);  // the job's failure is counted elsewhere
  auto r = f.coordinator.Trigger();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not_running"), std::string::npos);
  f.now += 100000;
  EXPECT_FALSE(f.coordinator.Tick().has_value());
}

TEST(CheckpointCoordinator, NotStartedRefusesTrigger) {
  FakeFinalizer fin;
  CheckpointCoordinator c(
      CheckpointOptions{}, {"t"}, &fin, [] { return int64_t{0}; }, 1,
      [](const CheckpointReport&) {});
  auto r = c.Trigger();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not_running"), std::string::npos);
}

TEST(CheckpointCoordinator, FirstIdAfterRestore) {
  FakeFinalizer fin;
  CheckpointCoordinator c(
      CheckpointOptions{}, {"t"}, &fin, [] { return int64_t{0}; }, 42,
      [](const CheckpointReport&) {});
  c.Start();
  EXPECT_EQ(c.Trigger().value(), 42);
}

// A listener that triggers more coordinator work from inside a callback still sees events in order.
struct ReentrantListener : CheckpointListener {
  CheckpointCoordinator* c = nullptr;
  std::vector<std::string> events;
  void OnCheckpointComplete(int64_t id) override {
    events.push_back("complete " + std::to_string(id));
    if (id == 1) {
      auto next = c->Trigger();
      if (next.ok()) c->Decline(*next, 0, "x");
    }
  }
  void OnCheckpointAborted(int64_t id, CheckpointFailureReason) override {
    events.push_back("abort " + std::to_string(id));
  }
};

TEST(CheckpointCoordinator, ReentrantListenerKeepsOrder) {
  CheckpointOptions o;
  o.tolerable_failures = 3;
  CheckpointCoordinator c(
      o, {"t"}, nullptr, [] { return int64_t{0}; }, 1, [](const CheckpointReport&) {});
  ReentrantListener l;
  l.c = &c;
  c.AddListener(&l);
  c.Start();
  ASSERT_TRUE(c.Trigger().ok());
  TaskAck a;
  a.checkpoint_id = 1;
  ASSERT_TRUE(c.Acknowledge(a).ok());
  EXPECT_EQ(l.events, (std::vector<std::string>{"complete 1", "abort 2"}));
}

TEST(CheckpointReport, LogLineFormat) {
  CheckpointReport r;
  r.checkpoint_id = 7;
  r.completed = true;
  r.duration_ms = 120;
  r.bytes = 4096;
  r.max_alignment_ms = 3;
  r.acked_tasks = 4;
  r.total_tasks = 4;
  EXPECT_EQ(
      FormatCheckpointReport(r),
      "checkpoint id=7 result=completed duration_ms=120 bytes=4096 max_alignment_ms=3 acked=4/4");
  r.completed = false;
  r.reason = CheckpointFailureReason::kTaskDeclined;
  r.message = "window#1: alignment aborted";
  r.acked_tasks = 2;
  EXPECT_EQ(
      FormatCheckpointReport(r),
      "checkpoint id=7 result=aborted duration_ms=120 bytes=4096 max_alignment_ms=3 acked=2/4 "
      "reason=task_declined message=\"window#1: alignment aborted\"");
}

TEST(CheckpointTimer, CallsTickOnItsThread) {
  std::atomic<int64_t> fake_now{0};
  CheckpointCoordinator c(
      Periodic(10), {"t"}, nullptr, [&] { return fake_now.load(); }, 1,
      [](const CheckpointReport&) {});
  c.Start();
  fake_now = 1000;  // the first trigger is due at once
  std::atomic<int64_t> triggered{0};
  {
    CheckpointTimer timer(&c, 5, [&](int64_t id) { triggered = id; });
    for (int i = 0; i < 2000 && triggered.load() == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(triggered.load(), 1);
}

}  // namespace
}  // namespace flow::rt

namespace flow::rt {
namespace {

// Acks from several task threads at once: every checkpoint completes exactly once and the
// listener sees completions in checkpoint order (with max_concurrent 4, some are subsumed).
TEST(CheckpointCoordinator, ConcurrentAcksFromTaskThreads) {
  CheckpointOptions o;
  o.max_concurrent = 4;
  constexpr size_t kTasks = 4;
  constexpr int64_t kCheckpoints = 200;
  std::vector<std::string> names;
  for (size_t i = 0; i < kTasks; ++i) names.push_back("t" + std::to_string(i));
  CheckpointCoordinator c(
      o, names, nullptr, [] { return int64_t{0}; }, 1, [](const CheckpointReport&) {});
  Recorder rec;
  c.AddListener(&rec);
  c.Start();
  std::atomic<int64_t> triggered{0};
  std::atomic<bool> failed{false};
  std::vector<std::thread> threads;
  for (size_t t = 0; t < kTasks; ++t) {
    threads.emplace_back([&, t] {
      // Each task acks checkpoints in order, as a task thread would.
      for (int64_t id = 1; id <= kCheckpoints; ++id) {
        while (triggered.load() < id) std::this_thread::yield();
        TaskAck a;
        a.checkpoint_id = id;
        a.task = t;
        if (!c.Acknowledge(a).ok()) failed = true;
      }
    });
  }
  for (int64_t id = 1; id <= kCheckpoints; ++id) {
    while (true) {
      auto r = c.Trigger();
      if (r.ok()) {
        if (*r != id) failed = true;
        break;
      }
      std::this_thread::yield();  // too many pending: wait for acks
    }
    triggered = id;
  }
  for (std::thread& th : threads) th.join();
  EXPECT_FALSE(failed.load());
  EXPECT_EQ(c.LastCompletedId(), kCheckpoints);
  EXPECT_EQ(c.PendingCount(), 0u);
  // Every id appears exactly once, as completed or subsumed, in increasing order.
  ASSERT_EQ(rec.events.size(), static_cast<size_t>(kCheckpoints));
  for (int64_t id = 1; id <= kCheckpoints; ++id) {
    const std::string& e = rec.events[static_cast<size_t>(id - 1)];
    EXPECT_TRUE(e == "complete " + std::to_string(id) ||
                e == "abort " + std::to_string(id) + " subsumed")
        << e;
  }
  EXPECT_EQ(rec.events.back(), "complete " + std::to_string(kCheckpoints));
}

}  // namespace
}  // namespace flow::rt
