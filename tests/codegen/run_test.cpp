// `flowc run`: one command from a script to its output, with the built binary's flags, output
// and exit codes, and a cache of binaries that is used when nothing changed and only then.

#include <gtest/gtest.h>

#include <unistd.h>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "codegen_test_util.h"

namespace flow::codegen_test {
namespace {

namespace fs = std::filesystem;

// A script unique to this run (a param's default, which is in the generated C++: a comment
// would not be, and the cache rightly keys on the C++), so a binary cached by an earlier run of
// the test cannot answer the first `flowc run`.
std::string Script(const std::string& extra_where) {
  const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  return "param run: string = \"" + std::to_string(::getpid()) + "-" + std::to_string(now) +
         "\"\nparam input: string = \"none\"\nparam min: int = 0\n"
         "schema Ev { user: string, n: int }\n"
         "stream s = from file(path: input) format json as Ev\n"
         "  | where n >= min" +
         extra_where +
         "\n  | select user, n * 10 as m\n"
         "s | into stdout format csv\n";
}

Ran FlowcRun(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {Flowc(), "run"};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCmd(argv, SharedCache());
}

TEST(FlowcRun, BuildsOnceRunsWithTheJobsFlagsAndRebuildsOnChange) {
  const std::string dir = ScratchDir("flowc_run");
  WriteText(dir + "/in.jsonl",
            "{\"user\":\"a\",\"n\":1}\n{\"user\":\"b\",\"n\":5}\n{\"user\":\"c\",\"n\":3}\n");
  WriteText(dir + "/job.flow", Script(""));
  const std::string input = "input=" + dir + "/in.jsonl";

  Ran first = FlowcRun({"--verbose", dir + "/job.flow", "--set", input, "--set", "min=2"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(Lines(first.out), (std::vector<std::string>{"b,50", "c,30"}));
  EXPECT_NE(first.err.find("flowc: run: built"), std::string::npos) << first.err;

  // Nothing changed: the cached binary, the same output; flags still reach the job.
  Ran second = FlowcRun({"--verbose", dir + "/job.flow", "--set", input, "--set", "min=4"});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(Lines(second.out), (std::vector<std::string>{"b,50"}));
  EXPECT_NE(second.err.find("flowc: run: cached"), std::string::npos) << second.err;

  // The script changed: built again, and the new script is what runs.
  WriteText(dir + "/job.flow", Script(" and user != \"b\""));
  Ran third = FlowcRun({"--verbose", dir + "/job.flow", "--set", input});
  ASSERT_EQ(third.exit_code, 0) << third.err;
  EXPECT_EQ(Lines(third.out), (std::vector<std::string>{"a,10", "c,30"}));
  EXPECT_NE(third.err.find("flowc: run: built"), std::string::npos) << third.err;
}

TEST(FlowcRun, ExitCodesAreTheJobsOrFlowcs) {
  const std::string dir = ScratchDir("flowc_run_exit");
  WriteText(dir + "/job.flow", Script(""));
  // The job's own usage error (an unknown --set name): exit 2 from the job, its message.
  Ran bad_param = FlowcRun({dir + "/job.flow", "--set", "nope=1"});
  EXPECT_EQ(bad_param.exit_code, 2) << bad_param.err;
  EXPECT_NE(bad_param.err.find("nope"), std::string::npos) << bad_param.err;
  // The job fails at run time (its input does not exist): exit 1 from the job.
  Ran missing = FlowcRun({dir + "/job.flow", "--set", "input=" + dir + "/missing.jsonl"});
  EXPECT_EQ(missing.exit_code, 1) << missing.err;
  EXPECT_NE(missing.err.find("missing.jsonl"), std::string::npos) << missing.err;
  // The script has an error: flowc's exit 1 with the diagnostic; nothing runs.
  WriteText(dir + "/bad.flow",
            "schema Ev { n: int }\nstream s = from file(path: \"x\") format json as Ev | where m > "
            "1\ns | into stdout\n");
  Ran script_error = FlowcRun({dir + "/bad.flow"});
  EXPECT_EQ(script_error.exit_code, 1);
  EXPECT_NE(script_error.err.find("[unknown-field]"), std::string::npos) << script_error.err;
  // --help after the script is the job's; before it, flowc run's own.
  Ran job_help = FlowcRun({dir + "/job.flow", "--help"});
  EXPECT_EQ(job_help.exit_code, 0) << job_help.err;
  EXPECT_NE((job_help.out + job_help.err).find("--parallelism"), std::string::npos) << job_help.out;
  Ran run_help = FlowcRun({"--help", dir + "/job.flow"});
  EXPECT_EQ(run_help.exit_code, 0);
  EXPECT_NE(run_help.out.find("Usage: flowc run"), std::string::npos) << run_help.out;
  // flowc's own usage errors: exit 2.
  EXPECT_EQ(FlowcRun({}).exit_code, 2);
  EXPECT_EQ(FlowcRun({"--frobnicate", dir + "/job.flow"}).exit_code, 2);
}

// A build's private directory stays after a failed build (its error names the C++ and compiler
// log there) or a killed flowc, and goes a day later, when any run prunes the cache.
TEST(FlowcRun, LeftoverBuildDirectoriesGoAfterADay) {
  const fs::path run_cache = fs::path(SharedCache()) / "flow" / "run";
  const std::string tag = std::to_string(::getpid());
  const fs::path old_tmp = run_cache / ("leftover-old.tmp" + tag);
  const fs::path new_tmp = run_cache / ("leftover-new.tmp" + tag);
  fs::create_directories(old_tmp);
  fs::create_directories(new_tmp);
  WriteText((old_tmp / "job.cpp").string(), "// a failed build's C++\n");
  fs::last_write_time(old_tmp, fs::file_time_type::clock::now() - std::chrono::hours(25));
  fs::last_write_time(new_tmp, fs::file_time_type::clock::now() - std::chrono::hours(23));

  const std::string dir = ScratchDir("flowc_run_prune");
  WriteText(dir + "/in.jsonl", "{\"user\":\"a\",\"n\":1}\n");
  WriteText(dir + "/job.flow", Script(""));
  Ran ran = FlowcRun({dir + "/job.flow", "--set", "input=" + dir + "/in.jsonl"});
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_FALSE(fs::exists(old_tmp)) << "a build directory older than a day was kept";
  EXPECT_TRUE(fs::exists(new_tmp)) << "a build directory younger than a day was removed";
  fs::remove_all(new_tmp);
}

}  // namespace
}  // namespace flow::codegen_test
