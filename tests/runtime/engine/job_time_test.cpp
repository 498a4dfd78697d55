// Watermarks through running jobs: min-combining across channels, idle sources, ordering of
// operator output and forwarded watermarks, end of input.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "flow/runtime/engine/job.h"
#include "flow/runtime/engine/sink.h"
#include "flow/runtime/engine/source.h"
#include "test_util.h"

namespace flow::rt {
namespace {

// Shared between the scripted sources and the recording operator of one test.
struct Script {
  std::atomic<TimestampMs> observed{kMinWatermark};
  std::mutex mu;
  std::vector<TimestampMs> watermarks;
  std::vector<bool> sub0_open_at;  // per observed watermark: was subtask 0 still open?
  std::atomic<bool> sub0_open{true};
};

// "r17", "w300": built with += (operator+ on a literal trips a GCC 12 -Wrestrict false positive).
std::string Tag(char kind, int64_t v) {
  std::string s(1, kind);
  s += std::to_string(v);
  return s;
}

// Emits one record per poll from `timestamps`, then reports kIdle until `until` holds, then ends.
class ScriptedSource final : public SourceFunction<int64_t> {
 public:
  ScriptedSource(std::vector<TimestampMs> timestamps, std::function<bool()> until,
                 std::function<void()> on_end)
      : ts_(std::move(timestamps)), until_(std::move(until)), on_end_(std::move(on_end)) {}
  Result<PollResult> PollBatch(Batch<int64_t>& out, size_t) override {
    if (next_ < ts_.size()) {
      out.Add(static_cast<int64_t>(ts_[next_]), ts_[next_]);
      ++next_;
      return PollResult::kRecords;
    }
    // Liveness guard (not a timing assertion): give up after 20 s so a broken engine fails the
    // test's assertions instead of the 60 s watchdog.
    if (!until_() && std::chrono::steady_clock::now() < give_up_) return PollResult::kIdle;
    if (on_end_) on_end_();
    return PollResult::kEnd;
  }

 private:
  std::vector<TimestampMs> ts_;
  std::function<bool()> until_;
  std::function<void()> on_end_;
  size_t next_ = 0;
  std::chrono::steady_clock::time_point give_up_ =
      std::chrono::steady_clock::now() + std::chrono::seconds(20);
};

class RecordWatermarks final : public OneInputOperator<int64_t, int64_t> {
 public:
  explicit RecordWatermarks(Script* s) : s_(s) {}
  Status ProcessBatch(const Batch<int64_t>&, Output<int64_t>&) override { return Status::Ok(); }
  Status OnWatermark(TimestampMs wm, Output<int64_t>&) override {
    std::lock_guard<std::mutex> lock(s_->mu);
    s_->watermarks.push_back(wm);
    s_->sub0_open_at.push_back(s_->sub0_open.load());
    s_->observed = wm;
    return Status::Ok();
  }

