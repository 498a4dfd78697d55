// Event time waits for splits the source has not heard from yet (SourceFunction::SplitsPending):
// a Kafka consumer often gets one partition's first fetch before another's, and a watermark
// computed from the first alone makes the other's older records late (dropped by windows). And a
// split the source no longer reads (SourceFunction::OwnedSplits: a consumer group moved it to
// another instance) stops holding event time back. What a source publishes per split for the
// writers of repartition topics (shuffle/split_times.h) follows the same rules.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "flow/runtime/engine/job.h"
#include "flow/runtime/engine/sink.h"
#include "flow/runtime/engine/source.h"
#include "flow/runtime/shuffle/split_times.h"
#include "test_util.h"

namespace flow::rt {
namespace {

struct Seen {
  std::atomic<TimestampMs> watermark{kMinWatermark};
  std::atomic<int64_t> records{0};
  std::atomic<int64_t> late{0};  // records at or below a watermark the operator had already seen
  std::atomic<bool> second_split_delivered{false};
  std::atomic<TimestampMs> watermark_before_second{kMinWatermark};
};

// Split 0 delivers ts 1000..10000 at once. Split 1 stays unheard for `silent_polls` polls, then
// delivers ts 1500..9500, or never when `deliver_second` is false. The source ends once the
// watermark passed `end_at` (or after a 20 s liveness guard).
class TwoSplitSource final : public SourceFunction<int64_t> {
 public:
  TwoSplitSource(Seen* seen, bool report_pending, bool deliver_second, TimestampMs end_at)
      : seen_(seen),
        report_pending_(report_pending),
        deliver_second_(deliver_second),
        end_at_(end_at) {}

  Result<PollResult> PollBatch(Batch<int64_t>& out, size_t) override {
    splits_.clear();
    ++polls_;
    if (polls_ == 1) {
      for (int64_t ts = 1000; ts <= 10000; ts += 1000) Add(out, ts, 0);
      return PollResult::kRecords;
    }
    if (deliver_second_ && !second_done_ && polls_ > kSilentPolls) {
      seen_->watermark_before_second = seen_->watermark.load();
      for (int64_t ts = 1500; ts <= 9500; ts += 1000) Add(out, ts, 1);
      second_done_ = true;
      seen_->second_split_delivered = true;
      return PollResult::kRecords;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    const bool due = (!deliver_second_ || second_done_) && seen_->watermark.load() >= end_at_;
    if (due || std::chrono::steady_clock::now() > give_up_) return PollResult::kEnd;
    return PollResult::kIdle;
  }
  const std::vector<int32_t>* LastSplits() const override { return &splits_; }
  bool SplitsPending() const override {
    return report_pending_ && deliver_second_ && !second_done_;
  }

 private:
  static constexpr int kSilentPolls = 50;  // ~100 ms of empty polls: several watermark intervals

  void Add(Batch<int64_t>& out, TimestampMs ts, int32_t split) {
    out.Add(ts, ts);
    splits_.push_back(split);
  }

  Seen* seen_;
  bool report_pending_;
  bool deliver_second_;
  TimestampMs end_at_;
  int polls_ = 0;
  bool second_done_ = false;
  std::vector<int32_t> splits_;
  std::chrono::steady_clock::time_point give_up_ =
      std::chrono::steady_clock::now() + std::chrono::seconds(20);
};

// Split 0 delivers one record per poll, ts 1000, 2000, ...; split 1 is never heard from
// (SplitsPending stays true). Ends once the watermark passed `end_at`.
class SilentSecondSplit final : public SourceFunction<int64_t> {
 public:
  SilentSecondSplit(Seen* seen, TimestampMs end_at) : seen_(seen), end_at_(end_at) {}
  Result<PollResult> PollBatch(Batch<int64_t>& out, size_t) override {
    if (seen_->watermark.load() >= end_at_ || std::chrono::steady_clock::now() > give_up_)
      return PollResult::kEnd;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    next_ += 1000;
    out.Add(next_, next_);
    return PollResult::kRecords;
  }
  const std::vector<int32_t>* LastSplits() const override { return &splits_; }
  bool SplitsPending() const override { return true; }

 private:
  Seen* seen_;
  TimestampMs end_at_;
  TimestampMs next_ = 0;
  std::vector<int32_t> splits_{0};
  std::chrono::steady_clock::time_point give_up_ =
      std::chrono::steady_clock::now() + std::chrono::seconds(20);
};

// Splits 0 and 1 deliver ts 1000..3000 in the first poll; then split 0 moves away (when
// `report_owned`, OwnedSplits says only split 1 is read) and split 1 goes on, 1000 ms per poll.
// Ends once the watermark passed `end_at`, or after 3 s.
class SplitMovesAway final : public SourceFunction<int64_t> {
 public:
  SplitMovesAway(Seen* seen, bool report_owned, TimestampMs end_at)
      : seen_(seen), report_owned_(report_owned), end_at_(end_at) {}
  Result<PollResult> PollBatch(Batch<int64_t>& out, size_t) override {
    splits_.clear();
    if (seen_->watermark.load() >= end_at_ || std::chrono::steady_clock::now() > give_up_)
      return PollResult::kEnd;
    if (next_ == 0) {
      for (int32_t split : {0, 1}) {
        for (TimestampMs ts = 1000; ts <= 3000; ts += 1000) {
          out.Add(ts, ts);
          splits_.push_back(split);
        }
      }
      next_ = 3000;
      return PollResult::kRecords;
    }
    owned_ = {1};
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    next_ += 1000;
    out.Add(next_, next_);
    splits_.push_back(1);
    return PollResult::kRecords;
  }
  const std::vector<int32_t>* LastSplits() const override { return &splits_; }
  std::optional<std::pair<uint32_t, std::vector<int32_t>>> OwnedSplits() const override {
    if (!report_owned_) return std::nullopt;
    return std::make_pair(2u, owned_);
  }

