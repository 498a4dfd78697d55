// Script names never meet the names of C++, its libraries, the runtime or the generated code:
// a job whose schema, stream, param, field and aggregate names are keywords, library types,
// macros and generated names builds and computes what a reference computed here says.

#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/toolchain.h"
#include "codegen_test_util.h"

namespace flow::codegen_test {
namespace {

// Every kind of name a script can declare, each one a name C++ already uses for something.
constexpr const char* kScript = R"(param stdin: int = 0
param input: string = "none"
schema int64_t { class: string, size_t: int, EXIT_FAILURE: int, errno: int?, assert: string, ts: timestamp }
stream linux = from file(path: input) format json as int64_t
  event time ts watermark 1s
  | where size_t > stdin
  | key by class
  | window tumbling 1s
  | aggregate count() as unix, sum(size_t) as NULL, max(EXIT_FAILURE) as major, count(errno) as INT64_MAX
  | select class as vector, window_start as optional, unix, NULL, major, INT64_MAX
stream Params = linux
  | select vector as uint8_t, optional as std, unix as Acc3, NULL as KeyOf3, major as r0, INT64_MAX as P
Params | into stdout format json
)";

struct Event {
  std::string cls;
  int64_t size = 0;
  int64_t exit_failure = 0;
  bool has_errno = false;
  int64_t ts = 0;
};

TEST(ScriptNames, KeywordsLibraryTypesMacrosAndGeneratedNamesBuildAndRun) {
  const std::string dir = ScratchDir("cxx_names");
  WriteText(dir + "/job.flow", kScript);
  const std::vector<Event> events = {{"a", 5, 1, false, 1000}, {"a", 2, 9, true, 1500},
                                     {"b", 0, 3, true, 1200},  {"b", 7, 3, true, 2500},
                                     {"a", 4, 2, true, 2100},  {"b", 1, 8, false, 2900}};
  std::string input;
  for (const Event& e : events) {
    input += "{\"class\":\"" + e.cls + "\",\"size_t\":" + std::to_string(e.size) +
             ",\"EXIT_FAILURE\":" + std::to_string(e.exit_failure) +
             ",\"errno\":" + (e.has_errno ? "4" : "null") +
             ",\"assert\":\"x\",\"ts\":" + std::to_string(e.ts) + "}\n";
  }
  WriteText(dir + "/in.jsonl", input);

  // Reference: 1 s tumbling windows per class over the records with size_t > 0.
  struct Acc {
    int64_t count = 0, sum = 0, max = 0, non_null = 0;
  };
  std::map<std::pair<int64_t, std::string>, Acc> windows;
  for (const Event& e : events) {
    if (e.size <= 0) continue;
    Acc& a = windows[{e.ts / 1000 * 1000, e.cls}];
    a.max = a.count == 0 ? e.exit_failure : std::max(a.max, e.exit_failure);
    ++a.count;
    a.sum += e.size;
    a.non_null += e.has_errno ? 1 : 0;
  }
  std::vector<std::string> want;
  for (const auto& [key, a] : windows) {
    want.push_back("{\"uint8_t\":\"" + key.second + "\",\"std\":\"" + Rfc3339(key.first) +
                   "\",\"Acc3\":" + std::to_string(a.count) +
                   ",\"KeyOf3\":" + std::to_string(a.sum) + ",\"r0\":" + std::to_string(a.max) +
                   ",\"P\":" + std::to_string(a.non_null) + "}");
  }

  Ran built = BuildJob(dir + "/job.flow", dir + "/job");
  ASSERT_EQ(built.exit_code, 0) << built.err;
  Ran ran = RunCmd({dir + "/job", "--set", "input=" + dir + "/in.jsonl"});
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_EQ(Sorted(Lines(ran.out)), Sorted(want));
}

// The prefixes script names get are free: no macro of the generated code's translation unit
// (the libraries and the runtime it includes) begins with one, so none can rewrite a script name.
TEST(ScriptNames, NoMacroInTheGeneratedCodeBeginsWithAScriptNamePrefix) {
  const std::string dir = ScratchDir("cxx_names_macros");
  WriteText(dir + "/job.flow", kScript);
  Ran emitted = RunCmd({Flowc(), "emit-cpp", dir + "/job.flow", "-o", dir + "/out"});
  ASSERT_EQ(emitted.exit_code, 0) << emitted.err;
  const codegen::Toolchain& tc = codegen::BuiltToolchain();
  std::vector<std::string> argv = {tc.cxx, "-std=c++20", "-dM", "-E"};
  for (const std::string& inc : tc.include_dirs) argv.push_back("-I" + inc);
  argv.push_back(dir + "/out/job.cpp");
  Ran macros = RunCmd(argv);
  ASSERT_EQ(macros.exit_code, 0) << macros.err;
  size_t defines = 0;
  std::istringstream lines(macros.out);
  for (std::string line; std::getline(lines, line);) {
    const std::string prefix = "#define ";
    if (line.rfind(prefix, 0) != 0) continue;
    ++defines;
    const std::string name =
        line.substr(prefix.size(), line.find_first_of(" (", prefix.size()) - prefix.size());
    EXPECT_NE(name.rfind("f_", 0), 0u) << line;
    EXPECT_NE(name.rfind("x_", 0), 0u) << line;
  }
  // The check saw the libraries' macros, not an empty translation unit.
  EXPECT_GT(defines, 1000u);
  EXPECT_NE(macros.out.find("#define EXIT_FAILURE"), std::string::npos);
}

}  // namespace
}  // namespace flow::codegen_test
