// Rescale on restore for the stateful operators generated jobs run (exec adapters over the keyed
// operators): tumbling, sliding and session window aggregates, window and interval joins, and the
// running aggregate. A job runs at parallelism P with an exactly-once file sink until every
// source holds mid-input (open windows, buffered join sides) and two more checkpoints completed,
// and is stopped; the same job then runs to its end at parallelism P' from that state dir. The
// committed output must equal a reference computed here from the record formula: a window result
// fired twice (state restored into two subtasks), or state that no subtask restored, shows. Both
// state backends (rocksdb with a 16-entry cache, so most state is in RocksDB).

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "flow/runtime/engine/job.h"
#include "flow/runtime/engine/txn_sink.h"
#include "flow/runtime/exec/join_adapter.h"
#include "flow/runtime/exec/running_aggregate_adapter.h"
#include "flow/runtime/exec/session_window_adapter.h"
#include "flow/runtime/exec/window_aggregate_adapter.h"
#include "test_util.h"

namespace flow::rt {
namespace {

namespace fs = std::filesystem;

constexpr uint32_t kSplits = 4;     // per source; split s belongs to subtask s % parallelism
constexpr int64_t kPerSplit = 400;  // records
constexpr int64_t kHoldAt = 275;    // the first run holds every split here (mid-burst)
constexpr int64_t kKeys = 11;
constexpr int64_t kTumble = 700;  // ms
constexpr int64_t kSlideSize = 1000, kSlide = 300;
constexpr int64_t kGap = 1000;  // session gap
constexpr int64_t kBound = 25;  // interval join

struct Ev {
  int64_t key = 0;
  int64_t value = 0;
  void Serialize(BinaryWriter& w) const {
    w.PutI64(key);
    w.PutI64(value);
  }
  Status Deserialize(BinaryReader& r) {
    FLOW_RETURN_IF_ERROR(r.GetI64(&key));
    return r.GetI64(&value);
  }
};

// Bursts of 50 records 10 ms apart, then 3 s of silence (so sessions close between bursts).
TimestampMs TimeOf(int64_t i) {
  return i * 10 + (i / 50) * 3000;
}
Ev EventOf(int side, uint32_t split, int64_t i) {
  return Ev{(split * 7 + i * 3 + side) % kKeys, side * 100000 + split * 1000 + i};
}

struct Hold {
  bool enabled = false;
  std::atomic<int>* held = nullptr;  // source subtasks that reached kHoldAt
};

// Emits its splits' records in event-time order across the splits (so no record is ever behind
// the watermark, whatever positions a rescale combined), 8 per poll. Rescalable: each split's
// position comes from whichever old subtask owned it.
class EventSource final : public SourceFunction<Ev> {
 public:
  EventSource(int side, uint32_t subtask, uint32_t parallelism, Hold hold)
      : side_(side), hold_(hold) {
    for (uint32_t s = subtask; s < kSplits; s += parallelism) next_[s] = 0;
  }
  Result<PollResult> PollBatch(Batch<Ev>& out, size_t max) override {
    const int64_t limit = hold_.enabled ? kHoldAt : kPerSplit;
    for (size_t n = 0; n < std::min<size_t>(max, 8); ++n) {
      auto it = std::min_element(next_.begin(), next_.end(), [](const auto& a, const auto& b) {
        return std::tie(a.second, a.first) < std::tie(b.second, b.first);
      });
      if (it == next_.end() || it->second >= limit) break;
      out.Add(EventOf(side_, it->first, it->second), TimeOf(it->second));
      ++it->second;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    bool all_done = true, all_held = true;
    for (const auto& [split, next] : next_) {
      all_done = all_done && next >= kPerSplit;
      all_held = all_held && next >= limit;
    }
    if (all_done) return PollResult::kEnd;
    if (all_held && out.empty()) {
      if (!reported_held_ && hold_.held != nullptr) hold_.held->fetch_add(1);
      reported_held_ = true;
      return PollResult::kIdle;
    }
    return PollResult::kRecords;
  }
  Status SnapshotPosition(BinaryWriter* out) const override {
    out->PutU32(static_cast<uint32_t>(next_.size()));
    for (const auto& [split, next] : next_) {
      out->PutU32(split);
      out->PutI64(next);
    }
    return Status::Ok();
  }
  Status RestorePosition(BinaryReader* in) override {
    uint32_t n = 0;
    FLOW_RETURN_IF_ERROR(in->GetU32(&n));
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t split = 0;
      int64_t next = 0;
      FLOW_RETURN_IF_ERROR(in->GetU32(&split));
      FLOW_RETURN_IF_ERROR(in->GetI64(&next));
      if (auto it = next_.find(split); it != next_.end()) it->second = next;
    }
    return Status::Ok();
  }
  Status RestoreRescaled(const std::vector<OldSourcePosition>& old, uint32_t) override {
    for (const OldSourcePosition& o : old) {
      if (o.finished) return Status::Internal("test source: no subtask finishes in the first run");
      BinaryReader r(o.position);
      FLOW_RETURN_IF_ERROR(RestorePosition(&r));
    }
    return Status::Ok();
  }

