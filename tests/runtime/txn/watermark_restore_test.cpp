// Event time across a restore: a job whose sources had read their last records before the
// checkpoint, and whose window results of that time were never committed, must produce those
// results after a restart even though no record ever arrives again (the sources' watermark state
// is part of their snapshot and is emitted again at once). Runs the runtime's own keyed window
// operator into an exactly-once file sink, at the same and at another parallelism.

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "../engine/test_util.h"
#include "flow/runtime/engine/job.h"
#include "flow/runtime/engine/source.h"
#include "flow/runtime/engine/txn_sink.h"
#include "flow/runtime/exec/window_aggregate_adapter.h"

namespace flow::exec {
namespace {

namespace fs = std::filesystem;

constexpr int kSplits = 4;
constexpr int64_t kPerSplit = 300;
constexpr int64_t kWindowMs = 1000;
constexpr int64_t kBase = 1'700'000'000'000;  // any event time: files, no broker retention

struct Event {
  int64_t user = 0;
  int64_t ts = 0;
};

// Record i of split s: user (i + s) % 5 at kBase + i * 37 + s (increasing within a split).
Event EventAt(int split, int64_t i) {
  return Event{(i + split) % 5, kBase + i * 37 + split};
}

// Four splits; subtask t of p reads the splits s with s % p == t, then has nothing more (it
// stays open: an unbounded source whose input went quiet). Positions are per split, so a
// restore at another parallelism hands each split's position to its new owner.
class QuietSplitSource final : public rt::SourceFunction<Event> {
 public:
  QuietSplitSource(uint32_t subtask, uint32_t parallelism) {
    for (int s = 0; s < kSplits; ++s) {
      if (static_cast<uint32_t>(s) % parallelism == subtask) next_[s] = 0;
    }
  }
  rt::Result<rt::PollResult> PollBatch(rt::Batch<Event>& out, size_t max) override {
    splits_.clear();
    for (auto& [split, next] : next_) {
      while (next < kPerSplit && out.size() < std::min<size_t>(max, 64)) {
        Event e = EventAt(split, next++);
        out.Add(e, e.ts);
        splits_.push_back(split);
      }
    }
    if (out.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return out.empty() ? rt::PollResult::kIdle : rt::PollResult::kRecords;
  }
  const std::vector<int32_t>* LastSplits() const override { return &splits_; }
  rt::Status SnapshotPosition(rt::BinaryWriter* out) const override {
    out->PutU32(static_cast<uint32_t>(next_.size()));
    for (const auto& [split, next] : next_) {
      out->PutU32(static_cast<uint32_t>(split));
      out->PutI64(next);
    }
    return rt::Status::Ok();
  }
  rt::Status RestorePosition(rt::BinaryReader* in) override {
    uint32_t n = 0;
    FLOW_RETURN_IF_ERROR(in->GetU32(&n));
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t split = 0;
      int64_t next = 0;
      FLOW_RETURN_IF_ERROR(in->GetU32(&split));
      FLOW_RETURN_IF_ERROR(in->GetI64(&next));
      if (next_.count(static_cast<int32_t>(split)) > 0) next_[static_cast<int32_t>(split)] = next;
    }
    return rt::Status::Ok();
  }
  rt::Status RestoreRescaled(const std::vector<rt::OldSourcePosition>& old, uint32_t) override {
    for (const rt::OldSourcePosition& p : old) {
      if (p.finished) continue;
      rt::BinaryReader in(p.position);
      FLOW_RETURN_IF_ERROR(RestorePosition(&in));
    }
    return rt::Status::Ok();
  }