 private:
  Seen* seen_;
  bool report_owned_;
  TimestampMs end_at_;
  TimestampMs next_ = 0;
  std::vector<int32_t> splits_;
  std::vector<int32_t> owned_{0, 1};
  std::chrono::steady_clock::time_point give_up_ =
      std::chrono::steady_clock::now() + std::chrono::seconds(3);
};

// Reads splits 0 and 1 (OwnedSplits), neither pending: split 0 delivers one record per poll, ts
// 1000, 2000, ...; split 1 is caught up and never delivers. After `polls` polls it delivers
// nothing more (idle) and ends after `idle_polls` more.
class CaughtUpSecondSplit final : public SourceFunction<int64_t> {
 public:
  CaughtUpSecondSplit(int polls, int idle_polls) : polls_(polls), idle_polls_(idle_polls) {}
  Result<PollResult> PollBatch(Batch<int64_t>& out, size_t) override {
    splits_.clear();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    if (++done_ > polls_)
      return done_ > polls_ + idle_polls_ ? PollResult::kEnd : PollResult::kIdle;
    out.Add(1000 * done_, 1000 * done_);
    splits_.push_back(0);
    return PollResult::kRecords;
  }
  const std::vector<int32_t>* LastSplits() const override { return &splits_; }
  std::optional<std::pair<uint32_t, std::vector<int32_t>>> OwnedSplits() const override {
    return std::make_pair(2u, std::vector<int32_t>{0, 1});
  }

 private:
  int polls_;
  int idle_polls_;
  int done_ = 0;
  std::vector<int32_t> splits_;
};

// Keeps what the source subtask last published for repartition writers, as a writer reads it.
class KeepSplitTimes final : public OneInputOperator<int64_t, int64_t> {
 public:
  explicit KeepSplitTimes(std::shared_ptr<std::optional<shuffle::SourceSplits>> kept)
      : kept_(std::move(kept)) {}
  Status Open(OperatorContext& ctx) override {
    times_ = ctx.split_times;
    return Status::Ok();
  }
  Status ProcessBatch(const Batch<int64_t>&, Output<int64_t>&) override { return Keep(); }
  Status OnWatermark(TimestampMs, Output<int64_t>&) override { return Keep(); }
  Status Finish(Output<int64_t>&) override { return Keep(); }

 private:
  Status Keep() {
    if (times_ != nullptr) *kept_ = times_->Get("src", 0);
    return Status::Ok();
  }
  std::shared_ptr<std::optional<shuffle::SourceSplits>> kept_;
  const shuffle::SplitTimes* times_ = nullptr;
};

class CountLate final : public OneInputOperator<int64_t, int64_t> {
 public:
  explicit CountLate(Seen* seen) : seen_(seen) {}
  Status ProcessBatch(const Batch<int64_t>& b, Output<int64_t>&) override {
    for (size_t i = 0; i < b.size(); ++i) {
      seen_->records.fetch_add(1);
      if (b.timestamps[i] <= seen_->watermark.load()) seen_->late.fetch_add(1);
    }
    return Status::Ok();
  }
  Status OnWatermark(TimestampMs wm, Output<int64_t>&) override {
    if (wm != kMaxWatermark) seen_->watermark = wm;
    return Status::Ok();
  }

