// flowc build end to end for joins, session windows, processing-time windows and first/last.
// Every script runs at parallelism 1 and 4 on out-of-order input generated here with a fixed seed;
// the output is compared with a brute-force reference written here. Input disorder stays within
// the watermark delay, except where a test says otherwise, so what is late is deterministic.
// Late records (dropped and counted by joins and windows with lateness) are late_records_test.py's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "codegen_test_util.h"
#include "flow/runtime/common/time.h"

namespace flow::codegen_test {
namespace {

struct Rec {
  std::string k;
  int64_t id;
  int64_t ts;
  std::string page;  // sessions only
};

// Records in time order with keys k0..k(keys-1), then shuffled within `disorder` ms: each record
// moves earlier in the file by at most that much event time.
std::vector<Rec> Generate(std::mt19937& rng, int n, int keys, int64_t start, int64_t max_step,
                          int64_t disorder, int64_t first_id) {
  std::vector<Rec> recs;
  int64_t t = start;
  for (int i = 0; i < n; ++i) {
    t += static_cast<int64_t>(rng() % static_cast<uint32_t>(max_step + 1));
    recs.push_back(
        Rec{"k" + std::to_string(rng() % static_cast<uint32_t>(keys)), first_id + i, t, ""});
  }
  // Sort by a jittered time: the arrival order; event times stay within `disorder` of order.
  std::vector<std::pair<int64_t, size_t>> order;
  for (size_t i = 0; i < recs.size(); ++i) {
    order.emplace_back(
        recs[i].ts + static_cast<int64_t>(rng() % static_cast<uint32_t>(disorder + 1)), i);
  }
  std::sort(order.begin(), order.end());
  std::vector<Rec> out;
  for (const auto& [_, i] : order) out.push_back(recs[i]);
  return out;
}

std::string ToJsonl(const std::vector<Rec>& recs) {
  std::string s;
  for (const Rec& r : recs) {
    s += "{\"k\":" + JsonString(r.k) + ",\"id\":" + std::to_string(r.id) +
         ",\"ts\":" + std::to_string(r.ts);
    if (!r.page.empty()) s += ",\"page\":" + JsonString(r.page);
    s += "}\n";
  }
  return s;
}

// Runs `binary` at parallelism 1 and 4 with `sets`; expects `want` (as a multiset of lines).
void ExpectRuns(const std::string& binary, const std::vector<std::string>& sets,
                const std::vector<std::string>& want) {
  for (const char* p : {"1", "4"}) {
    std::vector<std::string> argv = {binary, "--parallelism", p};
    for (const std::string& s : sets) {
      argv.push_back("--set");
      argv.push_back(s);
    }
    Ran ran = RunCmd(argv);
    ASSERT_EQ(ran.exit_code, 0) << ran.err;
    EXPECT_EQ(Sorted(Lines(ran.out)), Sorted(want)) << "parallelism " << p;
  }
}

constexpr const char* kTwoSources = R"(param left_path: string = ""
param right_path: string = ""
schema Left { k: string, id: int, ts: timestamp }
schema Right { k: string, id: int, ts: timestamp }
stream a = from file(path: left_path) format json as Left event time ts watermark 100ms
stream b = from file(path: right_path) format json as Right event time ts watermark 100ms
)";

TEST(CodegenOps, IntervalJoinMatchesBruteForceIncludingBounds) {
  std::string dir = ScratchDir("interval_join");
  const int64_t bound = 250;
  WriteText(dir + "/job.flow", std::string(kTwoSources) + R"(a | join b on a.k == b.k within 250ms
  | select a.k, a.id as lid, b.id as rid, b.ts - a.ts as delta
  | into stdout format json
)");
  std::mt19937 rng(11);
  std::vector<Rec> left = Generate(rng, 400, 5, 1'000'000, 40, 90, 0);
  std::vector<Rec> right = Generate(rng, 400, 5, 1'000'000, 40, 90, 10'000);
  // Partners exactly at the bounds and one past them, for some left records.
  for (int i = 0; i < 40; ++i) {
    const Rec& l = left[static_cast<size_t>(i) * 9];
    int64_t id = 20'000 + i * 4;
    right.push_back(Rec{l.k, id, l.ts + bound, ""});
    right.push_back(Rec{l.k, id + 1, l.ts - bound, ""});
    right.push_back(Rec{l.k, id + 2, l.ts + bound + 1, ""});
    right.push_back(Rec{l.k, id + 3, l.ts - bound - 1, ""});
  }
  std::sort(right.begin(), right.end(), [](const Rec& x, const Rec& y) { return x.ts < y.ts; });
  std::vector<std::string> want;
  for (const Rec& l : left) {
    for (const Rec& r : right) {
      if (l.k == r.k && std::llabs(l.ts - r.ts) <= bound) {
        want.push_back("{\"k\":" + JsonString(l.k) + ",\"lid\":" + std::to_string(l.id) +
                       ",\"rid\":" + std::to_string(r.id) +
                       ",\"delta\":" + std::to_string(r.ts - l.ts) + "}");
      }
    }
  }
  ASSERT_GT(want.size(), 400u);
  WriteText(dir + "/left.jsonl", ToJsonl(left));
  WriteText(dir + "/right.jsonl", ToJsonl(right));
  Ran built = BuildJob(dir + "/job.flow", dir + "/job");
  ASSERT_EQ(built.exit_code, 0) << built.err;
  ExpectRuns(dir + "/job",
             {"left_path=" + dir + "/left.jsonl", "right_path=" + dir + "/right.jsonl"}, want);
}

// Tumbling and sliding window joins in one job (two sinks, told apart by their fields).
TEST(CodegenOps, WindowJoinsMatchBruteForce) {
  std::string dir = ScratchDir("window_join");
  WriteText(dir + "/job.flow",
            std::string(kTwoSources) + R"(a | join b on a.k == b.k window tumbling 200ms
  | select a.k, a.id as lid, b.id as rid, window_start, window_end
  | into stdout format json
a | where id % 2 == 0
  | join b on b.k == a.k window sliding 300ms every 100ms
  | where a.id < b.id + 1000000
  | select a.id as slid, b.id as srid, window_start as sws
  | into stdout format json
)");
  std::mt19937 rng(12);
  std::vector<Rec> left = Generate(rng, 300, 4, 5'000'000, 30, 90, 0);
  std::vector<Rec> right = Generate(rng, 300, 4, 5'000'000, 30, 90, 10'000);
  auto floor_div = [](int64_t a, int64_t b) {
    return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
  };
  std::vector<std::string> want;
  for (const Rec& l : left) {
    for (const Rec& r : right) {
      if (l.k != r.k) continue;
      if (floor_div(l.ts, 200) == floor_div(r.ts, 200)) {
        int64_t s = floor_div(l.ts, 200) * 200;
        want.push_back("{\"k\":" + JsonString(l.k) + ",\"lid\":" + std::to_string(l.id) +
                       ",\"rid\":" + std::to_string(r.id) + ",\"window_start\":\"" + Rfc3339(s) +
                       "\",\"window_end\":\"" + Rfc3339(s + 200) + "\"}");
      }
      if (l.id % 2 != 0) continue;
      // Every sliding window [s, s + 300) with s a multiple of 100 holding both records.
      for (int64_t s = floor_div(std::min(l.ts, r.ts), 100) * 100; s > std::max(l.ts, r.ts) - 300;
           s -= 100) {
        want.push_back("{\"slid\":" + std::to_string(l.id) + ",\"srid\":" + std::to_string(r.id) +
                       ",\"sws\":\"" + Rfc3339(s) + "\"}");
      }
    }
  }
  WriteText(dir + "/left.jsonl", ToJsonl(left));
  WriteText(dir + "/right.jsonl", ToJsonl(right));
  Ran built = BuildJob(dir + "/job.flow", dir + "/job");
  ASSERT_EQ(built.exit_code, 0) << built.err;
  ExpectRuns(dir + "/job",
             {"left_path=" + dir + "/left.jsonl", "right_path=" + dir + "/right.jsonl"}, want);
}

// SQL equality: a null key equals nothing, not even another null key.
TEST(CodegenOps, NullJoinKeysMatchNothing) {
  std::string dir = ScratchDir("null_keys");
  WriteText(dir + "/job.flow", R"(param left_path: string = ""
param right_path: string = ""
schema Left { k: string?, id: int, ts: timestamp }
schema Right { k: string?, id: int, ts: timestamp }
stream a = from file(path: left_path) format json as Left event time ts watermark 100ms
stream b = from file(path: right_path) format json as Right event time ts watermark 100ms
a | join b on a.k == b.k window tumbling 1s
  | select a.id as lid, b.id as rid, a.k
  | into stdout format json
)");
  std::mt19937 rng(15);
  std::string left, right;
  std::vector<std::pair<std::optional<std::string>, int64_t>> ls, rs;
  for (int i = 0; i < 200; ++i) {
    std::optional<std::string> lk, rk;
    if (rng() % 3 != 0) lk = "k" + std::to_string(rng() % 3);
    if (rng() % 3 != 0) rk = "k" + std::to_string(rng() % 3);
    ls.emplace_back(lk, i);
    rs.emplace_back(rk, 1000 + i);
    int64_t ts = 10'000 + i * 10;  // one window: every pair of equal keys meets
    left += "{" + (lk ? "\"k\":" + JsonString(*lk) + "," : std::string()) +
            "\"id\":" + std::to_string(i) + ",\"ts\":" + std::to_string(ts) + "}\n";
    right += "{" + (rk ? "\"k\":" + JsonString(*rk) + "," : std::string("\"k\":null,")) +
             "\"id\":" + std::to_string(1000 + i) + ",\"ts\":" + std::to_string(ts) + "}\n";
  }
  std::vector<std::string> want;
  for (const auto& [lk, lid] : ls) {
    for (const auto& [rk, rid] : rs) {
      if (lk && rk && *lk == *rk &&
          (10'000 + lid * 10) / 1000 == (10'000 + (rid - 1000) * 10) / 1000) {
        want.push_back("{\"lid\":" + std::to_string(lid) + ",\"rid\":" + std::to_string(rid) +
                       ",\"k\":" + JsonString(*lk) + "}");
      }
    }
  }
  ASSERT_GT(want.size(), 100u);
  WriteText(dir + "/left.jsonl", left);
  WriteText(dir + "/right.jsonl", right);
  Ran built = BuildJob(dir + "/job.flow", dir + "/job");
  ASSERT_EQ(built.exit_code, 0) << built.err;
  ExpectRuns(dir + "/job",
             {"left_path=" + dir + "/left.jsonl", "right_path=" + dir + "/right.jsonl"}, want);
}

struct ByTime {
  int64_t ts = 0;
  std::string page;
  bool set = false;
};

// Session windows with first/last, and first/last in a running aggregate, in one job.
TEST(CodegenOps, SessionWindowsAndFirstLastMatchBruteForce) {
  std::string dir = ScratchDir("sessions");
  const int64_t gap = 100;
  WriteText(dir + "/job.flow", R"(param input: string = ""
schema Visit { k: string, id: int, ts: timestamp, page: string }
stream visits = from file(path: input) format json as Visit event time ts watermark 120ms
visits
  | key by k
  | window session 100ms
  | aggregate count() as n, first(page) as entry, last(page) as exit, sum(id) as ids
  | into stdout format json
visits
  | key by k
  | aggregate first(page) as rf, last(page) as rl, count() as rn
  | into stdout format json
)");
  std::mt19937 rng(13);
  // Bursts per key with gaps around the session gap: gap - 1 (same session), gap (a new one).
  std::vector<Rec> recs;
  int64_t id = 0;
  for (int key = 0; key < 6; ++key) {
    int64_t t = 1'000'000 + key * 7;
    for (int i = 0; i < 120; ++i) {
      uint32_t r = rng() % 10;
      t += r < 5   ? static_cast<int64_t>(rng() % 60)
           : r < 7 ? gap - 1
           : r < 9 ? gap
                   : gap + static_cast<int64_t>(rng() % 300);
      int copies = rng() % 6 == 0 ? 2 : 1;  // equal times: ties go by arrival
      for (int c = 0; c < copies; ++c)
        recs.push_back(Rec{"k" + std::to_string(key), id++, t, "p" + std::to_string(rng() % 50)});
    }
  }
  // Arrival order: by time jittered up to 110ms (< the 120ms watermark delay: nothing is late).
  std::vector<std::tuple<int64_t, int64_t, size_t>> order;
  for (size_t i = 0; i < recs.size(); ++i)
    order.emplace_back(recs[i].ts + rng() % 111, recs[i].id, i);
  std::sort(order.begin(), order.end());
  std::vector<Rec> arrival;
  for (const auto& o : order) arrival.push_back(recs[std::get<2>(o)]);
  std::vector<std::string> want;
  // Sessions: per key, by time then arrival; a new session when the next record is >= gap later.
  std::map<std::string, std::vector<size_t>> by_key;  // indices into `arrival`
  for (size_t i = 0; i < arrival.size(); ++i) by_key[arrival[i].k].push_back(i);
  for (auto& [k, idx] : by_key) {
    std::stable_sort(idx.begin(), idx.end(),
                     [&](size_t x, size_t y) { return arrival[x].ts < arrival[y].ts; });
    size_t s = 0;
    while (s < idx.size()) {
      size_t e = s + 1;
      while (e < idx.size() && arrival[idx[e]].ts - arrival[idx[e - 1]].ts < gap) ++e;
      int64_t ids = 0;
      for (size_t j = s; j < e; ++j) ids += arrival[idx[j]].id;
      // idx[s..e) is in (time, arrival) order: first is its first record, last its last one.
      want.push_back("{\"k\":" + JsonString(k) + ",\"window_start\":\"" +
                     Rfc3339(arrival[idx[s]].ts) + "\",\"window_end\":\"" +
                     Rfc3339(arrival[idx[e - 1]].ts + gap) + "\",\"n\":" + std::to_string(e - s) +
                     ",\"entry\":" + JsonString(arrival[idx[s]].page) +
                     ",\"exit\":" + JsonString(arrival[idx[e - 1]].page) +
                     ",\"ids\":" + std::to_string(ids) + "}");
      s = e;
    }
  }
  // Running first/last: one update per record, in arrival order per key.
  std::map<std::string, std::tuple<ByTime, ByTime, int64_t>> running;
  for (const Rec& r : arrival) {
    auto& [f, l, n] = running[r.k];
    if (!f.set || r.ts < f.ts) f = ByTime{r.ts, r.page, true};
    if (!l.set || r.ts >= l.ts) l = ByTime{r.ts, r.page, true};
    ++n;
    want.push_back("{\"k\":" + JsonString(r.k) + ",\"rf\":" + JsonString(f.page) +
                   ",\"rl\":" + JsonString(l.page) + ",\"rn\":" + std::to_string(n) + "}");
  }
  WriteText(dir + "/in.jsonl", ToJsonl(arrival));
  Ran built = BuildJob(dir + "/job.flow", dir + "/job");
  ASSERT_EQ(built.exit_code, 0) << built.err;
  ExpectRuns(dir + "/job", {"input=" + dir + "/in.jsonl"}, want);
}

// "2026-03-01T09:00:00.123Z" -> epoch milliseconds.
int64_t ParseRfc3339(const std::string& s) {
  int64_t ms = 0;
  EXPECT_TRUE(rt::ParseTimestamp(s, &ms)) << s;
  return ms;
}

// Processing-time windows: which window a record lands in depends on the clock, so the test checks
// what does not: every record is counted exactly once per key, and each window spans its size.
TEST(CodegenOps, ProcessingTimeWindowsCountEveryRecordOnce) {
  std::string dir = ScratchDir("processing_time");
  WriteText(dir + "/job.flow", R"(param input: string = ""
schema Item { k: string, id: int }
from file(path: input) format json as Item
  | key by k
  | window tumbling 20ms processing time
  | aggregate count() as n, sum(id) as ids, first(id) as some_id
  | into stdout format json
)");
  std::mt19937 rng(14);
  std::string input;
  std::map<std::string, std::pair<int64_t, int64_t>> want;  // key -> (count, sum of ids)
  for (int i = 0; i < 20000; ++i) {
    std::string k = "k" + std::to_string(rng() % 7);
    input += "{\"k\":\"" + k + "\",\"id\":" + std::to_string(i) + "}\n";
    want[k].first += 1;
    want[k].second += i;
  }
  WriteText(dir + "/in.jsonl", input);
  Ran built = BuildJob(dir + "/job.flow", dir + "/job");
  ASSERT_EQ(built.exit_code, 0) << built.err;
  for (const char* p : {"1", "4"}) {
    Ran ran = RunCmd({dir + "/job", "--parallelism", p, "--set", "input=" + dir + "/in.jsonl"});
    ASSERT_EQ(ran.exit_code, 0) << ran.err;
    std::map<std::string, std::pair<int64_t, int64_t>> got;
    for (const std::string& line : Lines(ran.out)) {
      // {"k":"k3","window_start":"...","window_end":"...","n":12,"ids":345,"some_id":7}
      auto field = [&](const std::string& name) {
        size_t at = line.find("\"" + name + "\":");
        EXPECT_NE(at, std::string::npos) << line;
        return at == std::string::npos ? std::string() : line.substr(at + name.size() + 3);
      };
      std::string k = field("k").substr(1, 2);
      got[k].first += std::stoll(field("n"));
      got[k].second += std::stoll(field("ids"));
      EXPECT_EQ(ParseRfc3339(field("window_end").substr(1, 24)) -
                    ParseRfc3339(field("window_start").substr(1, 24)),
                20)
          << line;
    }
    EXPECT_EQ(got, want) << "parallelism " << p;
  }
}

}  // namespace
}  // namespace flow::codegen_test
