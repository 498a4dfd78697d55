// End to end: jobs built with and without fold-constants / push-filters give byte-identical
// output on random programs and random data; a folded division by zero still fails at run time
// naming its line; a pushed filter gives what an independent reference computes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "codegen_test_util.h"

namespace flow::codegen_test {
namespace {

// Random well-typed Flow expressions over R { a: int, b: int, f: float, s: string, n: int? } and
// the int param `p`; about half the subtrees have only literals, so there is much to fold.
class ExprGen {
 public:
  explicit ExprGen(uint32_t seed) : rng_(seed) {}

  std::string Int(int depth, bool constant = false) {
    constant = constant || Chance(3);
    if (depth <= 0) return IntLeaf(constant);
    switch (Pick(9)) {
      case 0:
        return "(" + Int(depth - 1, constant) + " + " + Int(depth - 1, constant) + ")";
      case 1:
        return "(" + Int(depth - 1, constant) + " - " + Int(depth - 1, constant) + ")";
      case 2:
        return "(" + Int(depth - 1, constant) + " * " + Int(depth - 1, constant) + ")";
      // Divisors that are never zero: a non-zero literal, or x % 7 + 8 (in 2..14).
      case 3:
        return "(" + Int(depth - 1, constant) + " / " + NonZero(depth - 1, constant) + ")";
      case 4:
        return "(" + Int(depth - 1, constant) + " % " + NonZero(depth - 1, constant) + ")";
      case 5:
        return "-" + Int(depth - 1, constant);
      case 6:
        return "(case when " + Bool(depth - 1, constant) + " then " + Int(depth - 1, constant) +
               " else " + Int(depth - 1, constant) + " end)";
      case 7:
        return "length(" + Str(depth - 1, constant) + ")";
      default:
        return "cast(" + Float(depth - 1, constant) + " as int)";
    }
  }

  std::string Float(int depth, bool constant = false) {
    constant = constant || Chance(3);
    if (depth <= 0) {
      if (!constant && Chance(2)) return "f";
      static const char* kLits[] = {"0.5", "-2.25", "1e300",  "3.0",
                                    "0.1", "-0.0",  "1e-300", "7.75"};
      return kLits[Pick(8)];
    }
    switch (Pick(5)) {
      case 0:
        return "(" + Float(depth - 1, constant) + " + " + Int(depth - 1, constant) + ")";
      case 1:
        return "(" + Float(depth - 1, constant) + " * " + Float(depth - 1, constant) + ")";
      case 2:
        return "(" + Float(depth - 1, constant) + " / " + Float(depth - 1, constant) +
               ")";  // inf, nan
      case 3:
        return "(" + Int(depth - 1, constant) + " - " + Float(depth - 1, constant) + ")";
      default:
        return "cast(" + Int(depth - 1, constant) + " as float)";
    }
  }

  std::string Str(int depth, bool constant = false) {
    constant = constant || Chance(3);
    if (depth <= 0) {
      if (!constant && Chance(2)) return "s";
      static const char* kLits[] = {"\"\"",   "\" Ab c \"", "\"x\"",     "\"ÄbÇ\"",
                                    "\"12\"", "\"-7\"",     "\"a\\\"b\""};
      return kLits[Pick(7)];
    }
    switch (Pick(5)) {
      case 0:
        return "upper(" + Str(depth - 1, constant) + ")";
      case 1:
        return "lower(" + Str(depth - 1, constant) + ")";
      case 2:
        return "trim(" + Str(depth - 1, constant) + ")";
      case 3:
        return "concat(" + Str(depth - 1, constant) + ", " + Str(depth - 1, constant) + ")";
      default:
        return "cast(" + Int(depth - 1, constant) + " as string)";
    }
  }

