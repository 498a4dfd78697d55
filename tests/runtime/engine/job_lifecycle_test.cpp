// Failures, backpressure and graceful stop of running jobs. Every job runs under a 60 s watchdog.

#include <gtest/gtest.h>

#include <signal.h>

#include <atomic>
#include <cstdio>
#include <stdexcept>
#include <thread>

#include "flow/runtime/common/key_group.h"
#include "flow/runtime/engine/job.h"
#include "flow/runtime/engine/main.h"
#include "flow/runtime/engine/sink.h"
#include "flow/runtime/engine/source.h"
#include "test_util.h"

namespace flow::rt {
namespace {

// An unbounded generator that counts what it produced.
SourceFactory<int64_t> Endless(std::atomic<int64_t>* produced) {
  return GeneratorSourceFactory<int64_t>([produced](uint64_t i, int64_t* out) {
    *out = static_cast<int64_t>(i);
    produced->fetch_add(1);
    return true;
  });
}

class FailAt final : public OneInputOperator<int64_t, int64_t> {
 public:
  FailAt(int64_t at, bool throw_instead) : at_(at), throw_(throw_instead) {}
  Status ProcessBatch(const Batch<int64_t>& b, Output<int64_t>& out) override {
    for (size_t i = 0; i < b.size(); ++i) {
      if (b.records[i] == at_) {
        if (throw_) throw std::runtime_error("boom from user code");
        return Status::InvalidArgument("record 1234 is bad");
      }
      out.Emit(b.records[i], b.timestamps[i]);
    }
    return Status::Ok();
  }

 private:
  int64_t at_;
  bool throw_;
};

class FailureTest : public ::testing::TestWithParam<bool> {};

TEST_P(FailureTest, FailingOperatorCancelsTheWholeJob) {
  // Unbounded source, keyed exchange, a failing operator, backpressured upstream: the job must
  // still end, with the operator's error.
  std::atomic<int64_t> produced{0};
  JobOptions options;
  options.parallelism = 3;
  options.channel_capacity = 2;
  options.batch_size = 16;
  Job job(options);
  const bool throws = GetParam();
  job.Source<int64_t>("gen", Endless(&produced))
      .KeyBy("v", [](const int64_t& v) { return StableHash(v); })
      .Then<int64_t>("failing", [throws] { return std::make_unique<FailAt>(1234, throws); })
      .Sink("sink", CollectingSinkFactory(std::make_shared<Collected<int64_t>>()));
  Status s = testing::ExecuteWithWatchdog(job);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("operator 'failing' subtask"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(throws ? "boom from user code" : "record 1234 is bad"),
            std::string::npos)
      << s.message();
  EXPECT_EQ(s.code(), throws ? StatusCode::kInternal : StatusCode::kInvalidArgument);
}

INSTANTIATE_TEST_SUITE_P(StatusOrException, FailureTest, ::testing::Bool());

class FailingSource final : public SourceFunction<int64_t> {
 public:
  Result<PollResult> PollBatch(Batch<int64_t>& out, size_t) override {
    if (++polls_ > 3) return Status::IoError("disk went away");
    out.Add(polls_, 0);
    return PollResult::kRecords;
  }

 private:
  int polls_ = 0;
};

TEST(TaskFailureTest, FailingSourceEndsJobWithExitCode1) {
  JobOptions options;
  options.parallelism = 2;
  Job job(options);
  job.Source<int64_t>("src", [](uint32_t, uint32_t) { return std::make_unique<FailingSource>(); })
      .Sink("sink", CollectingSinkFactory(std::make_shared<Collected<int64_t>>()));
  auto fut = std::async(std::launch::async, [&job] { return job.Run(); });
  ASSERT_EQ(fut.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  EXPECT_EQ(fut.get(), 1);
}

class FailingSink final : public SinkFunction<int64_t> {
 public:
  Status Write(const Batch<int64_t>& b) override {
    seen_ += static_cast<int64_t>(b.size());
    if (seen_ > 1000) return Status::Unavailable("broker down");
    return Status::Ok();
  }

 private:
  int64_t seen_ = 0;
};

TEST(TaskFailureTest, FailingSinkWithUnboundedUpstreamDoesNotHang) {
  std::atomic<int64_t> produced{0};
  JobOptions options;
  options.parallelism = 2;
  options.channel_capacity = 2;
  Job job(options);
  job.Source<int64_t>("gen", Endless(&produced)).Rebalance().Sink("sink", [](uint32_t, uint32_t) {
    return std::make_unique<FailingSink>();
  });
  Status s = testing::ExecuteWithWatchdog(job);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("operator 'sink'"), std::string::npos) << s.message();
}

TEST(TaskFailureTest, ThrowingFactoryIsAnErrorNotACrash) {
  Job job(JobOptions{});
  job.Source<int64_t>("src", VectorSourceFactory(std::vector<int64_t>{1}))
      .Then<int64_t>("op",
                     []() -> std::unique_ptr<OneInputOperator<int64_t, int64_t>> {
                       throw std::runtime_error("no memory for you");
                     })
      .Sink("sink", CollectingSinkFactory(std::make_shared<Collected<int64_t>>()));
  Status s = testing::ExecuteWithWatchdog(job);
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_NE(s.message().find("no memory for you"), std::string::npos) << s.message();
}

// A sink that is slow and checks how far the source got ahead of it.
struct Flow {
  std::atomic<int64_t> produced{0};
  std::atomic<int64_t> consumed{0};
  std::atomic<int64_t> max_in_flight{0};
};

class SlowSink final : public SinkFunction<int64_t> {
 public:
  explicit SlowSink(Flow* f) : f_(f) {}
  Status Write(const Batch<int64_t>& b) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    int64_t consumed =
        f_->consumed.fetch_add(static_cast<int64_t>(b.size())) + static_cast<int64_t>(b.size());
    int64_t in_flight = f_->produced.load() - consumed;
    int64_t prev = f_->max_in_flight.load();
    while (in_flight > prev && !f_->max_in_flight.compare_exchange_weak(prev, in_flight)) {
    }
    return Status::Ok();
  }

