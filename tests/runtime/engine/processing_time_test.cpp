// Processing-time timers: TaskTimers on a ManualClock, and keyed processing-time windows in a
// running job that fire once the clock passes their end while the source stays open and quiet
// (no record, no watermark), including after a restore. Expected rows come from references
// computed here; the clock only moves when the test moves it, so nothing depends on timing.

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "flow/runtime/checkpoint/checkpoint_storage.h"
#include "flow/runtime/engine/clock.h"
#include "flow/runtime/engine/job.h"
#include "flow/runtime/engine/sink.h"
#include "flow/runtime/engine/timers.h"
#include "flow/runtime/exec/session_window_adapter.h"
#include "flow/runtime/exec/window_aggregate_adapter.h"

namespace flow::rt {
namespace {

namespace fs = std::filesystem;

// Polls `done` every 2 ms; fails the test after 60 s instead of hanging (a watchdog, not a
// timing assertion).
template <typename Pred>
bool WaitFor(Pred done, const std::string& what) {
  for (int i = 0; i < 30000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ADD_FAILURE() << "timed out waiting for " << what;
  return false;
}

// ---- TaskTimers ----

class Recorder final : public Consumer {
 public:
  Status OnWatermark(TimestampMs) override { return Status::Ok(); }
  Status OnIdle(bool) override { return Status::Ok(); }
  Status OnBarrier(int64_t) override { return Status::Ok(); }
  Status OnEnd(bool) override { return Status::Ok(); }
  Status OnProcessingTime(TimestampMs now) override {
    calls.push_back(now);
    if (on_fire) on_fire();
    return Status::Ok();
  }
  std::vector<TimestampMs> calls;
  std::function<void()> on_fire;
};

TEST(TaskTimers, FireOnceWhenTheClockReachesThem) {
  ManualClock clock(1000);
  TaskTimers timers(&clock);
  Recorder a, b;
  ProcessingTimeService* sa = timers.NewService();
  ProcessingTimeService* sb = timers.NewService();
  timers.Bind(sa, &a);
  timers.Bind(sb, &b);
  EXPECT_EQ(timers.WaitMs(), -1);
  sa->RegisterTimer(1100);
  sa->RegisterTimer(1100);  // same time: one call
  sa->RegisterTimer(1200);
  sb->RegisterTimer(1150);
  EXPECT_EQ(timers.Next(), 1100);
  EXPECT_GT(timers.WaitMs(), 0);
  ASSERT_TRUE(timers.FireDue().ok());
  EXPECT_TRUE(a.calls.empty());
  clock.Set(1160);
  EXPECT_EQ(timers.WaitMs(), 0);
  ASSERT_TRUE(timers.FireDue().ok());
  EXPECT_EQ(a.calls, std::vector<TimestampMs>({1160}));  // 1100 twice: one call
  EXPECT_EQ(b.calls, std::vector<TimestampMs>({1160}));
  EXPECT_EQ(timers.Next(), 1200);
  clock.Advance(1000);
  ASSERT_TRUE(timers.FireDue().ok());
  EXPECT_EQ(a.calls, std::vector<TimestampMs>({1160, 2160}));
  EXPECT_TRUE(timers.empty());
}

TEST(TaskTimers, PastTimesFireAtOnceAndTimersSetWhileFiringWait) {
  ManualClock clock(5000);
  TaskTimers timers(&clock);
  Recorder a;
  ProcessingTimeService* s = timers.NewService();
  timers.Bind(s, &a);
  EXPECT_EQ(s->Now(), 5000);
  // An operator registering its next timer (even an overdue one) from inside OnProcessingTime
  // is not called again in the same FireDue: no loop.
  a.on_fire = [&] { s->RegisterTimer(4000); };
  s->RegisterTimer(10);
  ASSERT_TRUE(timers.FireDue().ok());
  EXPECT_EQ(a.calls.size(), 1u);
  EXPECT_EQ(timers.Next(), 4000);
  a.on_fire = nullptr;
  ASSERT_TRUE(timers.FireDue().ok());
  EXPECT_EQ(a.calls.size(), 2u);
}

TEST(InputGateWake, WaitReadyForReturnsOnWakeAndOnData) {
  InputGate gate;
  Channel<int> ch(&gate, 4);
  gate.Add(&ch);
  auto none = gate.WaitReadyFor(0);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  std::thread waker([&] { gate.Wake(); });
  auto woken = gate.WaitReadyFor(60000);  // returns at the wake, long before the bound
  waker.join();
  ASSERT_TRUE(woken.ok());
  EXPECT_FALSE(woken->has_value());
  ASSERT_TRUE(ch.PushControl(ElementKind::kWatermark, 7).ok());
  auto ready = gate.WaitReadyFor(60000);
  ASSERT_TRUE(ready.ok());
  ASSERT_TRUE(ready->has_value());
  EXPECT_EQ(**ready, 0u);
  gate.Cancel();
  EXPECT_EQ(gate.WaitReadyFor(60000).status().code(), StatusCode::kCancelled);
}

// ---- processing-time windows in a job ----

struct Event {
  std::string user;
  int64_t bytes = 0;
};

struct Row {
  std::string user;
  int64_t start = 0;
  int64_t end = 0;
  int64_t count = 0;
  int64_t sum = 0;
  bool operator<(const Row& o) const {
    return std::tie(user, start, end, count, sum) <
           std::tie(o.user, o.start, o.end, o.count, o.sum);
  }
  bool operator==(const Row& o) const = default;
};

// Records folded into a window so far: the operator read the clock for them (the records-in
// metric counts a batch before the operator sees it).
std::atomic<int64_t> g_added{0};

struct CountSum {
  int64_t count = 0;
  int64_t sum = 0;
  void Add(const exec::Stamped<Event>& s) {
    ++count;
    sum += s.record->bytes;
    g_added.fetch_add(1);
  }
  void Merge(const CountSum& o) {
    count += o.count;
    sum += o.sum;
  }
  const CountSum& Result() const { return *this; }
  void Serialize(BinaryWriter& w) const {
    w.PutI64(count);
    w.PutI64(sum);
  }
  Status Deserialize(BinaryReader& r) {
    FLOW_RETURN_IF_ERROR(r.GetI64(&count));
    return r.GetI64(&sum);
  }
};

std::string UserOf(const Event& e) {
  return e.user;
}

// Records the test hands to a running source, which stays open (idle) until Close().
class Feed {
 public:
  void Push(std::vector<Event> events) {
    std::lock_guard<std::mutex> lock(mu_);
    for (Event& e : events) queue_.push_back(std::move(e));
  }
  void Close() { closed_.store(true); }
  // Up to `max` records; kEnd once closed and drained.
  PollResult Take(Batch<Event>& out, size_t max, int64_t* taken) {
    std::lock_guard<std::mutex> lock(mu_);
    while (!queue_.empty() && out.size() < max) {
      out.Add(queue_.front(), kNoEventTime);
      queue_.pop_front();
      ++*taken;
    }
    if (!queue_.empty()) return PollResult::kRecords;
    return closed_.load() ? PollResult::kEnd : PollResult::kIdle;
  }
  // A restored source drops what the checkpoint says it had already emitted.
  void Skip(int64_t n) {
    std::lock_guard<std::mutex> lock(mu_);
    for (int64_t i = 0; i < n && !queue_.empty(); ++i) queue_.pop_front();
  }

 private:
  std::mutex mu_;
  std::deque<Event> queue_;
  std::atomic<bool> closed_{false};
};

class FeedSource final : public SourceFunction<Event> {
 public:
  explicit FeedSource(std::shared_ptr<Feed> feed) : feed_(std::move(feed)) {}
  Result<PollResult> PollBatch(Batch<Event>& out, size_t max) override {
    PollResult r = feed_->Take(out, max, &taken_);
    if (r == PollResult::kIdle) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return r;
  }
  Status SnapshotPosition(BinaryWriter* out) const override {
    out->PutI64(taken_);
    return Status::Ok();
  }
  Status RestorePosition(BinaryReader* in) override {
    FLOW_RETURN_IF_ERROR(in->GetI64(&taken_));
    feed_->Skip(taken_);
    return Status::Ok();
  }

 private:
  std::shared_ptr<Feed> feed_;
  int64_t taken_ = 0;
};

constexpr TimestampMs kStart = 1'000'000'000'000;  // a multiple of the window size
constexpr DurationMs kSize = 100;

// feed (parallelism 1) -> key by user -> processing-time window -> sink: tumbling 100 ms, or
// sessions with a gap of 100 ms.
void BuildWindowJob(Job& job, std::shared_ptr<Feed> feed, std::shared_ptr<Collected<Row>> rows,
                    bool session = false) {
  exec::WindowConfig config;
  config.size = kSize;
  config.slide = kSize;
  config.processing_time = true;
  using Tumbling = exec::WindowAggregateAdapter<std::string, Event, CountSum, Row>;
  using Session = exec::SessionWindowAdapter<std::string, Event, CountSum, Row>;
  auto make_row = [](const std::string& user, TimestampMs start, TimestampMs end,
                     const CountSum& acc) {
    return Row{user, start, end, acc.count, acc.sum};
  };
  job.Source<Event>(
         "feed", [feed](uint32_t, uint32_t) { return std::make_unique<FeedSource>(feed); },
         WatermarkSpec{.mode = TimeMode::kNone}, 1)
      .KeyBy("user", exec::KeyHashOf<std::string>(&UserOf))
      .Then<Row>("window",
                 [config, make_row, session]() -> std::unique_ptr<OneInputOperator<Event, Row>> {
                   if (session) return std::make_unique<Session>(config, &UserOf, make_row);
                   return std::make_unique<Tumbling>(config, &UserOf, make_row);
                 })
      .Sink("sink", CollectingSinkFactory(rows), 1);
}

JobOptions ClockOptions(uint32_t parallelism, std::shared_ptr<ManualClock> clock) {
  JobOptions options;
  options.parallelism = parallelism;
  options.clock = std::move(clock);
  return options;
}

// BuildWindowJob's job, running on its own thread from construction on: push records into `feed`,
// watch `rows`; Wait after closing the feed or requesting a stop. `queued`: records in the feed
// before the job starts (a restored source skips what it had already taken).
struct RunningWindowJob {
  explicit RunningWindowJob(const JobOptions& options, bool session = false,
                            std::vector<Event> queued = {})
      : job(options) {
    feed->Push(std::move(queued));
    BuildWindowJob(job, feed, rows, session);
    done = std::async(std::launch::async, [this] { return job.Execute(); });
  }
  // The job's status once it ended; an error when it did not end within 60 s.
  Status Wait() {
    if (done.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
      return Status::Internal("the job did not end within 60 s");
    }
    return done.get();
  }
  Status CloseAndWait() {
    feed->Close();
    return Wait();
  }

  std::shared_ptr<Feed> feed = std::make_shared<Feed>();
  std::shared_ptr<Collected<Row>> rows = std::make_shared<Collected<Row>>();
  Job job;
  std::future<Status> done;
};

// Records the window operator received so far (all subtasks).
int64_t WindowRecordsIn(Job& job, uint32_t parallelism) {
  int64_t n = 0;
  for (uint32_t i = 0; i < parallelism; ++i) {
    n +=
        job.metrics()
            .Counter(kMetricRecordsIn, "", {{"operator", "window"}, {"subtask", std::to_string(i)}})
            ->value();
  }
  return n;
}

std::vector<Row> Sorted(std::vector<Row> rows) {
  std::sort(rows.begin(), rows.end());
  return rows;
}

std::vector<Row> RowsOf(const Collected<Row>& c) {
  std::vector<Row> rows;
  for (const auto& item : c.Items()) rows.push_back(item.record);
  return Sorted(rows);
}

// Random events over `keys` users; adds the window [start, start + kSize) they fall in to `want`.
std::vector<Event> MakeEvents(std::mt19937& rng, int n, int keys, TimestampMs start,
                              std::vector<Row>* want) {
  std::map<std::string, Row> per_user;
  std::vector<Event> events;
  for (int i = 0; i < n; ++i) {
    std::string user = "u";  // appended, not `"u" + ...`: GCC 12 warns falsely (-Wrestrict) on that
    user += std::to_string(rng() % static_cast<uint32_t>(keys));
    Event e{user, static_cast<int64_t>(rng() % 1000)};
    Row& r = per_user[e.user];
    r.user = e.user;
    r.start = start;
    r.end = start + kSize;
    ++r.count;
    r.sum += e.bytes;
    events.push_back(std::move(e));
  }
  for (auto& [_, r] : per_user) want->push_back(r);
  return events;
}

class ProcessingTimeJob : public ::testing::TestWithParam<uint32_t> {};

TEST_P(ProcessingTimeJob, WindowsFireWhenTheClockPassesTheirEndWithoutFurtherInput) {
  const uint32_t parallelism = GetParam();
  auto clock = std::make_shared<ManualClock>(kStart + 10);
  RunningWindowJob run(ClockOptions(parallelism, clock));
  auto& feed = run.feed;
  auto& rows = run.rows;

  std::mt19937 rng(parallelism);
  std::vector<Row> want;
  g_added = 0;
  feed->Push(MakeEvents(rng, 600, 23, kStart, &want));
  ASSERT_TRUE(WaitFor([&] { return g_added.load() == 600; }, "the window to take 600 records"));
  // The clock has not reached the window's end: nothing can have fired.
  EXPECT_TRUE(rows->Items().empty());

  // No record and no watermark follows: only the clock moves past the end.
  clock->Set(kStart + kSize);
  ASSERT_TRUE(
      WaitFor([&] { return rows->Items().size() == want.size(); }, "the first window to fire"));
  EXPECT_EQ(RowsOf(*rows), Sorted(want));

  // A second window, fed while the first is done, fires the same way.
  clock->Set(kStart + kSize + 30);
  feed->Push(MakeEvents(rng, 400, 11, kStart + kSize, &want));
  ASSERT_TRUE(WaitFor([&] { return g_added.load() == 1000; }, "the window to take 1000 records"));
  clock->Advance(500);
  ASSERT_TRUE(
      WaitFor([&] { return rows->Items().size() == want.size(); }, "the second window to fire"));
  EXPECT_EQ(RowsOf(*rows), Sorted(want));

  Status s = run.CloseAndWait();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(RowsOf(*rows), Sorted(want))
      << "each window fires once, nothing is left at end of input";
}

// At clock c records stamped c may still arrive, so a window ending at e fires at clock e, not
// e - 1: records of its last millisecond are counted, never dropped as late.
TEST_P(ProcessingTimeJob, RecordsOfTheLastMillisecondCountInTheirWindow) {
  const uint32_t parallelism = GetParam();
  auto clock = std::make_shared<ManualClock>(kStart + 10);
  RunningWindowJob run(ClockOptions(parallelism, clock));
  auto& feed = run.feed;
  auto& rows = run.rows;
  std::mt19937 rng(70 + parallelism);
  std::vector<Row> first, last;
  g_added = 0;
  feed->Push(MakeEvents(rng, 200, 7, kStart, &first));
  ASSERT_TRUE(WaitFor([&] { return g_added.load() == 200; }, "the first records"));
  clock->Set(kStart + kSize - 1);  // the window's last millisecond
  feed->Push(MakeEvents(rng, 100, 7, kStart, &last));
  ASSERT_TRUE(WaitFor([&] { return g_added.load() == 300; }, "the last millisecond's records"));
  clock->Set(kStart + kSize);
  // One row per user with both parts added up.
  std::map<std::string, Row> merged;
  for (const std::vector<Row>* part : {&first, &last}) {
    for (const Row& r : *part) {
      Row& m = merged[r.user];
      m = Row{r.user, r.start, r.end, m.count + r.count, m.sum + r.sum};
    }
  }
  std::vector<Row> want;
  for (const auto& [_, r] : merged) want.push_back(r);
  ASSERT_TRUE(WaitFor([&] { return rows->Items().size() == want.size(); }, "the window to fire"));
  EXPECT_EQ(RowsOf(*rows), Sorted(want));
  Status s = run.CloseAndWait();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(RowsOf(*rows), Sorted(want));
}

TEST_P(ProcessingTimeJob, SessionsCloseWhenTheClockPassesTheGap) {
  const uint32_t parallelism = GetParam();
  const TimestampMs t0 = kStart + 1234;
  auto clock = std::make_shared<ManualClock>(t0);
  RunningWindowJob run(ClockOptions(parallelism, clock), /*session=*/true);
  auto& feed = run.feed;
  auto& rows = run.rows;
  // Every record arrives at clock t0: one session [t0, t0 + gap) per user.
  std::mt19937 rng(40 + parallelism);
  std::vector<Row> want;
  g_added = 0;
  feed->Push(MakeEvents(rng, 300, 13, t0, &want));
  ASSERT_TRUE(WaitFor([&] { return g_added.load() == 300; }, "the sessions to take 300 records"));
  EXPECT_TRUE(rows->Items().empty());
  clock->Set(t0 + kSize);
  ASSERT_TRUE(
      WaitFor([&] { return rows->Items().size() == want.size(); }, "the sessions to close"));
  EXPECT_EQ(RowsOf(*rows), Sorted(want));
  Status s = run.CloseAndWait();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(RowsOf(*rows), Sorted(want));
}

INSTANTIATE_TEST_SUITE_P(Parallelism, ProcessingTimeJob, ::testing::Values(1u, 4u));

class ProcessingTimeRestore : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string name = "flow_proctime_restore_";
    name += std::to_string(::getpid());
    dir_ = fs::temp_directory_path() / name;
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // Highest checkpoint id under the state dir: any chk-N directory, or only complete ones.
  int64_t MaxCheckpoint(bool complete) const {
    int64_t best = 0;
    if (!fs::exists(dir_)) return 0;
    for (const auto& e : fs::directory_iterator(dir_)) {
      const int64_t id = ParseCheckpointDir(e.path().filename().string());
      if (id < 0) continue;
      if (complete && !fs::exists(e.path() / "_metadata")) continue;
      best = std::max(best, id);
    }
    return best;
  }
  fs::path dir_;
};

TEST_F(ProcessingTimeRestore, RestoredWindowsWhoseEndPassedFirePromptly) {
  constexpr uint32_t kParallelism = 2;
  std::mt19937 rng(7);
  std::vector<Row> want;
  std::vector<Event> events = MakeEvents(rng, 500, 17, kStart, &want);
  auto clock = std::make_shared<ManualClock>(kStart + 10);
  {
    JobOptions options = ClockOptions(kParallelism, clock);
    options.checkpoint.state_dir = dir_.string();
    options.checkpoint.options.interval_ms = 20;
    RunningWindowJob run(options);
    run.feed->Push(events);
    ASSERT_TRUE(WaitFor([&] { return WindowRecordsIn(run.job, kParallelism) == 500; },
                        "the window to take the records"));
    // At most one checkpoint is in flight, so the one after it was triggered after the records
    // reached the window: its snapshot holds the open window.
    const int64_t after = MaxCheckpoint(false) + 2;
    ASSERT_TRUE(
        WaitFor([&] { return MaxCheckpoint(true) >= after; }, "a checkpoint holding the window"));
    run.job.RequestStop();  // not drained: the window does not fire
    Status s = run.Wait();
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_TRUE(run.rows->Items().empty());
  }
  // The window's end passed while the job was down; the restored job gets no input at all.
  clock->Set(kStart + 5 * kSize);
  JobOptions options = ClockOptions(kParallelism, clock);
  options.checkpoint.state_dir = dir_.string();
  RunningWindowJob run(options, /*session=*/false, events);  // the restored position skips them all
  auto& rows = run.rows;
  ASSERT_TRUE(
      WaitFor([&] { return rows->Items().size() >= want.size(); }, "the restored window to fire"));
  EXPECT_EQ(WindowRecordsIn(run.job, kParallelism), 0) << "the window fired without input";
  EXPECT_EQ(RowsOf(*rows), Sorted(want));
  Status s = run.CloseAndWait();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(RowsOf(*rows), Sorted(want));
}

}  // namespace
}  // namespace flow::rt
