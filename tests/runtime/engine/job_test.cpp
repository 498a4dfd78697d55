// Job graph tests: keyed running counts against a reference, union, fan-out, chaining, two-input
// operators and bounded termination.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <random>
#include <thread>
#include <unordered_map>

#include "flow/runtime/common/key_group.h"
#include "flow/runtime/engine/job.h"
#include "flow/runtime/engine/sink.h"
#include "flow/runtime/engine/source.h"
#include "flow/runtime/state/keyed_state_backend.h"
#include "test_util.h"

namespace flow::rt {
namespace {

struct Click {
  int64_t user = 0;
  int64_t value = 0;
};

struct Count {
  int64_t user = 0;
  int64_t count = 0;
  int64_t sum = 0;
  uint32_t subtask = 0;
  KeyGroupRange groups;
};

uint64_t UserHash(const Click& c) {
  return StableHash(c.user);
}

// A keyed running count: emits (user, count so far, sum so far) for every input record.
class RunningCount final : public OneInputOperator<Click, Count> {
 public:
  Status Open(OperatorContext& ctx) override {
    subtask_ = ctx.subtask;
    groups_ = ctx.key_groups;
    return Status::Ok();
  }
  Status ProcessBatch(const Batch<Click>& batch, Output<Count>& out) override {
    for (size_t i = 0; i < batch.size(); ++i) {
      auto& [count, sum] = state_[batch.records[i].user];
      ++count;
      sum += batch.records[i].value;
      out.Emit(Count{batch.records[i].user, count, sum, subtask_, groups_}, batch.timestamps[i]);
    }
    return Status::Ok();
  }