 private:
  std::map<int32_t, int64_t> next_;  // split -> next record index
  std::vector<int32_t> splits_;
};

struct Count {
  int64_t n = 0;
  void Add(const Stamped<Event>&) { ++n; }
  void Merge(const Count& o) { n += o.n; }
  const Count& Result() const { return *this; }
  void Serialize(rt::BinaryWriter& w) const { w.PutI64(n); }
  rt::Status Deserialize(rt::BinaryReader& r) { return r.GetI64(&n); }
};

struct Row {
  int64_t user = 0;
  int64_t start = 0;
  int64_t count = 0;
};

int64_t UserOf(const Event& e) {
  return e.user;
}
Row MakeRow(const int64_t& user, rt::TimestampMs start, rt::TimestampMs, const Count& c) {
  return Row{user, start, c.n};
}

// (user, window start) -> count of every window the watermark of the whole input closes: the
// watermark is the smallest of the splits' largest event times, minus 1 ms (no delay).
std::map<std::pair<int64_t, int64_t>, int64_t> Reference() {
  int64_t watermark = INT64_MAX;
  for (int s = 0; s < kSplits; ++s)
    watermark = std::min(watermark, EventAt(s, kPerSplit - 1).ts - 1);
  std::map<std::pair<int64_t, int64_t>, int64_t> out;
  for (int s = 0; s < kSplits; ++s) {
    for (int64_t i = 0; i < kPerSplit; ++i) {
      Event e = EventAt(s, i);
      int64_t start = e.ts - e.ts % kWindowMs;
      if (start + kWindowMs - 1 <= watermark) ++out[{e.user, start}];
    }
  }
  return out;
}

class WatermarkRestoreTest : public ::testing::TestWithParam<std::tuple<uint32_t, uint32_t>> {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("flow-wm-restore-" + std::to_string(::getpid()) + "-" +
                                        std::to_string(std::get<0>(GetParam())) + "-" +
                                        std::to_string(std::get<1>(GetParam())));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs the job until `done` says so (checked every 20 ms, at most 20 s), then stops it. A
  // stopped job takes no final checkpoint: what it wrote after its last one stays uncommitted.
  rt::Status RunUntil(uint32_t parallelism, const std::function<bool()>& done) {
    rt::JobOptions o;
    o.parallelism = parallelism;
    o.checkpoint.state_dir = (dir_ / "state").string();
    o.checkpoint.interval_ms = 20;
    o.checkpoint.options.interval_ms = 20;
    rt::Job job(o);
    rt::WatermarkSpec spec;
    // No periodic watermark within the test: the first run stops with every record read and
    // no watermark emitted (as a crash right after the checkpoint would leave it); what the
    // second run emits comes from the restored state alone.
    spec.interval = 3'600'000;
    auto src = job.Source<Event>(
        "events", [](uint32_t s, uint32_t p) { return std::make_unique<QuietSplitSource>(s, p); },
        spec);
    auto rows = src.KeyBy("user", KeyHashOf<int64_t>(&UserOf)).Then<Row>("window", [] {
      return std::make_unique<WindowAggregateAdapter<int64_t, Event, Count, Row>>(
          WindowConfig{kWindowMs, kWindowMs, 0}, &UserOf, &MakeRow);
    });
    rt::ExactlyOnceFileSinkOptions fo;
    fo.directory = (dir_ / "out").string();
    rt::ExactlyOnceSink<Row>(rows, job, "files", rt::FileTxnSink(fo),
                             [](const Row& r, std::string*, std::string* p) {
                               *p = std::to_string(r.user) + "," + std::to_string(r.start) + "," +
                                    std::to_string(r.count);
                             });
    std::atomic<bool> finished{false};
    std::thread stopper([&] {
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (!finished.load() && !done() && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      job.RequestStop();
    });
    rt::Status s = job.Execute();
    finished.store(true);
    stopper.join();
    return s;
  }

  int64_t NewestCheckpoint() const { return rt::testing::NewestCompleteCheckpoint(dir_ / "state"); }

  // Committed rows (user, start) -> count; duplicates counted in *dupes.
  std::map<std::pair<int64_t, int64_t>, int64_t> Visible(int* dupes) const {
    std::map<std::pair<int64_t, int64_t>, int64_t> rows;
    *dupes = 0;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir_ / "out", ec)) {
      if (e.path().filename().string()[0] == '.') continue;
      std::ifstream in(e.path());
      std::string line;
      while (std::getline(in, line)) {
        int64_t user = 0, start = 0, count = 0;
        if (std::sscanf(line.c_str(), "%ld,%ld,%ld", &user, &start, &count) != 3) continue;
        if (!rows.emplace(std::make_pair(user, start), count).second) ++*dupes;
      }
    }
    return rows;
  }

  fs::path dir_;
};

TEST_P(WatermarkRestoreTest, WindowsDueAtTheCheckpointFireAfterARestartWithoutNewInput) {
  const auto [first_parallelism, second_parallelism] = GetParam();
  const auto want = Reference();
  ASSERT_GT(want.size(), 20u);
  // First run: every record is read at once; after three checkpoints (each with the sources at
  // their end) the job stops. No watermark was emitted, so no window fired or was committed.
  rt::Status s = RunUntil(first_parallelism, [&] { return NewestCheckpoint() >= 3; });
  ASSERT_TRUE(s.ok()) << s.ToString();
  int dupes = 0;
  ASSERT_TRUE(Visible(&dupes).empty()) << "the first run committed window results";
  // Second run: restores the newest checkpoint; its sources have nothing left to read.
  s = RunUntil(second_parallelism, [&] { return Visible(&dupes).size() >= want.size(); });
  ASSERT_TRUE(s.ok()) << s.ToString();
  auto got = Visible(&dupes);
  EXPECT_EQ(dupes, 0);
  EXPECT_EQ(got.size(), want.size())
      << "windows due at the checkpoint did not fire after the restart";
  EXPECT_EQ(got, want);
}

INSTANTIATE_TEST_SUITE_P(Parallelism, WatermarkRestoreTest,
                         ::testing::Values(std::make_tuple(2u, 2u), std::make_tuple(2u, 1u),
                                           std::make_tuple(1u, 4u)));

}  // namespace
}  // namespace flow::exec
