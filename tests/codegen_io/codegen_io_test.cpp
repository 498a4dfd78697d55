// flowc build with CSV sources, datagen and the `on error` policies, without Kafka: each test
// writes a script and its input, builds and runs the job, and compares the output with a
// reference computed here.

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "io_test_util.h"

namespace flow::codegen_io_test {
namespace {

namespace fs = std::filesystem;
using codegen_test::BuildJob;
using codegen_test::JsonString;
using codegen_test::Lines;
using codegen_test::ReadText;
using codegen_test::ScratchDir;
using codegen_test::Sorted;
using codegen_test::WriteText;

// Builds `script` in `dir` as `dir`/job; fails the test when flowc fails.
std::string Build(const std::string& dir, const std::string& script) {
  WriteText(dir + "/job.flow", script);
  Ran built = BuildJob(dir + "/job.flow", dir + "/job");
  EXPECT_EQ(built.exit_code, 0) << built.err;
  return dir + "/job";
}

std::string NullableJson(const std::string* v) {
  return v == nullptr ? "null" : JsonString(*v);
}

struct Row {
  std::string name;
  int64_t n;
  const char* note;  // nullptr: null
};

std::string RowJson(const Row& r) {
  std::string note = r.note == nullptr ? "null" : JsonString(r.note);
  return "{\"name\":" + JsonString(r.name) + ",\"n\":" + std::to_string(r.n) + ",\"note\":" + note +
         "}";
}

// Header rows in each file's own column order, quoting (delimiters, doubled quotes, line breaks
// inside quotes), CRLF line ends, quoted empty vs empty (null), extra columns, a column the job
// does not read holding a bad value and missing from another file; and a `;` positional format.
TEST(CodegenIoCsv, HeaderQuotingAndPositionsMatchReference) {
  std::string dir = ScratchDir("csv_edges");
  fs::create_directories(dir + "/in");
  WriteText(dir + "/in/a1.csv",
            "name,n,note,score\n"
            "alice,1,\"hello, world\",1.5\n"
            "\"bob \"\"b\"\"\",2,\"\",zzz\n"
            "carol,3,,2.5\r\n"
            "\"dave\nd\",4,\"x\"\"y\",0\n");
  WriteText(dir + "/in/a2.csv",
            "note,extra,n,name\n"
            "n1,e,5,erin\n"
            ",\"q,q\",6,\"\"\n");
  WriteText(dir + "/p.csv", "x;1;\"a;b\"\ny;2;\n\"z\"\"\";3;\"\"\n");
  std::string bin = Build(dir, R"(
schema Row { name: string, n: int, note: string?, score: float }
schema P { id: string, v: int, tag: string? }
from file(path: ")" + dir + R"(/in") format csv(header: true) as Row
  | select name, n, note
  | into file(path: ")" + dir + R"(/out_a") format json
from file(path: ")" + dir + R"(/p.csv") format csv(delimiter: ";") as P
  | into file(path: ")" + dir + R"(/out_b") format json
)");
  Ran ran = RunLimited({bin, "--parallelism", "2"}, 120);
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  std::vector<Row> rows = {
      {"alice", 1, "hello, world"}, {"bob \"b\"", 2, ""}, {"carol", 3, nullptr},
      {"dave\nd", 4, "x\"y"},       {"erin", 5, "n1"},    {"", 6, nullptr}};
  std::vector<std::string> want;
  for (const Row& r : rows) want.push_back(RowJson(r));
  EXPECT_EQ(Sorted(DirLines(dir + "/out_a")), Sorted(want));
  std::string z = "z\"";
  std::string empty;
  std::vector<std::string> want_b = {
      "{\"id\":\"x\",\"v\":1,\"tag\":\"a;b\"}",
      "{\"id\":\"y\",\"v\":2,\"tag\":null}",
      "{\"id\":" + JsonString(z) + ",\"v\":3,\"tag\":" + NullableJson(&empty) + "}",
  };
  EXPECT_EQ(Sorted(DirLines(dir + "/out_b")), Sorted(want_b));
}

TEST(CodegenIoCsv, BadDelimiterIsAClearStartupError) {
  std::string dir = ScratchDir("csv_delim");
  WriteText(dir + "/p.csv", "a\n");
  std::string bin = Build(dir, R"(
param delim: string = ";"
schema P { id: string }
from file(path: ")" + dir + R"(/p.csv") format csv(delimiter: delim) as P | into stdout format json
)");
  Ran ran = RunLimited({bin, "--set", "delim=ab"}, 60);
  EXPECT_EQ(ran.exit_code, 2) << ran.err;
  EXPECT_NE(ran.err.find("`delimiter` must be one character"), std::string::npos) << ran.err;
  ran = RunLimited({bin}, 60);
  EXPECT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_EQ(ran.out, "{\"id\":\"a\"}\n");
}

// stdin: the header is line 1 of the input; a quoted field spans lines; raw records keep their
// line.
TEST(CodegenIoCsv, StdinWithHeaderAndQuotedLineBreaks) {
  std::string dir = ScratchDir("csv_stdin");
  WriteText(dir + "/in.csv", "v,k\r\n1,\"a\nb\"\n2,c\n");
  std::string bin = Build(dir, R"(
schema P { k: string, v: int }
from stdin() format csv(header: true) as P | into stdout format json
)");
  Ran ran = RunLimited({"/bin/sh", "-c", "exec \"$0\" < \"$1\"", bin, dir + "/in.csv"}, 60);
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  std::string ab = "a\nb";
  EXPECT_EQ(ran.out, "{\"k\":" + JsonString(ab) + ",\"v\":1}\n{\"k\":\"c\",\"v\":2}\n");
}

// datagen: the documented timestamps (base_time + floor(i * 1000 / rate)), value ranges, the
// count, and the same records for the same seed at any parallelism; another seed differs.
TEST(CodegenIoDatagen, DeterministicForASeedAndCountHonoured) {
  std::string dir = ScratchDir("datagen");
  std::string bin = Build(dir, R"(
param seed: int = 7
param count: int = 500
schema R { k: string, v: int, f: float, b: bool, ts: timestamp, o: int?, l: list<int> }
from datagen(count: count, rate: 40, seed: seed, cardinality: 5, max: 50) as R
  event time ts watermark 0s
  | into stdout format json
)");
  Ran p1 = RunLimited({bin, "--parallelism", "1"}, 120);
  ASSERT_EQ(p1.exit_code, 0) << p1.err;
  Ran p3 = RunLimited({bin, "--parallelism", "3"}, 120);
  ASSERT_EQ(p3.exit_code, 0) << p3.err;
  Ran again = RunLimited({bin, "--parallelism", "1"}, 120);
  std::vector<std::string> l1 = Lines(p1.out);
  ASSERT_EQ(l1.size(), 500u);
  EXPECT_EQ(Sorted(Lines(p3.out)), Sorted(l1));
  EXPECT_EQ(again.out, p1.out);
  // Timestamps: record i at 2026-01-01T00:00:00Z + floor(i * 1000 / 40) ms.
  std::multiset<std::string> want_ts, got_ts;
  for (int64_t i = 0; i < 500; ++i)
    want_ts.insert(codegen_test::Rfc3339(1767225600000 + i * 1000 / 40));
  std::set<std::string> keys;
  for (const std::string& line : l1) {
    size_t t = line.find("\"ts\":\"");
    ASSERT_NE(t, std::string::npos) << line;
    got_ts.insert(line.substr(t + 6, 24));
    size_t k = line.find("\"k\":\"");
    keys.insert(line.substr(k + 5, line.find('"', k + 5) - k - 5));
    size_t v = line.find("\"v\":");
    int64_t value = std::stoll(line.substr(v + 4));
    EXPECT_TRUE(value >= 0 && value < 50) << line;
  }
  EXPECT_EQ(got_ts, want_ts);
  for (const std::string& k : keys)
    EXPECT_TRUE(k.size() == 3 && k.rfind("k-", 0) == 0 && k[2] >= '0' && k[2] < '5') << k;
  EXPECT_GT(keys.size(), 1u);
  Ran other = RunLimited({bin, "--parallelism", "1", "--set", "seed=8"}, 120);
  ASSERT_EQ(other.exit_code, 0) << other.err;
  EXPECT_EQ(Lines(other.out).size(), 500u);
  EXPECT_NE(Sorted(Lines(other.out)), Sorted(l1));
  Ran few = RunLimited({bin, "--set", "count=3"}, 120);
  EXPECT_EQ(Lines(few.out).size(), 3u) << few.err;
}

const char kBadCsv[] =
    "sensor,celsius\n"
    "s1,1.5\n"
    "s2,warm\n"
    "s3,2.5\n"
    "s4\n"
    "s5,\"3.5\n";

TEST(CodegenIoErrors, FailNamesFileLineAndReason) {
  std::string dir = ScratchDir("err_fail");
  WriteText(dir + "/in.csv", kBadCsv);
  WriteText(dir + "/in.jsonl",
            "{\"sensor\":\"a\",\"celsius\":1}\n{\"sensor\":\"b\",\"celsius\":\n");
  std::string bin = Build(dir, R"(
param input: string
schema Reading { sensor: string, celsius: float }
from file(path: input) format csv(header: true) as Reading on error fail | into stdout format csv
)");
  Ran ran = RunLimited({bin, "--set", "input=" + dir + "/in.csv"}, 60);
  EXPECT_EQ(ran.exit_code, 1);
  EXPECT_NE(ran.err.find("cannot decode source at job.flow:4 file " + dir + "/in.csv line 3"),
            std::string::npos)
      << ran.err;
  EXPECT_NE(ran.err.find("expected float"), std::string::npos) << ran.err;
  // Records before the bad one were written; none after.
  EXPECT_EQ(ran.out.find("s3"), std::string::npos) << ran.out;
  std::string json_bin = Build(dir, R"(
schema Reading { sensor: string, celsius: float }
from file(path: ")" + dir + R"(/in.jsonl") format json as Reading | into stdout format csv
)");
  ran = RunLimited({json_bin}, 60);
  EXPECT_EQ(ran.exit_code, 1);
  EXPECT_NE(ran.err.find("in.jsonl line 2"), std::string::npos) << ran.err;
}

TEST(CodegenIoErrors, SkipCountsAndDeadLetterRecordsContents) {
  std::string dir = ScratchDir("err_skip");
  WriteText(dir + "/in.csv", kBadCsv);
  std::string bin = Build(dir, R"(
schema Reading { sensor: string, celsius: float }
from file(path: ")" + dir + R"(/in.csv") format csv(header: true) as Reading
  on error skip
  | into file(path: ")" + dir + R"(/kept") format csv
from file(path: ")" + dir + R"(/in.csv") format csv(header: true) as Reading
  on error dead_letter file(path: ")" +
                                   dir + R"(/dead") format json
  | into file(path: ")" + dir + R"(/kept2") format csv
)");
  Ran ran = RunLimited({bin, "--parallelism", "1"}, 60);
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  std::vector<std::string> good = {"s1,1.5", "s3,2.5"};
  EXPECT_EQ(DirLines(dir + "/kept"), good);
  EXPECT_EQ(DirLines(dir + "/kept2"), good);
  EXPECT_NE(ran.err.find("source closed source=\"source at job.flow:3\" skipped=3 dead_letters=0"),
            std::string::npos)
      << ran.err;
  EXPECT_NE(ran.err.find("source closed source=\"source at job.flow:6\" skipped=3 dead_letters=3"),
            std::string::npos)
      << ran.err;
  std::vector<std::string> dead = DirLines(dir + "/dead");
  ASSERT_EQ(dead.size(), 3u);
  struct Want {
    int line;
    std::string raw;
    std::string reason;
  };
  std::vector<Want> want = {
      {3, "s2,warm", "expected float"}, {5, "s4", "celsius"}, {6, "s5,\"3.5", "unterminated"}};
  for (size_t i = 0; i < want.size(); ++i) {
    std::string head = "{\"source\":\"source at job.flow:6\",\"position\":" +
                       JsonString("file " + dir + "/in.csv line " + std::to_string(want[i].line)) +
                       ",\"error\":";
    EXPECT_EQ(dead[i].rfind(head, 0), 0u) << dead[i];
    std::string tail = ",\"raw\":" + JsonString(want[i].raw) + "}";
    ASSERT_GE(dead[i].size(), tail.size());
    EXPECT_EQ(dead[i].substr(dead[i].size() - tail.size()), tail) << dead[i];
    EXPECT_NE(dead[i].find(want[i].reason), std::string::npos) << dead[i];
  }
}

// What flowc build does not do yet is a clear compile error naming the line, not a crash.
TEST(CodegenIoUnsupported, UnsupportedIoConstructsAreClearErrors) {
  std::string dir = ScratchDir("unsupported");
  WriteText(dir + "/dl.flow", R"(
schema A { x: int }
from file(path: "a.jsonl") format json as A on error dead_letter file(path: "d/") format csv
  | into stdout format json
)");
  Ran ran = BuildJob(dir + "/dl.flow", dir + "/dl");
  EXPECT_EQ(ran.exit_code, 1);
  EXPECT_NE(ran.err.find("dl.flow:3:"), std::string::npos) << ran.err;
  EXPECT_NE(ran.err.find("`format csv` for dead letters (they are JSON objects) is not supported "
                         "by flowc build yet"),
            std::string::npos)
      << ran.err;
  WriteText(dir + "/hdr.flow", R"(
schema A { x: int }
from file(path: "a.jsonl") format json as A
  | into stdout format csv(header: true)
)");
  ran = BuildJob(dir + "/hdr.flow", dir + "/hdr");
  EXPECT_EQ(ran.exit_code, 1);
  EXPECT_NE(ran.err.find("hdr.flow:4:"), std::string::npos) << ran.err;
  // Refused by the checker already (so `flowc check` and editors say it too), not only by build.
  EXPECT_NE(ran.err.find("`header` of `format csv` is for sources"), std::string::npos) << ran.err;
}

// The examples that use only these features build and run from the repository root.
TEST(CodegenIoExamples, CsvErrorsAndDatagenSlidingRun) {
  std::string dir = ScratchDir("examples");
  fs::path root = fs::path(FLOW_SOURCE_DIR);
  for (const char* name : {"csv_errors", "datagen_sliding"}) {
    Ran built =
        BuildJob((root / "examples" / (std::string(name) + ".flow")).string(), dir + "/" + name);
    ASSERT_EQ(built.exit_code, 0) << name << ": " << built.err;
  }
  fs::path work = fs::path(dir) / "run";
  fs::create_directories(work / "examples" / "data");
  fs::copy_file(root / "examples" / "data" / "sensors.csv",
                work / "examples" / "data" / "sensors.csv");
  fs::current_path(work);
  Ran ran = RunLimited({dir + "/csv_errors", "--parallelism", "1"}, 120);
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  // sensors.csv has three bad rows; each source drops them, the second also writes them out.
  std::vector<std::string> dead = DirLines((work / "out" / "rejected").string());
  EXPECT_EQ(dead.size(), 3u);
  for (const std::string& d : dead)
    EXPECT_EQ(d.rfind("{\"source\":\"source at csv_errors.flow:", 0), 0u) << d;
  EXPECT_NE(ran.err.find("skipped=3 dead_letters=0"), std::string::npos) << ran.err;
  EXPECT_NE(ran.err.find("skipped=3 dead_letters=3"), std::string::npos) << ran.err;
  ran = RunLimited({dir + "/datagen_sliding", "--set", "count=20000", "--parallelism", "2"}, 300);
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  std::vector<std::string> rows = DirLines((work / "out" / "levels").string());
  // 20000 records at 100/s span 200 s: every sensor gets windows; each row has 7 columns.
  EXPECT_GT(rows.size(), 20u);
  for (const std::string& r : rows) EXPECT_EQ(std::count(r.begin(), r.end(), ','), 6) << r;
  fs::current_path(root);
}

}  // namespace
}  // namespace flow::codegen_io_test