 private:
  int side_;
  Hold hold_;
  std::map<uint32_t, int64_t> next_;
  bool reported_held_ = false;
};

// count and sum of Ev::value.
struct CountSum {
  int64_t count = 0, sum = 0;
  void Add(const exec::Stamped<Ev>& s) {
    ++count;
    sum += s.record->value;
  }
  void Merge(const CountSum& o) {
    count += o.count;
    sum += o.sum;
  }
  std::pair<int64_t, int64_t> Result() const { return {count, sum}; }
  void Serialize(BinaryWriter& w) const {
    w.PutI64(count);
    w.PutI64(sum);
  }
  Status Deserialize(BinaryReader& r) {
    FLOW_RETURN_IF_ERROR(r.GetI64(&count));
    return r.GetI64(&sum);
  }
};

enum class Kind { kTumbling, kSliding, kSession, kWindowJoin, kIntervalJoin, kRunning };
const char* KindName(Kind k) {
  switch (k) {
    case Kind::kTumbling:
      return "Tumbling";
    case Kind::kSliding:
      return "Sliding";
    case Kind::kSession:
      return "Session";
    case Kind::kWindowJoin:
      return "WindowJoin";
    case Kind::kIntervalJoin:
      return "IntervalJoin";
    case Kind::kRunning:
      return "Running";
  }
  return "?";
}
bool TwoSided(Kind k) {
  return k == Kind::kWindowJoin || k == Kind::kIntervalJoin;
}

int64_t KeyOf(const Ev& e) {
  return e.key;
}

std::string WindowLine(const int64_t& k, TimestampMs s, TimestampMs e,
                       const std::pair<int64_t, int64_t>& r) {
  return fmt::format("{},{},{},{},{}", k, s, e, r.first, r.second);
}

// source(s) -> key by -> the operator under test -> exactly-once files, all at `parallelism`.
void BuildJob(Job& job, Kind kind, Hold hold, const fs::path& out_dir) {
  const WatermarkSpec spec{.mode = TimeMode::kEventTime, .interval = 0};
  auto source = [&](int side) {
    return job.Source<Ev>(
        side == 0 ? "left" : "right",
        [side, hold](uint32_t s, uint32_t p) {
          return std::make_unique<EventSource>(side, s, p, hold);
        },
        spec);
  };
  auto keyed = [](const Stream<Ev>& s) { return s.KeyBy("key", exec::KeyHashOf<int64_t>(&KeyOf)); };
  Stream<Ev> left = source(0);
  std::optional<Stream<std::string>> out;
  using Tumbling = exec::WindowAggregateAdapter<int64_t, Ev, CountSum, std::string>;
  using Session = exec::SessionWindowAdapter<int64_t, Ev, CountSum, std::string>;
  switch (kind) {
    case Kind::kTumbling:
    case Kind::kSliding: {
      exec::WindowConfig c{.size = kind == Kind::kTumbling ? kTumble : kSlideSize,
                           .slide = kind == Kind::kTumbling ? kTumble : kSlide};
      out = keyed(left).Then<std::string>(
          "op", [c] { return std::make_unique<Tumbling>(c, &KeyOf, WindowLine); });
      break;
    }
    case Kind::kSession: {
      exec::WindowConfig c{.size = kGap};
      out = keyed(left).Then<std::string>(
          "op", [c] { return std::make_unique<Session>(c, &KeyOf, WindowLine); });
      break;
    }
    case Kind::kRunning: {
      using Running = exec::RunningAggregateAdapter<int64_t, Ev, CountSum, std::string>;
      auto line = [](const int64_t& k, const std::pair<int64_t, int64_t>& r) {
        return fmt::format("{},{}", k, r.first);
      };
      out = keyed(left).Then<std::string>(
          "op", [line] { return std::make_unique<Running>(&KeyOf, line); });
      break;
    }
    case Kind::kWindowJoin: {
      using Join = exec::WindowJoinAdapter<int64_t, Ev, Ev, std::string>;
      exec::WindowConfig c{.size = kTumble, .slide = kTumble};
      auto line = [](const int64_t& k, TimestampMs s, TimestampMs e, const Ev& l, const Ev& r) {
        return fmt::format("{},{},{},{},{}", k, s, e, l.value, r.value);
      };
      out = Connect(keyed(left), keyed(source(1))).Then<std::string>("op", [c, line] {
        return std::make_unique<Join>(c, &KeyOf, &KeyOf, +line);
      });
      break;
    }
    case Kind::kIntervalJoin: {
      using Join = exec::IntervalJoinAdapter<int64_t, Ev, Ev, std::string>;
      auto line = [](const int64_t& k, const Ev& l, TimestampMs tl, const Ev& r, TimestampMs tr) {
        return fmt::format("{},{},{},{},{}", k, l.value, tl, r.value, tr);
      };
      out = Connect(keyed(left), keyed(source(1))).Then<std::string>("op", [line] {
        return std::make_unique<Join>(kBound, &KeyOf, &KeyOf, +line);
      });
      break;
    }
  }
  ExactlyOnceFileSinkOptions fo;
  fo.directory = out_dir.string();
  ExactlyOnceSink<std::string>(
      *out, job, "files", FileTxnSink(fo),
      [](const std::string& s, std::string*, std::string* payload) { *payload = s; });
}

// What the job must output, computed from the record formula.
std::map<std::string, int> Reference(Kind kind) {
  struct Rec {
    int64_t key, value;
    TimestampMs t;
  };
  std::vector<Rec> side[2];
  for (int s = 0; s < 2; ++s) {
    for (uint32_t split = 0; split < kSplits; ++split) {
      for (int64_t i = 0; i < kPerSplit; ++i) {
        Ev e = EventOf(s, split, i);
        side[s].push_back({e.key, e.value, TimeOf(i)});
      }
    }
  }
  std::map<std::string, int> lines;
  std::map<std::tuple<int64_t, TimestampMs>, std::pair<int64_t, int64_t>> windows;
  auto windowed = [&](int64_t size, int64_t slide) {
    for (const Rec& r : side[0]) {
      for (TimestampMs s = (r.t / slide) * slide; s > r.t - size; s -= slide) {
        auto& w = windows[{r.key, s}];
        ++w.first;
        w.second += r.value;
      }
    }
    for (const auto& [ks, r] : windows)
      ++lines[WindowLine(std::get<0>(ks), std::get<1>(ks), std::get<1>(ks) + size, r)];
  };
  switch (kind) {
    case Kind::kTumbling:
      windowed(kTumble, kTumble);
      break;
    case Kind::kSliding:
      windowed(kSlideSize, kSlide);
      break;
    case Kind::kSession: {
      std::map<int64_t, std::vector<Rec>> by_key;
      for (const Rec& r : side[0]) by_key[r.key].push_back(r);
      for (auto& [k, recs] : by_key) {
        std::sort(recs.begin(), recs.end(), [](const Rec& a, const Rec& b) { return a.t < b.t; });
        size_t i = 0;
        while (i < recs.size()) {
          size_t j = i;
          std::pair<int64_t, int64_t> acc{0, 0};
          for (; j < recs.size() && (j == i || recs[j].t - recs[j - 1].t < kGap); ++j) {
            ++acc.first;
            acc.second += recs[j].value;
          }
          ++lines[WindowLine(k, recs[i].t, recs[j - 1].t + kGap, acc)];
          i = j;
        }
      }
      break;
    }
    case Kind::kRunning: {
      std::map<int64_t, int64_t> n;
      for (const Rec& r : side[0]) ++lines[fmt::format("{},{}", r.key, ++n[r.key])];
      break;
    }
    case Kind::kWindowJoin:
    case Kind::kIntervalJoin:
      for (const Rec& l : side[0]) {
        for (const Rec& r : side[1]) {
          if (l.key != r.key) continue;
          if (kind == Kind::kIntervalJoin) {
            if (std::abs(l.t - r.t) <= kBound)
              ++lines[fmt::format("{},{},{},{},{}", l.key, l.value, l.t, r.value, r.t)];
          } else if (l.t / kTumble == r.t / kTumble) {
            TimestampMs s = (l.t / kTumble) * kTumble;
            ++lines[fmt::format("{},{},{},{},{}", l.key, s, s + kTumble, l.value, r.value)];
          }
        }
      }
      break;
  }
  return lines;
}

// kind, (parallelism of the first run, parallelism it is restored at), state backend
using Param = std::tuple<Kind, std::pair<uint32_t, uint32_t>, std::string>;

class OperatorRescaleTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("flow_op_rescale_{}_{}", ::getpid(), Name(GetParam()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  JobOptions Options(uint32_t parallelism) const {
    JobOptions o;
    o.parallelism = parallelism;
    o.checkpoint.state_dir = (dir_ / "state").string();
    o.checkpoint.interval_ms = 20;
    o.checkpoint.options.interval_ms = 20;
    o.checkpoint.retained = 100;
    o.checkpoint.restart.max_attempts = 0;  // a failed restore is the test's failure, not a restart
    o.state_backend = std::get<2>(GetParam());
    if (o.state_backend == "rocksdb") o.state_cache_entries = 16;  // most state in RocksDB itself
    return o;
  }

  // Newest complete checkpoint id in the state dir; 0 when none.
  int64_t NewestCheckpoint() const { return rt::testing::NewestCompleteCheckpoint(dir_ / "state"); }

  // Committed lines of the output directory.
  std::map<std::string, int> Visible() const {
    std::map<std::string, int> lines;
    for (const auto& e : fs::directory_iterator(dir_ / "out")) {
      if (e.path().filename().string()[0] == '.') continue;
      std::ifstream in(e.path());
      for (std::string line; std::getline(in, line);) ++lines[line];
    }
    return lines;
  }

 public:
  static std::string Name(const Param& p) {
    return fmt::format("{}_{}to{}_{}", KindName(std::get<0>(p)), std::get<1>(p).first,
                       std::get<1>(p).second, std::get<2>(p));
  }

 protected:
  fs::path dir_;
};

TEST_P(OperatorRescaleTest, RestoredOutputIsExact) {
  const Kind kind = std::get<0>(GetParam());
  const auto [from, to] = std::get<1>(GetParam());
  const int sources = static_cast<int>(from) * (TwoSided(kind) ? 2 : 1);
  {
    std::atomic<int> held{0};
    Job job(Options(from));
    BuildJob(job, kind, Hold{true, &held}, dir_ / "out");
    std::atomic<bool> done{false};
    std::thread stopper([&] {
      // Every source subtask holds mid-input; two checkpoints after that hold all of it.
      while (!done.load() && held.load() < sources)
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      const int64_t base = NewestCheckpoint();
      while (!done.load() && NewestCheckpoint() < base + 2)
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      job.RequestStop();
    });
    Status s = testing::ExecuteWithWatchdog(job);
    done.store(true);
    stopper.join();
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_GE(NewestCheckpoint(), 2);
  }
  const std::map<std::string, int> expected = Reference(kind);
  size_t before = 0;  // lines committed by the first run
  for (const auto& [line, n] : Visible()) before += static_cast<size_t>(n);
  size_t total = 0;
  for (const auto& [line, n] : expected) total += static_cast<size_t>(n);
  ASSERT_GT(before, 0u) << "the first run committed nothing";
  ASSERT_LT(before, total) << "the first run committed everything: nothing left to restore";
  Job job(Options(to));
  BuildJob(job, kind, Hold{}, dir_ / "out");
  Status s = testing::ExecuteWithWatchdog(job);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const std::map<std::string, int> visible = Visible();
  int duplicated = 0, missing = 0, unexpected = 0;
  for (const auto& [line, n] : expected) {
    auto it = visible.find(line);
    int got = it == visible.end() ? 0 : it->second;
    duplicated += std::max(0, got - n);
    missing += std::max(0, n - got);
  }
  for (const auto& [line, n] : visible) unexpected += expected.count(line) == 0 ? n : 0;
  EXPECT_EQ(duplicated, 0) << "lines output more often than the reference has them";
  EXPECT_EQ(missing, 0) << "reference lines not output";
  EXPECT_EQ(unexpected, 0) << "lines the reference does not have";
  EXPECT_GT(expected.size(), 50u);
}

// Counts its records; the count is its state, not split by key group.
class RecordCount final : public OneInputOperator<Ev, Ev> {
 public:
  Status ProcessBatch(const Batch<Ev>& batch, Output<Ev>&) override {
    count_ += static_cast<int64_t>(batch.size());
    return Status::Ok();
  }
  Status SnapshotState(BinaryWriter* out) override {
    out->PutI64(count_);
    return Status::Ok();
  }
  Status RestoreState(BinaryReader* in) override { return in->GetI64(&count_); }

 private:
  int64_t count_ = 0;
};

class NonKeyedRescaleTest : public OperatorRescaleTest {};

// A stateful operator fed by rebalance has state that no key-group split applies to: restoring
// it at another parallelism would give old subtask 0's count to new subtasks 0 and 1. The
// restore is refused with the operator's name and the parallelism to run with; at the old
// parallelism it restores.
TEST_P(NonKeyedRescaleTest, StatefulOperatorWithoutKeyedInputIsRefused) {
  const auto [from, to] = std::get<1>(GetParam());
  auto build = [&](Job& job, Hold hold) {
    job.Source<Ev>(
           "left",
           [hold](uint32_t s, uint32_t p) { return std::make_unique<EventSource>(0, s, p, hold); },
           WatermarkSpec{.mode = TimeMode::kNone})
        .Rebalance()
        .Then<Ev>("count", [] { return std::make_unique<RecordCount>(); })
        .Sink("sink", CollectingSinkFactory(std::make_shared<Collected<Ev>>()));
  };
  {
    std::atomic<int> held{0};
    Job job(Options(from));
    build(job, Hold{true, &held});
    std::thread stopper([&] {
      while (held.load() < static_cast<int>(from))
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      const int64_t base = NewestCheckpoint();
      while (NewestCheckpoint() < base + 2)
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      job.RequestStop();
    });
    Status s = testing::ExecuteWithWatchdog(job);
    stopper.join();
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  {
    Job job(Options(to));
    build(job, Hold{});
    Status s = testing::ExecuteWithWatchdog(job);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
    EXPECT_NE(s.message().find("operator 'count'"), std::string::npos) << s.ToString();
    EXPECT_NE(s.message().find(fmt::format("--parallelism {}", from)), std::string::npos)
        << s.ToString();
  }
  Job job(Options(from));
  build(job, Hold{});
  Status s = testing::ExecuteWithWatchdog(job);
  EXPECT_TRUE(s.ok()) << s.ToString();
}

INSTANTIATE_TEST_SUITE_P(Parallelism, NonKeyedRescaleTest,
                         ::testing::Values(Param{Kind::kRunning, {2, 4}, "heap"},
                                           Param{Kind::kRunning, {2, 1}, "heap"}),
                         [](const ::testing::TestParamInfo<Param>& info) {
                           return fmt::format("{}to{}", std::get<1>(info.param).first,
                                              std::get<1>(info.param).second);
                         });

INSTANTIATE_TEST_SUITE_P(
    Operators, OperatorRescaleTest,
    ::testing::Combine(::testing::Values(Kind::kTumbling, Kind::kSliding, Kind::kSession,
                                         Kind::kWindowJoin, Kind::kIntervalJoin, Kind::kRunning),
                       ::testing::Values(std::pair<uint32_t, uint32_t>{1, 2},
                                         std::pair<uint32_t, uint32_t>{2, 1},
                                         std::pair<uint32_t, uint32_t>{2, 4},
                                         std::pair<uint32_t, uint32_t>{4, 2},
                                         std::pair<uint32_t, uint32_t>{2, 2}),
                       ::testing::Values(std::string("heap"), std::string("rocksdb"))),
    [](const ::testing::TestParamInfo<Param>& info) {
      return OperatorRescaleTest::Name(info.param);
    });

}  // namespace
}  // namespace flow::rt
