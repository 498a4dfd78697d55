// The window adapter routing late records (Emitted = WithLate<Out, In>) in the real engine, split
// by WindowResults / LateRecords: per window, the results plus the late records that belong to it
// are exactly the input's records of that window (a brute-force reference over ALL records),
// each late record comes out once with its own timestamp, and the late counter is the routed one.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "flow/runtime/engine/job.h"
#include "flow/runtime/engine/sink.h"
#include "flow/runtime/engine/source.h"
#include "flow/runtime/exec/session_window_adapter.h"
#include "flow/runtime/exec/window_aggregate_adapter.h"

namespace flow::exec {
namespace {

struct Event {
  std::string user;
  int64_t id = 0;
};

struct Row {
  std::string user;
  int64_t start = 0;
  int64_t count = 0;
  int64_t ids = 0;
};

struct CountIds {
  int64_t count = 0;
  int64_t ids = 0;
  void Add(const Stamped<Event>& s) {
    ++count;
    ids += s.record->id;
  }
  void Merge(const CountIds& o) {
    count += o.count;
    ids += o.ids;
  }
  const CountIds& Result() const { return *this; }
  void Serialize(rt::BinaryWriter& w) const {
    w.PutI64(count);
    w.PutI64(ids);
  }
  rt::Status Deserialize(rt::BinaryReader& r) {
    FLOW_RETURN_IF_ERROR(r.GetI64(&count));
    return r.GetI64(&ids);
  }
};

std::string KeyOf(const Event& e) {
  return e.user;
}
Row MakeRow(const std::string& k, rt::TimestampMs s, rt::TimestampMs, const CountIds& a) {
  return Row{k, s, a.count, a.ids};
}

constexpr int64_t kSize = 100;

struct Outcome {
  std::vector<rt::Collected<Row>::Item> results;
  std::vector<rt::Collected<Event>::Item> late;
};

Outcome RunWindowJob(const std::vector<Event>& events, const std::vector<rt::TimestampMs>& ts,
                     uint32_t parallelism) {
  rt::JobOptions options;
  options.parallelism = parallelism;
  rt::Job job(options);
  rt::WatermarkSpec spec;
  spec.max_out_of_orderness = 20;
  spec.interval = 0;
  auto src = job.Source<Event>("events", rt::VectorSourceFactory(events, ts, 8), spec, 1);
  WindowConfig cfg;
  cfg.size = kSize;
  cfg.slide = kSize;
  cfg.allowed_lateness = 30;
  using Adapter = WindowAggregateAdapter<std::string, Event, CountIds, Row, WithLate<Row, Event>>;
  auto all =
      src.KeyBy("user", KeyHashOf<std::string>(&KeyOf)).Then<WithLate<Row, Event>>("window", [cfg] {
        return std::make_unique<Adapter>(cfg, &KeyOf, &MakeRow);
      });
  auto results = std::make_shared<rt::Collected<Row>>();
  auto late = std::make_shared<rt::Collected<Event>>();
  WindowResults<Row, Event>(all, "window.results", 0)
      .Sink("results", rt::CollectingSinkFactory(results));
  LateRecords<Row, Event>(all, "window.late", 0).Sink("late", rt::CollectingSinkFactory(late));
  EXPECT_EQ(job.Run(), 0);
  return Outcome{results->Items(), late->Items()};
}

TEST(LateRecordsAdapter, ResultsPlusLateRecordsAreEveryRecordOfEachWindow) {
  std::mt19937 rng(11);
  std::vector<Event> events;
  std::vector<rt::TimestampMs> ts;
  const char* users[] = {"ann", "bob", "cy"};
  for (int i = 0; i < 3000; ++i) {
    events.push_back(Event{users[rng() % 3], i});
    // Mostly in order; one record in eight up to 300 ms behind, far past watermark and lateness.
    int64_t back =
        rng() % 8 == 0 ? static_cast<int64_t>(rng() % 300) : static_cast<int64_t>(rng() % 10);
    ts.push_back(1'000'000 + i * 3 - back);
  }
  // Reference over all records: (user, window start) -> (count, id sum).
  std::map<std::pair<std::string, int64_t>, std::pair<int64_t, int64_t>> want;
  for (size_t i = 0; i < events.size(); ++i) {
    auto& w = want[{events[i].user, ts[i] - ts[i] % kSize}];
    ++w.first;
    w.second += events[i].id;
  }
  for (uint32_t parallelism : {1u, 3u}) {
    Outcome out = RunWindowJob(events, ts, parallelism);
    EXPECT_GT(out.late.size(), 50u) << "the input must produce late records";
    std::map<std::pair<std::string, int64_t>, std::pair<int64_t, int64_t>> got;
    for (const auto& r : out.results) {
      auto& w = got[{r.record.user, r.record.start}];
      EXPECT_EQ(w.first, 0) << "a window fired twice";
      w.first += r.record.count;
      w.second += r.record.ids;
    }
    std::set<int64_t> late_ids;
    for (const auto& l : out.late) {
      EXPECT_TRUE(late_ids.insert(l.record.id).second) << "late record " << l.record.id << " twice";
      ASSERT_GE(l.record.id, 0);
      ASSERT_LT(l.record.id, static_cast<int64_t>(events.size()));
      EXPECT_EQ(l.ts, ts[static_cast<size_t>(l.record.id)]) << "a late record keeps its timestamp";
      EXPECT_EQ(l.record.user, events[static_cast<size_t>(l.record.id)].user);
      auto& w = got[{l.record.user, l.ts - l.ts % kSize}];
      ++w.first;
      w.second += l.record.id;
    }
    EXPECT_EQ(got, want) << "parallelism " << parallelism;
  }
}

}  // namespace
}  // namespace flow::exec
