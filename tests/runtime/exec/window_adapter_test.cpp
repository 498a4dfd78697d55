// The exec adapters on hand-written jobs: keyed tumbling/sliding windows and running aggregates
// through the real engine, compared with brute-force references computed here.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "flow/runtime/engine/job.h"
#include "flow/runtime/engine/sink.h"
#include "flow/runtime/engine/source.h"
#include "flow/runtime/exec/chain.h"
#include "flow/runtime/exec/running_aggregate_adapter.h"
#include "flow/runtime/exec/window_aggregate_adapter.h"

namespace flow::exec {
namespace {

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
    return std::tie(user, start, count, sum) < std::tie(o.user, o.start, o.count, o.sum);
  }
  bool operator==(const Row& o) const = default;
};

struct CountSum {
  int64_t count = 0;
  int64_t sum = 0;
  // Window accumulators receive each record with its timestamp (exec::Stamped).
  void Add(const Stamped<Event>& s) {
    ++count;
    sum += s.record->bytes;
  }
  void Merge(const CountSum& o) {
    count += o.count;
    sum += o.sum;
  }
  const CountSum& Result() const { return *this; }
  void Serialize(rt::BinaryWriter& w) const {
    w.PutI64(count);
    w.PutI64(sum);
  }
  rt::Status Deserialize(rt::BinaryReader& r) {
    FLOW_RETURN_IF_ERROR(r.GetI64(&count));
    return r.GetI64(&sum);
  }
};

std::string KeyOf(const Event& e) {
  return e.user;
}
Row MakeRow(const std::string& k, rt::TimestampMs s, rt::TimestampMs e, const CountSum& a) {
  return Row{k, s, e, a.count, a.sum};
}

struct Input {
  std::vector<Event> events;
  std::vector<rt::TimestampMs> ts;
};

// Out-of-order input: timestamps jitter up to `disorder` ms around an increasing clock.
Input MakeInput(int n, int64_t disorder, uint32_t seed) {
  std::mt19937 rng(seed);
  Input in;
  const char* users[] = {"ann", "bob", "cy", "dee", "eve"};
  for (int i = 0; i < n; ++i) {
    in.events.push_back(Event{users[rng() % 5], static_cast<int64_t>(rng() % 1000)});
    int64_t jitter = static_cast<int64_t>(rng() % static_cast<uint32_t>(disorder + 1));
    in.ts.push_back(1'000'000 + i * 37 - jitter);
  }
  return in;
}

std::vector<Row> Reference(const Input& in, int64_t size, int64_t slide) {
  std::map<std::pair<std::string, int64_t>, Row> windows;
  for (size_t i = 0; i < in.events.size(); ++i) {
    int64_t t = in.ts[i];
    int64_t last = t - ((t % slide) + slide) % slide;
    for (int64_t s = last; s > t - size; s -= slide) {
      Row& r = windows[{in.events[i].user, s}];
      r.user = in.events[i].user;
      r.start = s;
      r.end = s + size;
      ++r.count;
      r.sum += in.events[i].bytes;
    }
  }
  std::vector<Row> out;
  for (auto& [k, r] : windows) out.push_back(r);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<Row> RunWindowJob(const Input& in, WindowConfig cfg, uint32_t parallelism,
                              int64_t out_of_order) {
  rt::JobOptions options;
  options.parallelism = parallelism;
  rt::Job job(options);
  rt::WatermarkSpec spec;
  spec.max_out_of_orderness = out_of_order;
  spec.interval = 0;
  auto src = job.Source<Event>("events", rt::VectorSourceFactory(in.events, in.ts, 16), spec);
  auto windows = src.KeyBy("user", KeyHashOf<std::string>(&KeyOf)).Then<Row>("window", [cfg] {
    return std::make_unique<WindowAggregateAdapter<std::string, Event, CountSum, Row>>(cfg, &KeyOf,
                                                                                       &MakeRow);
  });
  auto collected = std::make_shared<rt::Collected<Row>>();
  windows.Sink("collect", rt::CollectingSinkFactory(collected));
  EXPECT_EQ(job.Run(), 0);
  std::vector<Row> out = collected->Records();
  std::sort(out.begin(), out.end());
  return out;
}

TEST(WindowAggregateAdapterTest, TumblingEqualsBruteForceAtParallelism1And4) {
  // Disorder stays within the watermark delay, so no record is late.
  Input in = MakeInput(3000, 500, 7);
  std::vector<Row> want = Reference(in, 2000, 2000);
  ASSERT_FALSE(want.empty());
  for (uint32_t p : {1u, 4u}) {
    EXPECT_EQ(RunWindowJob(in, WindowConfig{2000, 2000, 0}, p, 600), want) << "parallelism " << p;
  }
}

TEST(WindowAggregateAdapterTest, SlidingEqualsBruteForce) {
  Input in = MakeInput(2000, 300, 11);
  std::vector<Row> want = Reference(in, 3000, 1000);
  for (uint32_t p : {1u, 4u}) {
    EXPECT_EQ(RunWindowJob(in, WindowConfig{3000, 1000, 0}, p, 400), want) << "parallelism " << p;
  }
}

TEST(WindowAggregateAdapterTest, InvalidWindowFailsTheJobWithAMessage) {
  Input in = MakeInput(10, 0, 1);
  rt::Job job;
  auto src = job.Source<Event>("events", rt::VectorSourceFactory(in.events, in.ts));
  WindowConfig bad{0, 0, 0};
  auto windows = src.KeyBy("user", KeyHashOf<std::string>(&KeyOf)).Then<Row>("bad_window", [bad] {
    return std::make_unique<WindowAggregateAdapter<std::string, Event, CountSum, Row>>(bad, &KeyOf,
                                                                                       &MakeRow);
  });
  windows.Sink("collect", rt::CollectingSinkFactory(std::make_shared<rt::Collected<Row>>()));
  rt::Status s = job.Execute();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("bad_window"), std::string::npos) << s.ToString();
}