 private:
  std::unordered_map<int64_t, std::pair<int64_t, int64_t>> state_;
  uint32_t subtask_ = 0;
  KeyGroupRange groups_;
};

std::vector<Click> RandomClicks(size_t n, int users, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> user(0, users - 1), value(1, 100);
  std::vector<Click> out;
  for (size_t i = 0; i < n; ++i) out.push_back(Click{user(rng), value(rng)});
  return out;
}

class KeyedCountTest : public ::testing::TestWithParam<uint32_t> {};

TEST_P(KeyedCountTest, MatchesReferencePerKey) {
  const uint32_t p = GetParam();
  const auto clicks = RandomClicks(20000, 37, 7 + p);
  JobOptions options;
  options.parallelism = p;
  options.batch_size = 64;
  options.channel_capacity = 4;
  Job job(options);
  auto out = std::make_shared<Collected<Count>>();
  job.Source<Click>("clicks", VectorSourceFactory(clicks))
      .KeyBy("user", UserHash)
      .Then<Count>("count", [] { return std::make_unique<RunningCount>(); })
      .Sink("collect", CollectingSinkFactory(out));
  ASSERT_TRUE(testing::ExecuteWithWatchdog(job).ok());

  // Reference: each user's final count and sum; every intermediate count 1..n appears once.
  std::map<int64_t, std::pair<int64_t, int64_t>> want;
  for (const Click& c : clicks) {
    ++want[c.user].first;
    want[c.user].second += c.value;
  }
  std::map<int64_t, std::vector<int64_t>> counts_seen;
  std::map<int64_t, std::pair<int64_t, int64_t>> got;
  auto items = out->Items();
  ASSERT_EQ(items.size(), clicks.size());
  for (const auto& item : items) {
    const Count& c = item.record;
    counts_seen[c.user].push_back(c.count);
    auto& g = got[c.user];
    if (c.count > g.first) g = {c.count, c.sum};
    // The key was routed to the subtask owning its key group.
    uint32_t group = KeyGroupForHash(StableHash(c.user), kDefaultMaxParallelism);
    EXPECT_EQ(c.subtask, SubtaskForKeyGroup(group, kDefaultMaxParallelism, p));
    EXPECT_TRUE(c.groups.Contains(group));
  }
  EXPECT_EQ(got, want);
  for (auto& [user, seen] : counts_seen) {
    std::sort(seen.begin(), seen.end());
    for (size_t i = 0; i < seen.size(); ++i)
      ASSERT_EQ(seen[i], static_cast<int64_t>(i + 1)) << "user " << user;
  }
}

INSTANTIATE_TEST_SUITE_P(Parallelism, KeyedCountTest, ::testing::Values(1u, 2u, 4u));

TEST(JobTest, UnionMergesAllInputs) {
  JobOptions options;
  options.parallelism = 2;
  Job job(options);
  std::vector<int64_t> a, b, c;
  for (int64_t i = 0; i < 1000; ++i) a.push_back(i);
  for (int64_t i = 1000; i < 1500; ++i) b.push_back(i);
  for (int64_t i = 1500; i < 1600; ++i) c.push_back(i);
  auto out = std::make_shared<Collected<int64_t>>();
  auto sa = job.Source<int64_t>("a", VectorSourceFactory(a));
  auto sb = job.Source<int64_t>("b", VectorSourceFactory(b), {}, 1);
  auto sc = job.Source<int64_t>("c", VectorSourceFactory(c), {}, 3);
  sa.Union("all", {sb, sc}).Sink("collect", CollectingSinkFactory(out));
  ASSERT_TRUE(testing::ExecuteWithWatchdog(job).ok());
  auto got = out->Records();
  std::sort(got.begin(), got.end());
  std::vector<int64_t> want;
  for (int64_t i = 0; i < 1600; ++i) want.push_back(i);
  EXPECT_EQ(got, want);
}

// Snapshots, restores and metrics are keyed by operator name: two operators under one name
// would hand one's state to the other at a restore.
TEST(JobTest, TwoOperatorsUnderOneNameAreRefused) {
  Job job;
  auto out = std::make_shared<Collected<int64_t>>();
  auto s = job.Source<int64_t>("nums", VectorSourceFactory(std::vector<int64_t>{1, 2}));
  s.Map<int64_t>("step", [](const int64_t& v) { return v; })
      .Map<int64_t>("step", [](const int64_t& v) { return v; })
      .Sink("collect", CollectingSinkFactory(out));
  Status st = testing::ExecuteWithWatchdog(job);
  EXPECT_EQ(st.code(), StatusCode::kInternal);
  EXPECT_NE(st.message().find("two operators named 'step'"), std::string::npos) << st.ToString();
}

TEST(JobTest, FanOutFeedsEveryConsumer) {
  JobOptions options;
  options.parallelism = 2;
  Job job(options);
  std::vector<int64_t> in;
  for (int64_t i = 1; i <= 500; ++i) in.push_back(i);
  auto doubled = std::make_shared<Collected<int64_t>>();
  auto evens = std::make_shared<Collected<int64_t>>();
  auto rebalanced = std::make_shared<Collected<int64_t>>();
  auto s = job.Source<int64_t>("nums", VectorSourceFactory(in));
  s.Map<int64_t>("double", [](const int64_t& v) {
     return v * 2;
   }).Sink("d", CollectingSinkFactory(doubled));
  s.Filter("even", [](const int64_t& v) {
     return v % 2 == 0;
   }).Sink("e", CollectingSinkFactory(evens));
  s.Rebalance().Sink("r", CollectingSinkFactory(rebalanced), 3);
  ASSERT_TRUE(testing::ExecuteWithWatchdog(job).ok());
  std::vector<int64_t> want_d, want_e;
  for (int64_t v : in) {
    want_d.push_back(v * 2);
    if (v % 2 == 0) want_e.push_back(v);
  }
  auto got_d = doubled->Records(), got_e = evens->Records(), got_r = rebalanced->Records();
  std::sort(got_d.begin(), got_d.end());
  std::sort(got_e.begin(), got_e.end());
  std::sort(got_r.begin(), got_r.end());
  EXPECT_EQ(got_d, want_d);
  EXPECT_EQ(got_e, want_e);
  EXPECT_EQ(got_r, in);
}

TEST(JobTest, ForwardChainsRunInOneThreadPerSubtask) {
  JobOptions options;
  options.parallelism = 3;
  Job job(options);
  std::vector<int64_t> in(300, 1);
  auto out = std::make_shared<Collected<int64_t>>();
  job.Source<int64_t>("nums", VectorSourceFactory(in))
      .Map<int64_t>("inc", [](const int64_t& v) { return v + 1; })
      .Filter("pos", [](const int64_t& v) { return v > 0; })
      .Sink("collect", CollectingSinkFactory(out));
  ASSERT_TRUE(testing::ExecuteWithWatchdog(job).ok());
  EXPECT_EQ(job.TaskCount(), 3u);  // source+map+filter+sink chained: one thread per subtask
  EXPECT_EQ(out->size(), 300u);

  JobOptions unchained = options;
  unchained.chaining = false;
  Job job2(unchained);
  auto out2 = std::make_shared<Collected<int64_t>>();
  job2.Source<int64_t>("nums", VectorSourceFactory(in))
      .Map<int64_t>("inc", [](const int64_t& v) { return v + 1; })
      .Sink("collect", CollectingSinkFactory(out2));
  ASSERT_TRUE(testing::ExecuteWithWatchdog(job2).ok());
  EXPECT_EQ(job2.TaskCount(), 9u);
  EXPECT_EQ(out2->size(), 300u);
}

TEST(JobTest, ChainFunctionAndFlatMap) {
  JobOptions options;
  options.parallelism = 2;
  Job job(options);
  std::vector<int64_t> in = {1, 2, 3, 4};
  std::vector<TimestampMs> ts = {10, 20, 30, 40};
  auto out = std::make_shared<Collected<int64_t>>();
  job.Source<int64_t>("nums", VectorSourceFactory(in, ts))
      .FlatMap<int64_t>("explode",
                        [](const int64_t& v, auto& emit) {
                          for (int64_t k = 0; k < v; ++k) emit(v * 10 + k);
                        })
      .Chain<int64_t>("fused",
                      [](const int64_t& v, TimestampMs t, Output<int64_t>& o) {
                        if (v % 10 != 1) o.Emit(v + t * 1000, t);
                      })
      .Sink("collect", CollectingSinkFactory(out));
  ASSERT_TRUE(testing::ExecuteWithWatchdog(job).ok());
  std::vector<std::pair<int64_t, TimestampMs>> got, want;
  for (const auto& item : out->Items()) got.emplace_back(item.record, item.ts);
  for (size_t i = 0; i < in.size(); ++i) {
    for (int64_t k = 0; k < in[i]; ++k) {
      int64_t v = in[i] * 10 + k;
      if (v % 10 != 1) want.emplace_back(v + ts[i] * 1000, ts[i]);
    }
  }
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want);
}

// Joins both inputs by key: emits a*1000+b for every pair with equal key seen so far.
class PairJoin final : public TwoInputOperator<Click, Click, int64_t> {
 public:
  Status ProcessBatch1(const Batch<Click>& b, Output<int64_t>& out) override {
    for (const Click& c : b.records) {
      left_[c.user].push_back(c.value);
      for (int64_t r : right_[c.user]) out.Emit(c.value * 1000 + r, 0);
    }
    return Status::Ok();
  }
  Status ProcessBatch2(const Batch<Click>& b, Output<int64_t>& out) override {
    for (const Click& c : b.records) {
      right_[c.user].push_back(c.value);
      for (int64_t l : left_[c.user]) out.Emit(l * 1000 + c.value, 0);
    }
    return Status::Ok();
  }