 private:
  Seen* seen_;
};

WatermarkSpec EveryBatch(DurationMs idle_timeout) {
  WatermarkSpec spec;
  spec.interval = 0;
  spec.idle_timeout = idle_timeout;
  return spec;
}

Status RunJob(Seen* seen, SourceFactory<int64_t> factory, DurationMs idle_timeout) {
  JobOptions options;
  options.parallelism = 1;
  Job job(options);
  job.Source<int64_t>("src", std::move(factory), EveryBatch(idle_timeout))
      .Then<int64_t>("late", [seen] { return std::make_unique<CountLate>(seen); })
      .Sink("sink", CollectingSinkFactory(std::make_shared<Collected<int64_t>>()));
  return testing::ExecuteWithWatchdog(job);
}

TEST(PendingSplitsTest, WatermarkWaitsForASplitNotHeardFromYet) {
  Seen seen;
  Status s = RunJob(
      &seen,
      [&seen](uint32_t, uint32_t) {
        return std::make_unique<TwoSplitSource>(&seen, true, true, 9499);
      },
      0);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(seen.second_split_delivered.load());
  EXPECT_EQ(seen.records.load(), 19);
  EXPECT_EQ(seen.watermark_before_second.load(), kMinWatermark)
      << "a watermark went out before the second split was heard from";
  EXPECT_EQ(seen.late.load(), 0);
  EXPECT_EQ(seen.watermark.load(), 9499);  // min(10000, 9500) - 1
}

// The control: a source that does not say its second split is pending makes its records late,
// so the check above can fail.
TEST(PendingSplitsTest, WithoutPendingSplitsTheSecondSplitsRecordsAreLate) {
  Seen seen;
  Status s = RunJob(
      &seen,
      [&seen](uint32_t, uint32_t) {
        return std::make_unique<TwoSplitSource>(&seen, false, true, 9499);
      },
      0);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(seen.second_split_delivered.load());
  EXPECT_EQ(seen.watermark_before_second.load(), 9999);
  EXPECT_EQ(seen.late.load(), 9);
}

// With an idle timeout a split that never speaks stops holding time back, as an idle one does.
TEST(PendingSplitsTest, ASplitSilentPastTheIdleTimeoutStopsHoldingTheWatermark) {
  Seen seen;
  Status s = RunJob(
      &seen,
      [&seen](uint32_t, uint32_t) { return std::make_unique<SilentSecondSplit>(&seen, 9999); }, 50);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_GE(seen.watermark.load(), 9999) << "the watermark stayed held after the idle timeout";
}

// A split that moved to another instance no longer holds the watermark at its last record: after
// a restart restored it with the checkpoint, or after a rebalance took it, it would never advance.
TEST(PendingSplitsTest, ASplitTheSourceNoLongerReadsStopsHoldingTheWatermark) {
  Seen seen;
  Status s = RunJob(
      &seen,
      [&seen](uint32_t, uint32_t) { return std::make_unique<SplitMovesAway>(&seen, true, 9999); },
      0);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_GE(seen.watermark.load(), 9999) << "the split that moved away still holds the watermark";
  EXPECT_EQ(seen.late.load(), 0);
}

// The control: a source that does not say which splits it reads keeps every split it has seen,
// so the watermark stays at the moved split's last record and the check above can fail.
TEST(PendingSplitsTest, WithoutOwnedSplitsAMovedSplitHoldsTheWatermark) {
  Seen seen;
  Status s = RunJob(
      &seen,
      [&seen](uint32_t, uint32_t) { return std::make_unique<SplitMovesAway>(&seen, false, 9999); },
      0);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(seen.watermark.load(), 2999);
}

// What CaughtUpSecondSplit(polls, idle_polls) last published for repartition writers, in a job
// with the given idle timeout.
std::optional<shuffle::SourceSplits> PublishedSplits(int polls, int idle_polls,
                                                     DurationMs idle_timeout) {
  auto kept = std::make_shared<std::optional<shuffle::SourceSplits>>();
  JobOptions options;
  options.parallelism = 1;
  Job job(options);
  job.Source<int64_t>(
         "src",
         [polls, idle_polls](uint32_t, uint32_t) {
           return std::make_unique<CaughtUpSecondSplit>(polls, idle_polls);
         },
         EveryBatch(idle_timeout))
      .Then<int64_t>("keep", [kept] { return std::make_unique<KeepSplitTimes>(kept); })
      .Sink("sink", CollectingSinkFactory(std::make_shared<Collected<int64_t>>()));
  Status s = testing::ExecuteWithWatchdog(job);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return *kept;
}

// A split that is caught up without a record follows the subtask's other splits (kMaxWatermark,
// which the writer lowers to its input's watermark) and is not reported idle: an idle report
// would outlive an instance that fails, and the other instances would push event time past the
// split's new records while it waits for its next owner (they were dropped as late).
TEST(PendingSplitsTest, ACaughtUpSplitWithoutRecordsIsPublishedAtTheSubtasksWatermark) {
  const std::optional<shuffle::SourceSplits> splits = PublishedSplits(20, 0, 0);
  ASSERT_TRUE(splits.has_value());
  EXPECT_EQ(splits->total, 2u);
  ASSERT_EQ(splits->splits.size(), 2u);
  EXPECT_EQ(splits->splits[0].split, 0);
  EXPECT_FALSE(splits->splits[0].idle);
  EXPECT_EQ(splits->splits[1].split, 1);
  EXPECT_EQ(splits->splits[1].watermark, kMaxWatermark);
  EXPECT_FALSE(splits->splits[1].idle) << "a caught-up split without records was published idle";
}

// With an idle timeout, once the whole subtask is idle, so is the split that never had a record.
TEST(PendingSplitsTest, ACaughtUpSplitIsIdleOnceTheWholeSubtaskIs) {
  const std::optional<shuffle::SourceSplits> splits = PublishedSplits(5, 100, 50);
  ASSERT_TRUE(splits.has_value());
  ASSERT_EQ(splits->splits.size(), 2u);
  EXPECT_TRUE(splits->splits[0].idle);
  EXPECT_TRUE(splits->splits[1].idle);
}

}  // namespace
}  // namespace flow::rt