struct Running {
  std::string user;
  int64_t count = 0;
};
Running MakeRunning(const std::string& k, const CountSum& a) {
  return Running{k, a.count};
}

TEST(RunningAggregateAdapterTest, EmitsEveryUpdatedCountPerKey) {
  Input in = MakeInput(500, 0, 3);
  for (uint32_t p : {1u, 3u}) {
    rt::JobOptions options;
    options.parallelism = p;
    rt::Job job(options);
    auto src = job.Source<Event>("events", rt::VectorSourceFactory(in.events, in.ts, 8));
    auto counts = src.KeyBy("user", KeyHashOf<std::string>(&KeyOf)).Then<Running>("running", [] {
      return std::make_unique<RunningAggregateAdapter<std::string, Event, CountSum, Running>>(
          &KeyOf, &MakeRunning);
    });
    auto collected = std::make_shared<rt::Collected<Running>>();
    counts.Sink("collect", rt::CollectingSinkFactory(collected));
    ASSERT_EQ(job.Run(), 0);
    // Per key the updates are 1, 2, ..., n in order (one subtask owns a key).
    std::map<std::string, std::vector<int64_t>> seen;
    for (const Running& r : collected->Records()) seen[r.user].push_back(r.count);
    std::map<std::string, int64_t> totals;
    for (const Event& e : in.events) ++totals[e.user];
    ASSERT_EQ(seen.size(), totals.size());
    for (const auto& [user, counts_seen] : seen) {
      ASSERT_EQ(static_cast<int64_t>(counts_seen.size()), totals[user]) << user;
      for (size_t i = 0; i < counts_seen.size(); ++i)
        EXPECT_EQ(counts_seen[i], static_cast<int64_t>(i + 1)) << user;
    }
  }
}

TEST(StatusChainTest, AnExpressionErrorFailsTheJobNamingTheSite) {
  Input in = MakeInput(5, 0, 2);
  rt::Job job;
  auto src = job.Source<Event>("events", rt::VectorSourceFactory(in.events, in.ts));
  auto divided = AddChain<Event>(src, "divide",
                                 [](const Event& e, rt::TimestampMs ts, rt::Output<Event>& out) {
                                   Event copy = e;
                                   copy.bytes = ops::Div(e.bytes, int64_t{0}, "job.flow:3:9");
                                   out.Emit(std::move(copy), ts);
                                   return rt::Status::Ok();
                                 });
  divided.Sink("collect", rt::CollectingSinkFactory(std::make_shared<rt::Collected<Event>>()));
  rt::Status s = job.Execute();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("job.flow:3:9"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace flow::exec