 private:
  std::unordered_map<int64_t, std::vector<int64_t>> left_, right_;
};

TEST(JobTest, ConnectedKeyedStreamsJoin) {
  JobOptions options;
  options.parallelism = 3;
  Job job(options);
  auto left = RandomClicks(300, 20, 1), right = RandomClicks(200, 20, 2);
  auto out = std::make_shared<Collected<int64_t>>();
  auto l = job.Source<Click>("left", VectorSourceFactory(left)).KeyBy("user", UserHash);
  auto r = job.Source<Click>("right", VectorSourceFactory(right), {}, 2).KeyBy("user", UserHash);
  Connect(l, r)
      .Then<int64_t>("join", [] { return std::make_unique<PairJoin>(); })
      .Sink("collect", CollectingSinkFactory(out));
  ASSERT_TRUE(testing::ExecuteWithWatchdog(job).ok());
  std::vector<int64_t> want;
  for (const Click& a : left) {
    for (const Click& b : right) {
      if (a.user == b.user) want.push_back(a.value * 1000 + b.value);
    }
  }
  auto got = out->Records();
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  EXPECT_EQ(got, want);
}

TEST(JobTest, ForwardWithDifferentParallelismIsAnError) {
  JobOptions options;
  options.parallelism = 2;
  Job job(options);
  job.Source<int64_t>("nums", VectorSourceFactory(std::vector<int64_t>{1}))
      .Forward()
      .Sink("collect", CollectingSinkFactory(std::make_shared<Collected<int64_t>>()), 3);
  Status s = job.Execute();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("forward"), std::string::npos) << s.message();
}