  std::string Bool(int depth, bool constant = false) {
    constant = constant || Chance(3);
    if (depth <= 0) {
      if (!constant && Chance(3)) return "n is null";
      return Chance(2) ? "true" : "false";
    }
    static const char* kCmp[] = {"==", "!=", "<", "<=", ">", ">="};
    switch (Pick(9)) {
      case 0:
        return "(" + Int(depth - 1, constant) + " " + kCmp[Pick(6)] + " " +
               Int(depth - 1, constant) + ")";
      case 1:
        return "(" + Float(depth - 1, constant) + " " + kCmp[Pick(6)] + " " +
               Int(depth - 1, constant) + ")";
      case 2:
        return "(" + Str(depth - 1, constant) + " " + kCmp[Pick(6)] + " " +
               Str(depth - 1, constant) + ")";
      case 3:
        return "(" + Bool(depth - 1, constant) + " and " + Bool(depth - 1, constant) + ")";
      case 4:
        return "(" + Bool(depth - 1, constant) + " or " + Bool(depth - 1, constant) + ")";
      case 5:
        return "not " + Bool(depth - 1, constant);
      case 6:
        return "(" + Int(depth - 1, constant) + " in (1, -3, " + Int(0, true) + "))";
      case 7:
        return "(" + NullableInt(depth - 1, constant) + " > " + Int(depth - 1, constant) +
               ")";  // bool?
      default:
        return "(cast(" + Str(depth - 1, constant) + " as int) is null)";
    }
  }

  // int? values: the nullable field or a cast that may fail.
  std::string NullableInt(int depth, bool constant) {
    if (!constant && Chance(2)) return "(n + " + Int(depth, constant) + ")";
    return "cast(" + Str(depth, constant) + " as int)";
  }

 private:
  bool Chance(int one_in) { return rng_() % static_cast<uint32_t>(one_in) == 0; }
  int Pick(int n) { return static_cast<int>(rng_() % static_cast<uint32_t>(n)); }

  std::string IntLeaf(bool constant) {
    if (!constant) {
      switch (Pick(4)) {
        case 0:
          return "a";
        case 1:
          return "b";
        case 2:
          return "p";
        default:
          break;
      }
    }
    static const char* kLits[] = {"0",          "1", "2", "-5", "17", "9223372036854775807",
                                  "1000000007", "-1"};
    return kLits[Pick(8)];
  }

  std::string NonZero(int depth, bool constant) {
    if (Chance(2)) {
      static const char* kLits[] = {"1", "-1", "3", "7", "-9223372036854775807", "2"};
      return kLits[Pick(6)];
    }
    return "(" + Int(depth, constant) + " % 7 + 8)";
  }