 private:
  Flow* f_;
};

TEST(BackpressureTest, QueuesStayWithinTheConfiguredBound) {
  Flow flow;
  JobOptions options;
  options.parallelism = 2;
  options.channel_capacity = 3;
  options.batch_size = 32;
  Job job(options);
  job.Source<int64_t>("gen", Endless(&flow.produced), {}, 1)
      .Rebalance()
      .Sink("slow", [&flow](uint32_t, uint32_t) { return std::make_unique<SlowSink>(&flow); });
  std::thread stopper([&] {
    while (flow.consumed.load() < 20000) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    job.RequestStop();
  });
  Status s = testing::ExecuteWithWatchdog(job);
  stopper.join();
  ASSERT_TRUE(s.ok()) << s.ToString();
  // Channels never held more than their capacity, and they did fill up (the source was throttled).
  EXPECT_LE(job.MaxChannelDepth(), options.channel_capacity);
  EXPECT_EQ(job.MaxChannelDepth(), options.channel_capacity);
  // Records between source and sink: at most 2 channels x 3 batches x 32, plus the batch being
  // generated and the one being written.
  EXPECT_LE(flow.max_in_flight.load(), 2 * 3 * 32 + 2 * 32);
  // Draining delivered everything the source produced.
  EXPECT_EQ(flow.consumed.load(), flow.produced.load());
}

TEST(StopTest, RequestStopDrainsAndFlushes) {
  std::atomic<int64_t> produced{0};
  JobOptions options;
  options.parallelism = 2;
  Job job(options);
  auto out = std::make_shared<Collected<int64_t>>();
  job.Source<int64_t>("gen", Endless(&produced))
      .KeyBy("v", [](const int64_t& v) { return StableHash(v); })
      .Map<int64_t>("same", [](const int64_t& v) { return v; })
      .Sink("sink", CollectingSinkFactory(out));
  std::thread stopper([&] {
    while (out->size() < 5000) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    job.RequestStop();
  });
  auto fut = std::async(std::launch::async, [&job] { return job.Run(); });
  ASSERT_EQ(fut.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  EXPECT_EQ(fut.get(), 0);
  stopper.join();
  EXPECT_EQ(static_cast<int64_t>(out->size()), produced.load());
  EXPECT_EQ(out->flushes(), 2);  // each sink subtask flushed once at the end
}

// In a child process: a job whose source raises SIGTERM after 1000 records; RunMain must stop it
// gracefully and exit 0 after the sink flushed everything the source produced.
struct SignalState {
  std::atomic<int64_t> produced{0};
  std::atomic<int64_t> written{0};
};

class CountingSink final : public SinkFunction<int64_t> {
 public:
  explicit CountingSink(SignalState* s) : s_(s) {}
  Status Write(const Batch<int64_t>& b) override {
    s_->written.fetch_add(static_cast<int64_t>(b.size()));
    return Status::Ok();
  }
  Status Flush() override {
    flushed_ = true;
    return Status::Ok();
  }
  void Close() override { std::fprintf(stderr, "sink closed flushed=%d\n", flushed_ ? 1 : 0); }

 private:
  SignalState* s_;
  bool flushed_ = false;
};

int RunSignalledJob() {
  static SignalState state;
  const char* argv[] = {"job", "--parallelism", "2", "--progress-interval", "0"};
  int rc = RunMain(5, argv, {}, [](Job& job) {
    job.Source<int64_t>("gen", GeneratorSourceFactory<int64_t>([](uint64_t i, int64_t* out) {
                          *out = static_cast<int64_t>(i);
                          if (state.produced.fetch_add(1) == 1000) ::raise(SIGTERM);
                          return true;
                        }))
        .Rebalance()
        .Sink(
            "count", [](uint32_t, uint32_t) { return std::make_unique<CountingSink>(&state); }, 1);
    return Status::Ok();
  });
  std::fprintf(stderr, "drained=%s\n",
               state.produced.load() == state.written.load() ? "yes" : "no");
  return rc;
}

TEST(StopTest, SigtermStopsGracefullyWithExitCode0) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::exit(RunSignalledJob()), ::testing::ExitedWithCode(0),
              "stop requested by signal(.|\n)*sink closed flushed=1(.|\n)*drained=yes");
}

TEST(ProgressTest, ReportsProgressLinesWhileRunning) {
  JobOptions options;
  options.progress_interval_s = 0.05;
  Job job(options);
  // A source that needs at least 300 ms, so several 50 ms progress intervals pass.
  job.Source<int64_t>("slow", GeneratorSourceFactory<int64_t>([](uint64_t i, int64_t* out) {
                        std::this_thread::sleep_for(std::chrono::milliseconds(1));
                        *out = static_cast<int64_t>(i);
                        return i < 300;
                      }))
      .Sink("sink", CollectingSinkFactory(std::make_shared<Collected<int64_t>>()));
  ::testing::internal::CaptureStderr();
  Status s = testing::ExecuteWithWatchdog(job);
  std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(s.ok());
  EXPECT_NE(err.find(" INFO progress running in_per_s="), std::string::npos) << err;
  EXPECT_NE(err.find(" out_total="), std::string::npos) << err;
  EXPECT_NE(err.find(" watermark_lag="), std::string::npos) << err;
}

}  // namespace
}  // namespace flow::rt