// Remembers, at Open, the state backend options its context carries.
class BackendProbe final : public OneInputOperator<int64_t, int64_t> {
 public:
  explicit BackendProbe(std::shared_ptr<std::vector<StateBackendOptions>> seen)
      : seen_(std::move(seen)) {}
  Status Open(OperatorContext& ctx) override {
    if (ctx.state_backend == nullptr) return Status::Internal("no state backend options");
    std::lock_guard<std::mutex> lock(mu_);
    seen_->push_back(*ctx.state_backend);
    return Status::Ok();
  }
  Status ProcessBatch(const Batch<int64_t>&, Output<int64_t>&) override { return Status::Ok(); }

 private:
  static inline std::mutex mu_;
  std::shared_ptr<std::vector<StateBackendOptions>> seen_;
};

// The flags reach each job's operators through their context: two jobs running at once in one
// process each see their own (there is no process-wide default to race on).
TEST(JobStateBackend, EachJobHandsItsOwnOptionsToItsOperators) {
  struct Run {
    Run(std::string b, std::string d, int64_t c)
        : backend(std::move(b)), dir(std::move(d)), cache(c) {}
    std::string backend, dir;
    int64_t cache;
    std::shared_ptr<std::vector<StateBackendOptions>> seen =
        std::make_shared<std::vector<StateBackendOptions>>();
    Status result;
  };
  std::vector<Run> runs{{"rocksdb", "/tmp/flow-a", 7}, {"heap", "/tmp/flow-b", 9}};
  std::vector<std::thread> threads;
  for (Run& run : runs) {
    threads.emplace_back([&run] {
      JobOptions options;
      options.parallelism = 2;
      options.state_backend = run.backend;
      options.state_local_dir = run.dir;
      options.state_cache_entries = run.cache;
      Job job(options);
      auto seen = run.seen;
      job.Source<int64_t>("nums", VectorSourceFactory(std::vector<int64_t>{1, 2, 3}))
          .KeyBy("n", [](int64_t v) { return StableHash(v); })
          .Then<int64_t>("probe", [seen] { return std::make_unique<BackendProbe>(seen); })
          .Sink("discard", CollectingSinkFactory(std::make_shared<Collected<int64_t>>()));
      run.result = testing::ExecuteWithWatchdog(job);
    });
  }
  for (std::thread& t : threads) t.join();
  for (const Run& run : runs) {
    ASSERT_TRUE(run.result.ok()) << run.result.ToString();
    ASSERT_EQ(run.seen->size(), 2u);
    for (const StateBackendOptions& o : *run.seen) {
      EXPECT_STREQ(StateBackendKindName(o.kind), run.backend.c_str());
      EXPECT_EQ(o.local_dir, run.dir);
      EXPECT_EQ(o.cache_entries, static_cast<size_t>(run.cache));
    }
  }
}

}  // namespace
}  // namespace flow::rt