  std::mt19937 rng_;
};

std::string RandomInput(uint32_t seed, int rows) {
  std::mt19937 rng(seed);
  static const char* kStrings[] = {"", "x", " Ab c ", "12", "-7", "ÄbÇ", "y z", "a\\\"b"};
  std::string s;
  for (int i = 0; i < rows; ++i) {
    int64_t a = static_cast<int64_t>(rng() % 41) - 20;
    int64_t b = i % 13 == 0 ? INT64_MAX - static_cast<int64_t>(rng() % 3)
                            : static_cast<int64_t>(rng() % 2001) - 1000;
    double f = static_cast<double>(static_cast<int>(rng() % 20001) - 10000) / 16.0;
    s += "{\"a\":" + std::to_string(a) + ",\"b\":" + std::to_string(b) +
         ",\"f\":" + std::to_string(f) + ",\"s\":\"" + kStrings[rng() % 8] + "\"";
    if (rng() % 3 != 0) s += ",\"n\":" + std::to_string(static_cast<int64_t>(rng() % 100) - 50);
    s += "}\n";
  }
  return s;
}

Ran BuildAndRun(const std::string& dir, const std::string& name,
                const std::vector<std::string>& passes_off, const std::string& input) {
  std::vector<std::string> extra;
  for (const std::string& p : passes_off) {
    extra.push_back("--no-pass");
    extra.push_back(p);
  }
  Ran built = BuildJob(dir + "/job.flow", dir + "/" + name, extra);
  if (built.exit_code != 0) return built;
  return RunCmd({dir + "/" + name, "--parallelism", "1", "--set", "input=" + input});
}

TEST(PlanPassesEndToEnd, RandomProgramsGiveTheSameOutputWithAndWithoutThePasses) {
  const uint32_t seed = 20261129;
  ExprGen gen(seed);
  std::string script =
      "param input: string = \"none.jsonl\"\nparam p: int = 5\n"
      "schema R { a: int, b: int, f: float, s: string, n: int? }\n"
      "stream r = from file(path: input) format json as R\n";
  for (int k = 0; k < 4; ++k) {
    std::string tag = "\"q" + std::to_string(k) + "\" as q";
    script += "r | where " + gen.Bool(3) + "\n  | select " + tag + ", a, b, f, s, n, " +
              gen.Int(3) + " as i1, " + gen.Int(2, true) + " as i2, " + gen.Float(3) + " as f1, " +
              gen.Str(3) + " as s1, " + gen.Bool(3) + " as b1, " + gen.Str(2, true) +
              " as s2\n  | where " + gen.Bool(2) + " or i1 > " + gen.Int(1) +
              " or s1 != " + gen.Str(1) + "\n  | into stdout format json\n";
  }
  std::string dir = ScratchDir("passes_random");
  WriteText(dir + "/job.flow", script);
  WriteText(dir + "/in.jsonl", RandomInput(seed, 3000));

  // The passes really change the plan of this script.
  Ran with = RunCmd({Flowc(), "explain", dir + "/job.flow"});
  Ran without = RunCmd({Flowc(), "explain", dir + "/job.flow", "--no-pass", "fold-constants",
                        "--no-pass", "push-filters"});
  ASSERT_EQ(with.exit_code, 0) << with.err << script;
  ASSERT_EQ(without.exit_code, 0) << without.err;
  EXPECT_NE(with.out, without.out);
  EXPECT_NE(with.out.find("rewritten by passes"), std::string::npos) << with.out;

  Ran all = BuildAndRun(dir, "all", {}, dir + "/in.jsonl");
  ASSERT_EQ(all.exit_code, 0) << all.err << "\n" << script;
  EXPECT_GT(Lines(all.out).size(), 0u);
  for (const std::vector<std::string>& off :
       {std::vector<std::string>{"fold-constants"}, std::vector<std::string>{"push-filters"},
        std::vector<std::string>{"fold-constants", "push-filters"}}) {
    Ran ran =
        BuildAndRun(dir, "off_" + off.back() + std::to_string(off.size()), off, dir + "/in.jsonl");
    ASSERT_EQ(ran.exit_code, 0) << ran.err;
    // One reader thread at parallelism 1, but the four pipelines interleave: compare as multisets.
    EXPECT_EQ(Sorted(Lines(ran.out)), Sorted(Lines(all.out)))
        << "passes off: " << off.back() << "\n"
        << script;
  }
}

// Every operator, cast and folded function on constants of every type, written out in full:
// each pair of types the checker accepts (it decides, so the table need not restate its rules).
std::vector<std::string> EveryConstantExpression() {
  const std::vector<std::string> values = {
      // int: the extremes, for wrapping and `/ -1`, `% -1` (no 0: `x / 0` fails the job)
      "-1", "7", "9223372036854775807", "(-9223372036854775807 - 1)",
      // float: signed zero, NaN, a huge value
      "-0.0", "2.5", "(0.0 / 0.0)", "1e300",
      // string: empty, case, digits with spaces, UTF-8, what casts parse
      "\"\"", "\"Ab\"", "\" 12 \"", "\"ÄbÇ\"", "\"TRUE\"", "\"-1.5e3\"",
      "\"2026-03-01T09:00:00.250Z\"", "\"1h\"",
      // bool, duration, timestamp, null
      "true", "false", "-250ms", "1d", "timestamp \"2026-03-01T09:00:00Z\"", "null"};
  std::vector<std::string> out;
  for (const char* op : {"+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "and", "or"}) {
    for (const std::string& a : values) {
      for (const std::string& b : values) {
        out.push_back("(" + a + " " + op + " " + b + ")");
      }
    }
  }
  for (const std::string& a : values) {
    out.push_back("(-" + a + ")");
    out.push_back("(not " + a + ")");
    out.push_back("(" + a + " is null)");
    out.push_back("(" + a + " in (7, null, 2.5))");
    out.push_back("(" + a + " in (\"Ab\", \"\"))");
    for (const char* t : {"bool", "int", "float", "string", "timestamp", "duration"})
      out.push_back("cast(" + a + " as " + t + ")");
    for (const char* f : {"lower", "upper", "length", "trim", "ltrim", "rtrim"})
      out.push_back(std::string(f) + "(" + a + ")");
    for (const std::string& b : {std::string("\"b\""), std::string("\"\""), std::string("\"Ä\"")}) {
      for (const char* f : {"starts_with", "ends_with", "contains"})
        out.push_back(std::string(f) + "(" + a + ", " + b + ")");
      out.push_back("concat(" + a + ", " + b + ", " + a + ")");
      out.push_back("replace(" + a + ", " + b + ", \"<>\")");
    }
    out.push_back("(case when " + a + " then 1 else 2.5 end)");
    // Not folded: with a null literal argument they must still compile and run.
    out.push_back("greatest(" + a + ", 7)");
    out.push_back("least(2.5, " + a + ")");
    out.push_back("coalesce(" + a + ", \"x\")");
  }
  return out;
}

std::string ConstantsScript(const std::vector<std::string>& exprs) {
  std::string s =
      "param input: string = \"none.jsonl\"\n"
      "schema R { a: int }\n"
      "stream r = from file(path: input) format json as R\n"
      "r | select a";
  for (size_t i = 0; i < exprs.size(); ++i) s += ",\n    " + exprs[i] + " as c" + std::to_string(i);
  return s + "\n  | into stdout format json\n";
}

TEST(PlanPassesEndToEnd, EveryOperatorCastAndFunctionOnConstantsFoldsToWhatTheJobComputes) {
  std::string dir = ScratchDir("passes_every_constant");
  // Keep what the checker accepts: expression i is on line 5 + i.
  std::vector<std::string> exprs = EveryConstantExpression();
  WriteText(dir + "/job.flow", ConstantsScript(exprs));
  Ran check =
      RunCmd({Flowc(), "check", "--color", "never", "--max-errors", "100000", dir + "/job.flow"});
  std::set<size_t> rejected;
  for (const std::string& line : Lines(check.err)) {
    std::smatch m;
    static const std::regex kError(R"(job\.flow:(\d+):\d+: error)");
    if (std::regex_search(line, m, kError)) rejected.insert(std::stoul(m[1]) - 5);
  }
  ASSERT_EQ(check.exit_code, 1) << check.err;
  ASSERT_FALSE(rejected.empty()) << check.err;
  std::vector<std::string> kept;
  for (size_t i = 0; i < exprs.size(); ++i) {
    if (rejected.count(i) == 0) kept.push_back(exprs[i]);
  }
  WriteText(dir + "/job.flow", ConstantsScript(kept));
  check = RunCmd({Flowc(), "check", dir + "/job.flow"});
  ASSERT_EQ(check.exit_code, 0) << check.err;
  // Every kind of constant took part (not a table the checker emptied).
  ASSERT_GE(kept.size(), 400u) << check.err;
  for (const char* must :
       {"(9223372036854775807 + -1)", "((-9223372036854775807 - 1) / -1)", "(\"Ab\" < \"\")",
        "(true and false)", "((0.0 / 0.0) == (0.0 / 0.0))", "cast(1e300 as int)",
        "cast(\"2026-03-01T09:00:00.250Z\" as timestamp)", "cast(2.5 as string)",
        "cast(timestamp \"2026-03-01T09:00:00Z\" as string)", "length(\"ÄbÇ\")",
        "replace(\"ÄbÇ\", \"\", \"<>\")", "(7 % -1)", "(-0.0 < 7)", "greatest(null, 7)",
        "least(2.5, null)", "coalesce(null, \"x\")"}) {
    EXPECT_NE(std::find(kept.begin(), kept.end(), must), kept.end()) << must;
  }
  // The pass really replaces them: folded, the plan holds no operator of these expressions.
  Ran plan = RunCmd({Flowc(), "explain", dir + "/job.flow"});
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_EQ(plan.out.find("9223372036854775807 + -1"), std::string::npos);
  EXPECT_EQ(plan.out.find("cast(2.5 as string)"), std::string::npos);

  WriteText(dir + "/in.jsonl", "{\"a\":1}\n");
  Ran folded = BuildAndRun(dir, "folded", {}, dir + "/in.jsonl");
  ASSERT_EQ(folded.exit_code, 0) << folded.err;
  Ran computed = BuildAndRun(dir, "computed", {"fold-constants"}, dir + "/in.jsonl");
  ASSERT_EQ(computed.exit_code, 0) << computed.err;
  // Column by column, so a mismatch names its expression.
  auto columns = [](const std::string& row) {
    std::vector<std::string> c;
    size_t at = 0;
    while ((at = row.find(",\"c", at)) != std::string::npos) {
      size_t end = row.find(",\"c", at + 1);
      c.push_back(row.substr(at, end == std::string::npos ? std::string::npos : end - at));
      at = at + 1;
    }
    return c;
  };
  std::vector<std::string> f = columns(folded.out), c = columns(computed.out);
  ASSERT_EQ(f.size(), kept.size()) << folded.out;
  ASSERT_EQ(c.size(), kept.size()) << computed.out;
  for (size_t i = 0; i < kept.size(); ++i) EXPECT_EQ(f[i], c[i]) << kept[i];
}

TEST(PlanPassesEndToEnd, AConstantDivisionByZeroStillFailsAtRunTimeWithItsLine) {
  std::string dir = ScratchDir("passes_div_zero");
  WriteText(dir + "/job.flow", R"(param input: string = "none.jsonl"
schema R { a: int }
stream r = from file(path: input) format json as R
r | select a, 2 * 3 as six,
      1 + 7 / (3 - 3) as boom
  | into stdout format json
)");
  WriteText(dir + "/in.jsonl", "{\"a\":1}\n{\"a\":2}\n");
  Ran ran = BuildAndRun(dir, "job", {}, dir + "/in.jsonl");
  EXPECT_NE(ran.exit_code, 0);
  // `7 / (3 - 3)` starts at line 5, column 11.
  EXPECT_NE(ran.err.find("job.flow:5:11: integer division by zero"), std::string::npos) << ran.err;
}

TEST(PlanPassesEndToEnd, APushedFilterMatchesAnIndependentReference) {
  std::string dir = ScratchDir("passes_reference");
  WriteText(dir + "/job.flow", R"(param input: string = "none.jsonl"
schema R { a: int, b: int, s: string, tags: list<string> }
stream r = from file(path: input) format json as R
r | select a, b * 2 as c, s, tags | explode tags as t | where c > 4 and s != "x" and a % 3 != 0
  | select a, c, s, t | into stdout format json
)");
  std::mt19937 rng(7);
  std::string input;
  std::vector<std::string> want;
  static const char* kS[] = {"x", "y", "zz"};
  for (int i = 0; i < 500; ++i) {
    int64_t a = static_cast<int64_t>(rng() % 50) - 25, b = static_cast<int64_t>(rng() % 20) - 5;
    std::string s = kS[rng() % 3];
    int ntags = static_cast<int>(rng() % 3);
    std::string tags;
    std::vector<std::string> tag_list;
    for (int t = 0; t < ntags; ++t) {
      tag_list.push_back("t" + std::to_string(t));
      tags += std::string(t ? "," : "") + "\"t" + std::to_string(t) + "\"";
    }
    input += "{\"a\":" + std::to_string(a) + ",\"b\":" + std::to_string(b) + ",\"s\":\"" + s +
             "\",\"tags\":[" + tags + "]}\n";
    if (!(b * 2 > 4 && s != "x" && a % 3 != 0)) continue;
    for (const std::string& t : tag_list) {
      want.push_back("{\"a\":" + std::to_string(a) + ",\"c\":" + std::to_string(b * 2) +
                     ",\"s\":" + JsonString(s) + ",\"t\":" + JsonString(t) + "}");
    }
  }
  WriteText(dir + "/in.jsonl", input);
  Ran plan = RunCmd({Flowc(), "explain", dir + "/job.flow"});
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  // The filter runs first, rewritten through the select.
  EXPECT_NE(plan.out.find("step 1: where (((b * 2) > 4) and (s != \"x\")) and ((a % 3) != 0) "
                          "(rewritten by passes)"),
            std::string::npos)
      << plan.out;
  Ran ran = BuildAndRun(dir, "job", {}, dir + "/in.jsonl");
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_EQ(Lines(ran.out), want);
}

// prune-join on a window join of a stream with its own maximum per window (Nexmark q7's shape):
// in order, the rows are what a reference computed here says (per window, the records whose key
// is the window's maximum); with late records too, the same as the job built without the pass; at
// parallelism 1 and 4.
TEST(PlanPassesEndToEnd, APrunedMaxJoinMatchesTheReferenceAndTheUnprunedJob) {
  std::string dir = ScratchDir("passes_prune_join");
  WriteText(dir + "/job.flow", R"(param input: string = "none.jsonl"
schema B { id: int, k: int, ts: timestamp }
stream b = from file(path: input) format json as B event time ts watermark 2s
stream top = b | window tumbling 1s | aggregate max(k) as m
b | join top on b.k == top.m window tumbling 1s | select b.id, b.k | into stdout format json
)");
  Ran plan = RunCmd({Flowc(), "explain", dir + "/job.flow"});
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_NE(plan.out.find("prune below the running max of b.k per window"), std::string::npos)
      << plan.out;
  Ran built = BuildJob(dir + "/job.flow", dir + "/pruned", {});
  ASSERT_EQ(built.exit_code, 0) << built.err;
  built = BuildJob(dir + "/job.flow", dir + "/plain", {"--no-pass", "prune-join"});
  ASSERT_EQ(built.exit_code, 0) << built.err;
  const int64_t t0 = 1764000000000;  // a window boundary
  for (bool late : {false, true}) {
    std::mt19937 rng(late ? 11 : 10);
    std::string input;
    std::map<int64_t, std::vector<std::pair<int64_t, int64_t>>> windows;  // start -> (id, k)
    int64_t t = t0;
    for (int id = 0; id < 6000; ++id) {
      t += static_cast<int64_t>(rng() % 20);
      int64_t ts = t - static_cast<int64_t>(rng() % 1500);  // within the 2 s bound
      if (late && rng() % 8 == 0) ts -= 3000 + static_cast<int64_t>(rng() % 20000);
      const int64_t k = static_cast<int64_t>(rng() % 300);  // ties happen
      input += "{\"id\":" + std::to_string(id) + ",\"k\":" + std::to_string(k) +
               ",\"ts\":" + std::to_string(ts) + "}\n";
      windows[ts - (((ts - t0) % 1000) + 1000) % 1000].emplace_back(id, k);
    }
    WriteText(dir + "/in.jsonl", input);
    std::vector<std::string> want;
    for (const auto& [start, rows] : windows) {
      int64_t top = rows.front().second;
      for (const auto& r : rows) top = std::max(top, r.second);
      for (const auto& [id, k] : rows) {
        if (k == top) {
          want.push_back("{\"id\":" + std::to_string(id) + ",\"k\":" + std::to_string(k) + "}");
        }
      }
    }
    for (const char* par : {"1", "4"}) {
      SCOPED_TRACE(std::string(late ? "late records" : "in order") + ", parallelism " + par);
      Ran pruned =
          RunCmd({dir + "/pruned", "--parallelism", par, "--set", "input=" + dir + "/in.jsonl"});
      Ran plain =
          RunCmd({dir + "/plain", "--parallelism", par, "--set", "input=" + dir + "/in.jsonl"});
      ASSERT_EQ(pruned.exit_code, 0) << pruned.err;
      ASSERT_EQ(plain.exit_code, 0) << plain.err;
      EXPECT_EQ(Sorted(Lines(pruned.out)), Sorted(Lines(plain.out)));
      if (!late) {
        EXPECT_EQ(Sorted(Lines(pruned.out)), Sorted(want));
      }
      EXPECT_GT(Lines(pruned.out).size(), 60u);
    }
  }
}

}  // namespace
}  // namespace flow::codegen_test