 private:
  Script* s_;
};

WatermarkSpec EveryBatch(DurationMs idle_timeout = 0) {
  WatermarkSpec spec;
  spec.interval = 0;
  spec.idle_timeout = idle_timeout;
  return spec;
}

TEST(JobTimeTest, OperatorSeesMinimumOfChannelWatermarks) {
  Script script;
  JobOptions options;
  options.parallelism = 2;
  Job job(options);
  SourceFactory<int64_t> factory = [&script](uint32_t subtask,
                                             uint32_t) -> std::unique_ptr<SourceFunction<int64_t>> {
    if (subtask == 0) {
      return std::make_unique<ScriptedSource>(
          std::vector<TimestampMs>{100, 200, 300},
          [&script] { return script.observed.load() >= 299; },
          [&script] { script.sub0_open = false; });
    }
    return std::make_unique<ScriptedSource>(
        std::vector<TimestampMs>{1000, 2000, 3000},
        [&script] { return script.observed.load() >= 2999; }, nullptr);
  };
  job.Source<int64_t>("src", factory, EveryBatch())
      .Rebalance()
      .Then<int64_t>(
          "record", [&script] { return std::make_unique<RecordWatermarks>(&script); }, 1)
      .Sink("sink", CollectingSinkFactory(std::make_shared<Collected<int64_t>>()), 1);
  ASSERT_TRUE(testing::ExecuteWithWatchdog(job).ok());

  std::vector<TimestampMs> wms = script.watermarks;
  ASSERT_GE(wms.size(), 3u);
  for (size_t i = 1; i < wms.size(); ++i)
    EXPECT_LT(wms[i - 1], wms[i]) << "watermarks must increase";
  // While subtask 0 (max event time 300) was open, no watermark passed 299.
  for (size_t i = 0; i < wms.size(); ++i) {
    if (script.sub0_open_at[i]) {
      EXPECT_LE(wms[i], 299);
    }
  }
  EXPECT_NE(std::find(wms.begin(), wms.end(), 299), wms.end());
  EXPECT_NE(std::find(wms.begin(), wms.end(), 2999), wms.end());
  EXPECT_EQ(wms.back(), kMaxWatermark);
}

TEST(JobTimeTest, IdleSourceSubtaskDoesNotHoldBackWatermark) {
  Script script;
  JobOptions options;
  options.parallelism = 2;
  Job job(options);
  SourceFactory<int64_t> factory = [&script](uint32_t subtask,
                                             uint32_t) -> std::unique_ptr<SourceFunction<int64_t>> {
    if (subtask == 0) {
      // One early record, then silence until the others' watermark got through.
      return std::make_unique<ScriptedSource>(
          std::vector<TimestampMs>{100}, [&script] { return script.observed.load() >= 4999; },
          [&script] { script.sub0_open = false; });
    }
    return std::make_unique<ScriptedSource>(
        std::vector<TimestampMs>{1000, 2000, 3000, 4000, 5000},
        [&script] { return script.observed.load() >= 4999; }, nullptr);
  };
  job.Source<int64_t>("src", factory, EveryBatch(/*idle_timeout=*/20))
      .Rebalance()
      .Then<int64_t>(
          "record", [&script] { return std::make_unique<RecordWatermarks>(&script); }, 1)
      .Sink("sink", CollectingSinkFactory(std::make_shared<Collected<int64_t>>()), 1);
  ASSERT_TRUE(testing::ExecuteWithWatchdog(job).ok());
  auto it = std::find(script.watermarks.begin(), script.watermarks.end(), 4999);
  ASSERT_NE(it, script.watermarks.end());
  EXPECT_TRUE(script.sub0_open_at[it - script.watermarks.begin()])
      << "the watermark should pass the idle subtask while it is still open";
}

// On each watermark emits a record whose value is the watermark; logs what it receives.
struct EventLog {
  std::mutex mu;
  std::vector<std::string> events;
  void Add(std::string e) {
    std::lock_guard<std::mutex> lock(mu);
    events.push_back(std::move(e));
  }
};

class EmitOnWatermark final : public OneInputOperator<int64_t, int64_t> {
 public:
  Status ProcessBatch(const Batch<int64_t>&, Output<int64_t>&) override { return Status::Ok(); }
  Status OnWatermark(TimestampMs wm, Output<int64_t>& out) override {
    if (wm != kMaxWatermark) out.Emit(wm, wm);
    return Status::Ok();
  }
};

class Lifecycle final : public OneInputOperator<int64_t, int64_t> {
 public:
  explicit Lifecycle(EventLog* log) : log_(log) {}
  Status Open(OperatorContext&) override {
    log_->Add("open");
    return Status::Ok();
  }
  Status ProcessBatch(const Batch<int64_t>& b, Output<int64_t>&) override {
    for (int64_t v : b.records) log_->Add(Tag('r', v));
    return Status::Ok();
  }
  Status OnWatermark(TimestampMs wm, Output<int64_t>&) override {
    log_->Add(wm == kMaxWatermark ? std::string("wmax") : Tag('w', wm));
    return Status::Ok();
  }
  Status Finish(Output<int64_t>&) override {
    log_->Add("finish");
    return Status::Ok();
  }
  void Close() override { log_->Add("close"); }

