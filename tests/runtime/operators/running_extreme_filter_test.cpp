// RunningExtremeFilter against a reference computed here: the maximum (minimum) key per tumbling
// window over the records a window aggregate fed by the same subtask counts (those whose window
// was not behind the watermark when they arrived). Every record whose key equals its window's
// result must pass, whatever the arrival order and however many records are late; most others
// are dropped.

#include "flow/runtime/operators/running_extreme_filter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

namespace flow::rt {
namespace {

struct Rec {
  int64_t id = 0;
  int64_t key = 0;
};
struct KeyOf {
  int64_t operator()(const Rec& r) const { return r.key; }
};
using Filter = RunningExtremeFilter<Rec, int64_t, KeyOf>;

class Collect final : public BatchConsumer<Rec> {
 public:
  Status ConsumeView(const Batch<Rec>& batch) override {
    for (size_t i = 0; i < batch.size(); ++i) ids.push_back(batch.records[i].id);
    return Status::Ok();
  }
  Status OnWatermark(TimestampMs) override { return Status::Ok(); }
  Status OnIdle(bool) override { return Status::Ok(); }
  Status OnBarrier(int64_t) override { return Status::Ok(); }
  Status OnEnd(bool) override { return Status::Ok(); }
  std::vector<int64_t> ids;
};

struct Event {
  bool watermark = false;
  TimestampMs ts = 0;  // the record's time, or the watermark
  Rec rec;
};

// Records with times that mostly advance, some displaced far back (late), a watermark every few.
std::vector<Event> Stream(uint32_t seed, int n, int64_t keys) {
  std::mt19937 rng(seed);
  std::vector<Event> out;
  TimestampMs now = -3000, max_seen = kMinWatermark;
  for (int i = 0; i < n; ++i) {
    now += static_cast<TimestampMs>(rng() % 4);
    TimestampMs ts = now - static_cast<TimestampMs>(rng() % 30);
    if (rng() % 10 == 0) ts -= 100 + static_cast<TimestampMs>(rng() % 200);  // late
    out.push_back({false, ts, Rec{i, static_cast<int64_t>(rng() % keys)}});
    max_seen = std::max(max_seen, ts);
    if (i % 7 == 6) out.push_back({true, max_seen - 31, {}});
  }
  out.push_back({true, kMaxWatermark, {}});
  return out;
}

TEST(RunningExtremeFilterTest, EveryRecordEqualToItsWindowsResultPasses) {
  const DurationMs size = 50;
  for (bool max : {true, false}) {
    for (uint32_t seed : {1u, 2u, 3u, 4u}) {
      for (int64_t keys : {3, 1000}) {
        SCOPED_TRACE(std::string(max ? "max" : "min") + " seed " + std::to_string(seed) + " keys " +
                     std::to_string(keys));
        std::vector<Event> events = Stream(seed, 4000, keys);
        // Reference: the window aggregate's result per window.
        std::map<TimestampMs, int64_t> result;
        TimestampMs wm = kMinWatermark;
        for (const Event& e : events) {
          if (e.watermark) {
            wm = std::max(wm, e.ts);
            continue;
          }
          TimestampMs start = e.ts - (((e.ts % size) + size) % size);
          if (start + size - 1 <= wm) continue;  // late: the aggregate drops it
          auto [it, first] = result.try_emplace(start, e.rec.key);
          if (!first)
            it->second = max ? std::max(it->second, e.rec.key) : std::min(it->second, e.rec.key);
        }
        std::vector<int64_t> must_pass;
        size_t records = 0;
        for (const Event& e : events) {
          if (e.watermark) continue;
          ++records;
          TimestampMs start = e.ts - (((e.ts % size) + size) % size);
          auto it = result.find(start);
          if (it != result.end() && it->second == e.rec.key) must_pass.push_back(e.rec.id);
        }

        Collect sink;
        Output<Rec> out(&sink, 64, nullptr);
        Filter filter(size, max, KeyOf{});
        Batch<Rec> batch;
        auto flush = [&] {
          ASSERT_TRUE(filter.ProcessBatch(batch, out).ok());
          batch.Clear();
        };
        for (const Event& e : events) {
          if (e.watermark) {
            flush();
            ASSERT_TRUE(filter.OnWatermark(e.ts, out).ok());
          } else {
            batch.Add(e.rec, e.ts);
            if (batch.size() == 5) flush();
          }
        }
        flush();
        ASSERT_TRUE(out.Flush().ok());
        std::vector<int64_t> passed = sink.ids;
        std::sort(passed.begin(), passed.end());
        for (int64_t id : must_pass) {
          EXPECT_TRUE(std::binary_search(passed.begin(), passed.end(), id)) << "record " << id;
        }
        EXPECT_EQ(filter.dropped() + passed.size(), records);
        if (keys == 1000) {
          EXPECT_GT(filter.dropped(), records / 2);
        }
        EXPECT_EQ(filter.windows(), 0u);  // the last watermark evicted every window
      }
    }
  }
}

// A restored (new) filter knows no extremes: it passes everything until records arrive again.
TEST(RunningExtremeFilterTest, ANewFilterDropsNothingItHasNoEvidenceFor) {
  Collect sink;
  Output<Rec> out(&sink, 64, nullptr);
  Filter filter(10, /*max=*/true, KeyOf{});
  Batch<Rec> batch;
  batch.Add(Rec{1, 5}, 3);
  batch.Add(Rec{2, 9}, 4);
  batch.Add(Rec{3, 7}, 5);   // below 9 in window [0, 10): dropped
  batch.Add(Rec{4, 1}, 12);  // first of window [10, 20)
  batch.Add(Rec{5, 9}, 8);   // ties the maximum: kept
  ASSERT_TRUE(filter.ProcessBatch(batch, out).ok());
  ASSERT_TRUE(out.Flush().ok());
  EXPECT_EQ(sink.ids, (std::vector<int64_t>{1, 2, 4, 5}));
  EXPECT_EQ(filter.dropped(), 1u);
}

// Times beyond the event-time range (the join counts them as invalid and drops them) pass
// unchanged, and computing their window cannot overflow.
TEST(RunningExtremeFilterTest, TimesBeyondTheEventTimeRangePassUnchanged) {
  Collect sink;
  Output<Rec> out(&sink, 64, nullptr);
  Filter filter(10, /*max=*/true, KeyOf{});
  Batch<Rec> batch;
  batch.Add(Rec{1, 9}, kMinWatermark);
  batch.Add(Rec{2, 1}, kMinWatermark);
  batch.Add(Rec{3, 9}, kMaxWatermark);
  batch.Add(Rec{4, 1}, kMaxWatermark);
  ASSERT_TRUE(filter.ProcessBatch(batch, out).ok());
  ASSERT_TRUE(out.Flush().ok());
  EXPECT_EQ(sink.ids, (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(filter.windows(), 0u);
}

// A record behind the watermark may have missed its window's result (the aggregate dropped it as
// late) while a later record of the same window still reaches the join in time (the join's
// watermark can lag), so it must not raise the extreme that later records are measured against.
TEST(RunningExtremeFilterTest, ARecordBehindTheWatermarkDoesNotRaiseTheExtreme) {
  Collect sink;
  Output<Rec> out(&sink, 64, nullptr);
  Filter filter(10, /*max=*/true, KeyOf{});
  ASSERT_TRUE(filter.OnWatermark(20, out).ok());  // window [0, 10) is behind it
  Batch<Rec> batch;
  batch.Add(Rec{1, 9}, 2);
  batch.Add(Rec{2, 5}, 3);
  batch.Add(Rec{3, 7}, 25);  // window [20, 30): on time
  batch.Add(Rec{4, 4}, 26);  // below 7 there: dropped
  ASSERT_TRUE(filter.ProcessBatch(batch, out).ok());
  ASSERT_TRUE(out.Flush().ok());
  EXPECT_EQ(sink.ids, (std::vector<int64_t>{1, 2, 3}));
}

}  // namespace
}  // namespace flow::rt
