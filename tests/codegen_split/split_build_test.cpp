// `flowc build --jobs N`: the generated file is compiled as up to N translation units. The
// packing of parts is checked directly; a job with a union, a keyed window and several chains is
// built as one unit and as several, and both binaries must print the rows a brute-force
// reference computes here.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "codegen/compile.h"
#include "codegen_test_util.h"

namespace flow::codegen_test {
namespace {

using codegen::CodePart;
using codegen::PackParts;

int GroupWeight(const std::vector<std::string>& group, const std::vector<CodePart>& parts) {
  int w = 0;
  for (const std::string& m : group) {
    for (const CodePart& p : parts) w += p.macro == m ? p.weight : 0;
  }
  return w;
}

// Both caches (precompiled headers, flowc run) keep the entries used last.
TEST(CachePruning, EntriesBeyondTheNewestAreTheOldest) {
  namespace fs = std::filesystem;
  const auto t0 = fs::file_time_type::clock::now();
  std::vector<std::pair<fs::file_time_type, fs::path>> entries;
  std::vector<int> ages{5, 1, 9, 3, 7};  // minutes before t0
  for (int age : ages) {
    entries.emplace_back(t0 - std::chrono::minutes(age), "e" + std::to_string(age));
  }
  auto gone = codegen::EntriesBeyondNewest(entries, 2);
  std::sort(gone.begin(), gone.end());
  EXPECT_EQ(gone, (std::vector<fs::path>{"e5", "e7", "e9"}));
  EXPECT_TRUE(codegen::EntriesBeyondNewest(entries, 5).empty());
  EXPECT_TRUE(codegen::EntriesBeyondNewest(entries, 9).empty());
  EXPECT_EQ(codegen::EntriesBeyondNewest(entries, 0).size(), 5u);
}

TEST(PackParts, EveryPartLandsInExactlyOneUnit) {
  std::vector<CodePart> parts = {{"FLOW_PART_MAIN", 1}, {"FLOW_PART_0", 3}, {"FLOW_PART_1", 2},
                                 {"FLOW_PART_2", 0},    {"FLOW_PART_3", 5}, {"FLOW_PART_4", 2},
                                 {"FLOW_PART_5", 2}};
  for (int units = 1; units <= 9; ++units) {
    std::vector<std::vector<std::string>> groups = PackParts(parts, units);
    EXPECT_EQ(groups.size(), static_cast<size_t>(std::min<int>(units, 7))) << units;
    std::multiset<std::string> seen;
    for (const auto& g : groups) {
      EXPECT_FALSE(g.empty());
      seen.insert(g.begin(), g.end());
    }
    std::multiset<std::string> want;
    for (const CodePart& p : parts) want.insert(p.macro);
    EXPECT_EQ(seen, want) << units;
  }
}

TEST(PackParts, UnitsAreBalancedByWeight) {
  // Weights 5 3 2 2 2 1 0 (total 15) in two units: 8 + 7 is the best split.
  std::vector<CodePart> parts = {{"FLOW_PART_MAIN", 1}, {"FLOW_PART_0", 3}, {"FLOW_PART_1", 2},
                                 {"FLOW_PART_2", 0},    {"FLOW_PART_3", 5}, {"FLOW_PART_4", 2},
                                 {"FLOW_PART_5", 2}};
  std::vector<std::vector<std::string>> two = PackParts(parts, 2);
  ASSERT_EQ(two.size(), 2u);
  std::vector<int> w = {GroupWeight(two[0], parts), GroupWeight(two[1], parts)};
  std::sort(w.begin(), w.end());
  EXPECT_EQ(w, (std::vector<int>{7, 8}));
  // Three heavy parts and three units: one each, whatever the light parts do.
  std::vector<CodePart> heavy = {{"A", 6}, {"B", 6}, {"C", 6}, {"D", 1}};
  std::vector<std::vector<std::string>> three = PackParts(heavy, 3);
  ASSERT_EQ(three.size(), 3u);
  for (const auto& g : three) EXPECT_LE(GroupWeight(g, heavy), 7);
  // Same input, same packing.
  EXPECT_EQ(PackParts(parts, 3), PackParts(parts, 3));
  // Zero or fewer units still compile everything, in one unit.
  EXPECT_EQ(PackParts(parts, 0).size(), 1u);
}

struct Ev {
  std::string user;
  int64_t bytes;
  int64_t ts;
};

TEST(SplitBuild, OneUnitAndSeveralUnitsPrintTheReferenceRows) {
  std::string dir = ScratchDir("split_units");
  WriteText(dir + "/job.flow", R"(param input: string = "none.jsonl"
param cut: int = 5000
schema Ev { user: string, bytes: int, ts: timestamp }
stream ev = from file(path: input) format json as Ev event time ts watermark 5s
stream low = ev | where bytes < 0 | select user, bytes * 2 as bytes, ts
stream high = ev | where bytes >= cut | select user, bytes, ts
low
  | union high
  | key by user
  | window tumbling 10s
  | aggregate count() as n, sum(bytes) as total
  | select user, window_start, n, total
  | into stdout format json
)");
  std::mt19937 rng(17);
  std::vector<Ev> events;
  int64_t base = 1772355600000;  // 2026-03-01T09:00:00Z
  std::string input;
  for (int i = 0; i < 2000; ++i) {
    Ev e{"u" + std::to_string(rng() % 5), static_cast<int64_t>(rng() % 12000) - 3000,
         base + i * 53 - static_cast<int64_t>(rng() % 3000)};
    events.push_back(e);
    input += "{\"user\":\"" + e.user + "\",\"bytes\":" + std::to_string(e.bytes) +
             ",\"ts\":" + std::to_string(e.ts) + "}\n";
  }
  WriteText(dir + "/in.jsonl", input);
  // Reference: negative values doubled, values >= 6000 (the --set cut) as they are, per user and
  // 10 s window.
  std::map<std::pair<std::string, int64_t>, std::pair<int64_t, int64_t>> windows;
  for (const Ev& e : events) {
    int64_t v;
    if (e.bytes < 0) {
      v = e.bytes * 2;
    } else if (e.bytes >= 6000) {
      v = e.bytes;
    } else {
      continue;
    }
    auto& w = windows[{e.user, e.ts - (e.ts % 10000)}];
    ++w.first;
    w.second += v;
  }
  std::vector<std::string> want;
  for (const auto& [k, w] : windows) {
    want.push_back("{\"user\":\"" + k.first + "\",\"window_start\":\"" + Rfc3339(k.second) +
                   "\",\"n\":" + std::to_string(w.first) +
                   ",\"total\":" + std::to_string(w.second) + "}");
  }
  want = Sorted(want);
  ASSERT_FALSE(want.empty());

  for (const char* jobs : {"1", "3"}) {
    std::string bin = dir + "/job" + jobs;
    Ran built = BuildJob(dir + "/job.flow", bin, {"--jobs", jobs, "--verbose"});
    ASSERT_EQ(built.exit_code, 0) << built.err;
    std::string units = std::string("compiled ") + jobs + " translation unit";
    EXPECT_NE(built.err.find(units), std::string::npos) << built.err;
    for (const char* p : {"1", "3"}) {
      Ran ran = RunCmd(
          {bin, "--parallelism", p, "--set", "input=" + dir + "/in.jsonl", "--set", "cut=6000"});
      ASSERT_EQ(ran.exit_code, 0) << ran.err;
      EXPECT_EQ(Sorted(Lines(ran.out)), want) << "--jobs " << jobs << ", parallelism " << p;
    }
  }
}

TEST(SplitBuild, CompileErrorInSeveralUnitsStillNamesTheScriptLine) {
  std::string dir = ScratchDir("split_error");
  WriteText(dir + "/wrong.h",
            "#include <vector>\n#include <cstdint>\ninline int64_t twice(const std::vector<int>& "
            "v) { return 2; }\n");
  WriteText(dir + "/job.flow", R"(param input: string = "none"
extern fn twice(x: int) -> int from "wrong.h"
schema Ev { n: int }
stream s = from file(path: input) format json as Ev
  | where n > 0
  | select twice(n) as m
s | into stdout format json
)");
  Ran built = BuildJob(dir + "/job.flow", dir + "/job", {"--jobs", "3"});
  EXPECT_EQ(built.exit_code, 1);
  EXPECT_NE(built.err.find("line 6"), std::string::npos) << built.err;
  EXPECT_NE(built.err.find("full compiler output:"), std::string::npos) << built.err;
}

TEST(SplitBuild, BadJobsIsAUsageError) {
  std::string dir = ScratchDir("split_usage");
  WriteText(dir + "/job.flow",
            "schema Ev { n: int }\nstream s = from stdin format json as Ev\ns | into stdout format "
            "json\n");
  for (const char* bad : {"0", "-2", "x", "300"}) {
    Ran r = RunCmd({Flowc(), "build", dir + "/job.flow", "-o", dir + "/job", "--jobs", bad});
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find("--jobs"), std::string::npos) << r.err;
  }
  Ran missing = RunCmd({Flowc(), "build", dir + "/job.flow", "-o", dir + "/job", "--jobs"});
  EXPECT_EQ(missing.exit_code, 2);
}

}  // namespace
}  // namespace flow::codegen_test