 private:
  EventLog* log_;
};

TEST(JobTimeTest, RecordsEmittedOnWatermarkArriveBeforeIt) {
  EventLog log;
  JobOptions options;
  options.parallelism = 1;
  options.chaining = false;  // go through channels
  Job job(options);
  std::vector<int64_t> values;
  std::vector<TimestampMs> ts;
  for (int i = 1; i <= 50; ++i) {
    values.push_back(i);
    ts.push_back(i * 10);
  }
  job.Source<int64_t>("src", VectorSourceFactory(values, ts, /*max_per_poll=*/3), EveryBatch())
      .Then<int64_t>("emit", [] { return std::make_unique<EmitOnWatermark>(); })
      .Then<int64_t>("log", [&log] { return std::make_unique<Lifecycle>(&log); })
      .Sink("sink", CollectingSinkFactory(std::make_shared<Collected<int64_t>>()));
  ASSERT_TRUE(testing::ExecuteWithWatchdog(job).ok());
  const auto& ev = log.events;
  ASSERT_GE(ev.size(), 4u);
  EXPECT_EQ(ev.front(), "open");
  // End of input: the max watermark, then Finish, then Close, exactly once each, at the end.
  ASSERT_EQ(ev[ev.size() - 3], "wmax");
  EXPECT_EQ(ev[ev.size() - 2], "finish");
  EXPECT_EQ(ev[ev.size() - 1], "close");
  EXPECT_EQ(std::count(ev.begin(), ev.end(), "wmax"), 1);
  int watermarks = 0;
  for (size_t i = 0; i < ev.size(); ++i) {
    if (ev[i][0] != 'w' || ev[i] == "wmax") continue;
    ++watermarks;
    // The record carrying this watermark's value was emitted in OnWatermark upstream and must
    // have arrived before the watermark itself.
    std::string rec = ev[i];
    rec[0] = 'r';
    EXPECT_NE(std::find(ev.begin(), ev.begin() + i, rec), ev.begin() + i) << ev[i];
  }
  EXPECT_GT(watermarks, 0);
}

TEST(JobTimeTest, TimestampFunctionAssignsEventTime) {
  JobOptions options;
  options.parallelism = 2;
  Job job(options);
  std::vector<int64_t> values = {5, 7, 11, 13};
  auto out = std::make_shared<Collected<int64_t>>();
  job.Source<int64_t>("src", VectorSourceFactory(values), WatermarkSpec{}, 0,
                      [](const int64_t& v) -> TimestampMs { return v * 1000; })
      .Sink("sink", CollectingSinkFactory(out));
  ASSERT_TRUE(testing::ExecuteWithWatchdog(job).ok());
  auto items = out->Items();
  ASSERT_EQ(items.size(), values.size());
  for (const auto& item : items) EXPECT_EQ(item.ts, item.record * 1000);
}

TEST(JobTimeTest, ProcessingTimeStampsRecordsWithTheClock) {
  JobOptions options;
  Job job(options);
  auto out = std::make_shared<Collected<int64_t>>();
  WatermarkSpec spec;
  spec.mode = TimeMode::kProcessingTime;
  TimestampMs before = WallNowMs();
  job.Source<int64_t>("src", VectorSourceFactory(std::vector<int64_t>{1, 2, 3}, {1, 2, 3}), spec)
      .Sink("sink", CollectingSinkFactory(out));
  ASSERT_TRUE(testing::ExecuteWithWatchdog(job).ok());
  TimestampMs after = WallNowMs();
  for (const auto& item : out->Items()) {
    EXPECT_GE(item.ts, before);
    EXPECT_LE(item.ts, after);
  }
}

}  // namespace
}  // namespace flow::rt
