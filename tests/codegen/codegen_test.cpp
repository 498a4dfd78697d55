// flowc build end to end: scripts written here are built into binaries, run on input files
// created here, and their output is compared with references computed here.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>
#include <chrono>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "codegen_test_util.h"

namespace flow::codegen_test {
namespace {
namespace fs = std::filesystem;

TEST(CodegenEndToEnd, FilterAndProjectionMatchReference) {
  std::string dir = ScratchDir("filter");
  WriteText(dir + "/job.flow", R"(param input: string = "none.jsonl"
param min_bytes: int = 100
schema Click { user: string, url: string, bytes: int, ref: string?, ts: timestamp }
stream big = from file(path: input) format json as Click
  | where bytes >= min_bytes and url != "/skip"
  | select user, bytes * 2 as double_bytes, ref is null as direct, upper(user) as shout
big | into stdout format json
)");
  std::mt19937 rng(5);
  std::string input;
  std::vector<std::string> want;
  for (int i = 0; i < 300; ++i) {
    std::string user = "u" + std::to_string(rng() % 7);
    std::string url = rng() % 5 == 0 ? "/skip" : "/p" + std::to_string(i);
    int64_t bytes = rng() % 400;
    bool has_ref = rng() % 2 == 0;
    input += "{\"user\":\"" + user + "\",\"url\":\"" + url +
             "\",\"bytes\":" + std::to_string(bytes) + (has_ref ? ",\"ref\":\"r\"" : "") +
             ",\"ts\":" + std::to_string(1000 + i) + "}\n";
    if (bytes >= 150 && url != "/skip") {
      std::string shout = "U" + user.substr(1);
      want.push_back("{\"user\":\"" + user + "\",\"double_bytes\":" + std::to_string(bytes * 2) +
                     ",\"direct\":" + (has_ref ? "false" : "true") + ",\"shout\":\"" + shout +
                     "\"}");
    }
  }
  WriteText(dir + "/in.jsonl", input);
  Ran built = BuildJob(dir + "/job.flow", dir + "/job");
  ASSERT_EQ(built.exit_code, 0) << built.err;
  for (const char* p : {"1", "4"}) {
    Ran ran = RunCmd({dir + "/job", "--parallelism", p, "--set", "input=" + dir + "/in.jsonl",
                      "--set", "min_bytes=150"});
    ASSERT_EQ(ran.exit_code, 0) << ran.err;
    EXPECT_EQ(Sorted(Lines(ran.out)), Sorted(want)) << "parallelism " << p;
  }
}

// A union may read a schema's stream and a `select` of the same fields (another, unnamed record
// type, so another C++ struct): in either order the job converts the records and every input
// record comes out once, as the union's first input's type.
TEST(CodegenEndToEnd, UnionOfSchemaStreamAndSameFieldsSelectCarriesEveryRecord) {
  std::string dir = ScratchDir("union_shapes");
  WriteText(dir + "/job.flow", R"(param a: string = "a.jsonl"
param b: string = "b.jsonl"
param out1: string = "out1"
param out2: string = "out2"
schema Ev { name: string, n: int }
stream plain = from file(path: a) format json as Ev
stream bumped = from file(path: b) format json as Ev | select name, n + 1000 as n
plain | union bumped | into file(path: out1) format json
bumped | union plain, bumped | where n % 2 == 0 | into file(path: out2) format json
)");
  std::string a, b;
  std::vector<std::string> want1, want2;
  for (int i = 0; i < 200; ++i) {
    a += "{\"name\":\"a" + std::to_string(i) + "\",\"n\":" + std::to_string(i) + "}\n";
    b += "{\"name\":\"b" + std::to_string(i) + "\",\"n\":" + std::to_string(i) + "}\n";
    std::string ra = "{\"name\":\"a" + std::to_string(i) + "\",\"n\":" + std::to_string(i) + "}";
    std::string rb =
        "{\"name\":\"b" + std::to_string(i) + "\",\"n\":" + std::to_string(i + 1000) + "}";
    want1.push_back(ra);
    want1.push_back(rb);
    if (i % 2 == 0) {  // `bumped` is read twice by the second union
      want2.push_back(ra);
      want2.push_back(rb);
      want2.push_back(rb);
    }
  }
  WriteText(dir + "/a.jsonl", a);
  WriteText(dir + "/b.jsonl", b);
  Ran built = BuildJob(dir + "/job.flow", dir + "/job");
  ASSERT_EQ(built.exit_code, 0) << built.err;
  for (const char* p : {"1", "3"}) {
    fs::remove_all(dir + "/run");
    fs::create_directories(dir + "/run");
    Ran ran = RunCmd({dir + "/job", "--parallelism", p, "--set", "a=" + dir + "/a.jsonl", "--set",
                      "b=" + dir + "/b.jsonl", "--set", "out1=" + dir + "/run/out1", "--set",
                      "out2=" + dir + "/run/out2"});
    ASSERT_EQ(ran.exit_code, 0) << ran.err;
    std::vector<std::string> got1, got2;
    for (const auto& e : fs::directory_iterator(dir + "/run/out1")) {
      for (std::string& l : Lines(ReadText(e.path().string()))) got1.push_back(l);
    }
    for (const auto& e : fs::directory_iterator(dir + "/run/out2")) {
      for (std::string& l : Lines(ReadText(e.path().string()))) got2.push_back(l);
    }
    EXPECT_EQ(Sorted(got1), Sorted(want1)) << "parallelism " << p;
    EXPECT_EQ(Sorted(got2), Sorted(want2)) << "parallelism " << p;
  }
}

struct Event {
  std::string user;
  int64_t bytes;
  int64_t ts;
};

std::vector<std::string> WindowReference(const std::vector<Event>& events, int64_t size,
                                         int64_t slide) {
  struct Acc {
    int64_t n = 0, total = 0, biggest = INT64_MIN, smallest = INT64_MAX;
  };
  std::map<std::pair<std::string, int64_t>, Acc> windows;
  for (const Event& e : events) {
    int64_t last = e.ts - (((e.ts % slide) + slide) % slide);
    for (int64_t s = last; s > e.ts - size; s -= slide) {
      Acc& a = windows[{e.user, s}];
      ++a.n;
      a.total += e.bytes;
      a.biggest = std::max(a.biggest, e.bytes);
      a.smallest = std::min(a.smallest, e.bytes);
    }
  }
  std::vector<std::string> out;
  for (const auto& [k, a] : windows) {
    out.push_back("{\"user\":\"" + k.first + "\",\"window_start\":\"" + Rfc3339(k.second) +
                  "\",\"window_end\":\"" + Rfc3339(k.second + size) +
                  "\",\"n\":" + std::to_string(a.n) + ",\"total\":" + std::to_string(a.total) +
                  ",\"biggest\":" + std::to_string(a.biggest) +
                  ",\"smallest\":" + std::to_string(a.smallest) + "}");
  }
  return Sorted(out);
}

// Out-of-order input whose disorder stays within the watermark delay (5 s): nothing is late, and
// once the bounded file ends every window fires.
std::vector<Event> OutOfOrderEvents(int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Event> events;
  int64_t base = 1772355600000;  // 2026-03-01T09:00:00Z
  for (int i = 0; i < n; ++i) {
    int64_t jitter = static_cast<int64_t>(rng() % 4000);
    events.push_back(Event{"u" + std::to_string(rng() % 6),
                           static_cast<int64_t>(rng() % 10000) - 2000, base + i * 97 - jitter});
  }
  return events;
}

std::string EventsJson(const std::vector<Event>& events, bool rfc3339) {
  std::string s;
  for (const Event& e : events) {
    std::string ts = rfc3339 ? "\"" + Rfc3339(e.ts) + "\"" : std::to_string(e.ts);
    s += "{\"ts\":" + ts + ",\"bytes\":" + std::to_string(e.bytes) + ",\"user\":\"" + e.user +
         "\",\"extra\":[1,2]}\n";
  }
  return s;
}

void CheckWindows(const std::string& name, const std::string& window, int64_t size, int64_t slide) {
  std::string dir = ScratchDir(name);
  WriteText(dir + "/job.flow", R"(param input: string = "none.jsonl"
schema Ev { user: string, bytes: int, ts: timestamp }
stream agg = from file(path: input) format json as Ev event time ts watermark 5s
  | key by user
  | window )" + window + R"(
  | aggregate count() as n, sum(bytes) as total, max(bytes) as biggest, min(bytes) as smallest
  | select user, window_start, window_end, n, total, biggest, smallest
agg | into stdout format json
)");
  std::vector<Event> events = OutOfOrderEvents(2500, static_cast<uint32_t>(size + slide));
  WriteText(dir + "/in.jsonl", EventsJson(events, slide % 2 == 0));
  std::vector<std::string> want = WindowReference(events, size, slide);
  Ran built = BuildJob(dir + "/job.flow", dir + "/job");
  ASSERT_EQ(built.exit_code, 0) << built.err;
  for (const char* p : {"1", "4"}) {
    Ran ran = RunCmd({dir + "/job", "--parallelism", p, "--set", "input=" + dir + "/in.jsonl"});
    ASSERT_EQ(ran.exit_code, 0) << ran.err;
    EXPECT_EQ(Sorted(Lines(ran.out)), want) << "parallelism " << p;
  }
}

TEST(CodegenEndToEnd, TumblingWindowsOnOutOfOrderInputMatchBruteForce) {
  CheckWindows("tumbling", "tumbling 10s", 10000, 10000);
}

TEST(CodegenEndToEnd, SlidingWindowsMatchBruteForce) {
  CheckWindows("sliding", "sliding 10s every 5s", 10000, 5000);
}

TEST(CodegenEndToEnd, RunningAggregateEmitsEveryUpdate) {
  std::string dir = ScratchDir("running");
  WriteText(dir + "/job.flow", R"(param input: string = "none.jsonl"
schema Ev { user: string, bytes: int, ts: timestamp }
stream counts = from file(path: input) format json as Ev
  | key by user
  | aggregate count() as n, sum(bytes) as total
counts | into stdout format json
)");
  std::vector<Event> events = OutOfOrderEvents(400, 9);
  WriteText(dir + "/in.jsonl", EventsJson(events, false));
  std::map<std::string, std::pair<int64_t, int64_t>> acc;
  std::vector<std::string> want;
  for (const Event& e : events) {
    auto& [n, total] = acc[e.user];
    ++n;
    total += e.bytes;
    want.push_back("{\"user\":\"" + e.user + "\",\"n\":" + std::to_string(n) +
                   ",\"total\":" + std::to_string(total) + "}");
  }
  Ran built = BuildJob(dir + "/job.flow", dir + "/job");
  ASSERT_EQ(built.exit_code, 0) << built.err;
  Ran ran = RunCmd({dir + "/job", "--parallelism", "2", "--set", "input=" + dir + "/in.jsonl"});
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_EQ(Sorted(Lines(ran.out)), Sorted(want));
}

TEST(CodegenEndToEnd, RawSourceExplodeRunningCountToCsv) {
  std::string dir = ScratchDir("raw_csv");
  WriteText(dir + "/job.flow", R"(param input: string = "none"
schema Line { text: string }
stream words = from file(path: input) format raw as Line
  | explode split(lower(text), " ") as word
  | where word != ""
  | key by word
  | aggregate count() as n
  | select word, n
words | into stdout format csv
)");
  std::vector<std::string> lines = {"The cat", "the dog  THE end", "", "a,b \"q\"", "cat"};
  std::string input;
  for (const std::string& l : lines) input += l + "\n";
  WriteText(dir + "/in.txt", input);
  // Reference: split on single spaces, lower-case ASCII, skip empty words, running count.
  std::map<std::string, int64_t> counts;
  std::vector<std::string> want;
  for (const std::string& l : lines) {
    if (l.empty()) continue;  // the file source skips empty lines
    std::string lower = l;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    size_t start = 0;
    while (start <= lower.size()) {
      size_t end = lower.find(' ', start);
      if (end == std::string::npos) end = lower.size();
      std::string w = lower.substr(start, end - start);
      if (!w.empty()) {
        bool quote = w.find_first_of(",\"") != std::string::npos;
        std::string field = w;
        if (quote) {
          field = "\"";
          for (char c : w) field += c == '"' ? std::string("\"\"") : std::string(1, c);
          field += "\"";
        }
        want.push_back(field + "," + std::to_string(++counts[w]));
      }
      start = end + 1;
    }
  }
  Ran built = BuildJob(dir + "/job.flow", dir + "/job");
  ASSERT_EQ(built.exit_code, 0) << built.err;
  Ran ran = RunCmd({dir + "/job", "--parallelism", "2", "--set", "input=" + dir + "/in.txt"});
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_EQ(Sorted(Lines(ran.out)), Sorted(want));
}

TEST(CodegenEndToEnd, HostileStringsAndNamesComeOutByteForByte) {
  // The script lives in a directory whose name needs escaping in #line directives.
  std::string dir = ScratchDir("hostile") + "/we\"ird\\dir ?\?= */ x";
  fs::create_directories(dir);
  // Each entry: the Flow literal as written, the bytes it denotes.
  std::vector<std::pair<std::string, std::string>> strings = {
      {R"("q\"uote")", "q\"uote"},
      {R"("back\\slash\\")", "back\\slash\\"},
      {"\"tri?\?=graph?\?/ ?\?' ?\?(\"", "tri?\?=graph?\?/ ?\?' ?\?("},
      {R"("end */ comment /* // x")", "end */ comment /* // x"},
      {R"("nl\nline\ttab\rcr")", "nl\nline\ttab\rcr"},
      {R"("nul\0byte")", std::string("nul\0byte", 8)},
      {R"("caf\u{e9} \u{1F600}")", "caf\xC3\xA9 \xF0\x9F\x98\x80"},
      {R"("#line 1 \"x\"")", "#line 1 \"x\""},
      {R"("\u{7f}\u{1}")", "\x7f\x01"},
  };
  // Field names that are C++ keywords or names the generated code uses itself.
  std::vector<std::string> names = {"class", "new", "x_y", "main", "P",
                                    "r0",    "ts",  "out", "std",  "int"};
  std::string select;
  std::string want = "{";
  for (size_t i = 0; i < strings.size(); ++i) {
    std::string name = names[i];
    select += (i ? ", " : "") + strings[i].first + " as " + name;
    want += std::string(i ? "," : "") + "\"" + name + "\":" + JsonString(strings[i].second);
  }
  want += "}";
  std::string script =
      "param input: string = \"none\"\nschema Status { Job: string }\nstream main = from "
      "file(path: input) format json as Status\n  | select " +
      select + "\nmain | into stdout format json\n";
  WriteText(dir + "/job.flow", script);
  WriteText(dir + "/in.jsonl", "{\"Job\":\"a\"}\n{\"Job\":\"b\"}\n");
  Ran built = BuildJob(dir + "/job.flow", dir + "/job");
  ASSERT_EQ(built.exit_code, 0) << built.err;
  Ran ran = RunCmd({dir + "/job", "--set", "input=" + dir + "/in.jsonl"});
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_EQ(Lines(ran.out), (std::vector<std::string>{want, want}));
}

TEST(CodegenEndToEnd, HeaderTypeErrorNamesTheExternLine) {
  std::string dir = ScratchDir("udf_header_error");
  WriteText(dir + "/bad.h",
            "#include <cstdint>\ninline int64_t twice(int64_t x) { return x * \"two\"; }\n");
  WriteText(dir + "/job.flow", R"(param input: string = "none"
extern fn twice(x: int) -> int from "bad.h"
schema Ev { n: int }
stream s = from file(path: input) format json as Ev
  | select twice(n) as m
s | into stdout format json
)");
  Ran built = BuildJob(dir + "/job.flow", dir + "/job");
  EXPECT_EQ(built.exit_code, 1);
  EXPECT_NE(built.err.find("line 2"), std::string::npos) << built.err;
  EXPECT_NE(built.err.find("generated C++:"), std::string::npos) << built.err;
  EXPECT_NE(built.err.find("full compiler output:"), std::string::npos) << built.err;
}

TEST(CodegenEndToEnd, CallSiteErrorNamesTheExpressionLine) {
  std::string dir = ScratchDir("udf_call_error");
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
  Ran built = BuildJob(dir + "/job.flow", dir + "/job");
  EXPECT_EQ(built.exit_code, 1);
  EXPECT_NE(built.err.find("line 6"), std::string::npos) << built.err;
}

TEST(CodegenEndToEnd, UdfIsCalledAndDivisionByZeroFailsNamingTheLine) {
  std::string dir = ScratchDir("udf_ok");
  WriteText(dir + "/ok.h",
            "#include <cstdint>\ninline int64_t twice(int64_t x) { return 2 * x; }\n");
  WriteText(dir + "/job.flow", R"(param input: string = "none"
param d: int = 1
extern fn twice(x: int) -> int from "ok.h"
schema Ev { n: int }
stream s = from file(path: input) format json as Ev
  | select twice(n) as m, n / d as q
s | into stdout format json
)");
  WriteText(dir + "/in.jsonl", "{\"n\":3}\n{\"n\":-5}\n");
  Ran built = BuildJob(dir + "/job.flow", dir + "/job");
  ASSERT_EQ(built.exit_code, 0) << built.err;
  Ran ran = RunCmd({dir + "/job", "--set", "input=" + dir + "/in.jsonl"});
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_EQ(Lines(ran.out),
            (std::vector<std::string>{"{\"m\":6,\"q\":3}", "{\"m\":-10,\"q\":-5}"}));
  Ran zero = RunCmd({dir + "/job", "--set", "input=" + dir + "/in.jsonl", "--set", "d=0"});
  EXPECT_EQ(zero.exit_code, 1);
  EXPECT_NE(zero.err.find("job.flow:6"), std::string::npos) << zero.err;
  EXPECT_NE(zero.err.find("division by zero"), std::string::npos) << zero.err;
}

TEST(CodegenEndToEnd, CorruptCacheEntryIsRebuilt) {
  // Not "cache": that is SharedCache(), which the other end-to-end tests use concurrently.
  std::string dir = ScratchDir("corrupt_cache");
  std::string cache = dir + "/xdg";
  WriteText(dir + "/job.flow", R"(param input: string = "none"
schema Ev { n: int }
stream s = from file(path: input) format json as Ev | where n > 1
s | into stdout format json
)");
  WriteText(dir + "/in.jsonl", "{\"n\":1}\n{\"n\":2}\n");
  auto build = [&] {
    return RunCmd({Flowc(), "build", dir + "/job.flow", "-o", dir + "/job", "--verbose"}, cache);
  };
  auto check_runs = [&] {
    Ran ran = RunCmd({dir + "/job", "--set", "input=" + dir + "/in.jsonl"});
    EXPECT_EQ(ran.exit_code, 0) << ran.err;
    EXPECT_EQ(ran.out, "{\"n\":2}\n");
  };
  Ran first = build();
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.err.find("cache: rebuilt"), std::string::npos) << first.err;
  check_runs();
  // Older entries (other runtimes or flags) beyond the 4 used last go when an entry is used,
  // except one another flowc holds the lock of.
  const fs::path root = fs::path(cache) / "flow";
  for (int days = 1; days <= 5; ++days) {
    const fs::path old = root / ("pch-old" + std::to_string(days));
    fs::create_directories(old);
    WriteText((old / "lock").string(), "");
    WriteText((old / "flow_pch.h.gch").string(), "stale");
    fs::last_write_time(old, fs::file_time_type::clock::now() - std::chrono::hours(24 * days));
  }
  const int held = ::open((root / "pch-old5" / "lock").c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(held, 0);
  ASSERT_EQ(::flock(held, LOCK_SH), 0);
  Ran second = build();
  ::close(held);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.err.find("cache: hit"), std::string::npos) << second.err;
  for (int days = 1; days <= 5; ++days) {
    const bool kept = days <= 3 || days == 5;
    EXPECT_EQ(fs::exists(root / ("pch-old" + std::to_string(days))), kept) << "pch-old" << days;
  }
  // Corrupt the precompiled header in place: same size, different bytes.
  std::string gch;
  for (const auto& e : fs::recursive_directory_iterator(cache)) {
    if (e.path().filename() == "flow_pch.h.gch" &&
        e.path().parent_path().filename().string().rfind("pch-old", 0) != 0)
      gch = e.path().string();
  }
  ASSERT_FALSE(gch.empty());
  {
    std::fstream f(gch, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(gch) / 2));
    f.write("corrupt!", 8);
  }
  Ran third = build();
  ASSERT_EQ(third.exit_code, 0) << third.err;
  EXPECT_NE(third.err.find("cache: rebuilt"), std::string::npos) << third.err;
  check_runs();
}

TEST(CodegenEndToEnd, UnsupportedConstructIsAnErrorWithItsLine) {
  std::string dir = ScratchDir("unsupported");
  WriteText(dir + "/job.flow", R"(schema A { k: string, ts: timestamp }
stream a = from file(path: "a") format json as A event time ts watermark 1s
stream b = from file(path: "b") format json as A event time ts watermark 1s
stream j = a
  | join b on a.k == b.k window session 5s
  | select a.k
j | into stdout format json
)");
  Ran built = BuildJob(dir + "/job.flow", dir + "/job");
  EXPECT_EQ(built.exit_code, 1);
  EXPECT_NE(built.err.find(":5:"), std::string::npos) << built.err;
  EXPECT_NE(built.err.find("not supported"), std::string::npos) << built.err;
}

TEST(CodegenEndToEnd, EmitCppWritesSourceAndCMakeLists) {
  std::string dir = ScratchDir("emit");
  WriteText(dir + "/job.flow", R"(schema Ev { n: int }
stream s = from file(path: "x") format json as Ev | where n > 1 | select n + 1 as m
s | into stdout format json
)");
  Ran ran = RunCmd({Flowc(), "emit-cpp", dir + "/job.flow", "-o", dir + "/out"});
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  std::string cpp = ReadText(dir + "/out/job.cpp");
  std::string cmake = ReadText(dir + "/out/CMakeLists.txt");
  EXPECT_NE(cpp.find("int main("), std::string::npos);
  EXPECT_NE(cpp.find("#line 2 "), std::string::npos);  // the where/select map to line 2
  EXPECT_NE(cmake.find("libflow_rt_exec.a"), std::string::npos);
}

}  // namespace
}  // namespace flow::codegen_test
