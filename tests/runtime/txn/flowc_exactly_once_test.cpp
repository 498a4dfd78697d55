// `into file(...) exactly_once` through flowc build: the generated job commits its output at
// checkpoints; killed at its second pre-commit (FLOW_FAULT) and run again, every input record is
// visible exactly once and no hidden (uncommitted) file is left.

#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "codegen/codegen_test_util.h"

namespace {

namespace fs = std::filesystem;
using flow::codegen_test::BuildJob;
using flow::codegen_test::Ran;
using flow::codegen_test::ReadText;
using flow::codegen_test::RunCmd;
using flow::codegen_test::ScratchDir;
using flow::codegen_test::WriteText;

// Writes `n` records {"x": i} to dir/a.jsonl and dir/<name>.flow, a script copying them into an
// exactly_once file sink in dir/out.
void WriteCopyJob(const std::string& dir, const std::string& name, int n) {
  std::string input;
  for (int i = 0; i < n; ++i) input += "{\"x\": " + std::to_string(i) + "}\n";
  WriteText(dir + "/a.jsonl", input);
  WriteText(dir + "/" + name + ".flow", "schema A { x: int }\nfrom file(path: \"" + dir +
                                            "/a.jsonl\") format json as A\n"
                                            "  | into file(path: \"" +
                                            dir + "/out\") format json exactly_once\n");
}

// How often each x is in the committed files of dir/out; *hidden counts uncommitted files.
std::map<int, int> Committed(const std::string& dir, int* hidden) {
  std::map<int, int> seen;
  *hidden = 0;
  for (const auto& e : fs::directory_iterator(dir + "/out")) {
    if (e.path().filename().string()[0] == '.') {
      ++*hidden;
      continue;
    }
    std::istringstream in(ReadText(e.path().string()));
    std::string line;
    while (std::getline(in, line)) {
      auto colon = line.find(':');
      EXPECT_NE(colon, std::string::npos) << line;
      if (colon != std::string::npos) ++seen[std::stoi(line.substr(colon + 1))];
    }
  }
  return seen;
}

TEST(FlowcExactlyOnce, FileSinkKilledAtPreCommitThenRerunIsExact) {
  std::string dir = ScratchDir("flowc-exactly-once");
  const int n = 3000;
  WriteCopyJob(dir, "job", n);
  Ran built = BuildJob(dir + "/job.flow", dir + "/job");
  ASSERT_EQ(built.exit_code, 0) << built.err;
  std::vector<std::string> run = {dir + "/job",  "--parallelism",       "2",
                                  "--state-dir", dir + "/state",        "--checkpoint-interval",
                                  "20ms",        "--progress-interval", "0"};
  // Two sink subtasks pre-commit at least at the final checkpoint: the second pre-commit is hit.
  ::setenv("FLOW_FAULT", "after-precommit:2", 1);
  Ran killed = RunCmd(run);
  ::unsetenv("FLOW_FAULT");
  EXPECT_NE(killed.exit_code, 0) << killed.err;
  EXPECT_NE(killed.err.find("after-precommit"), std::string::npos) << killed.err;
  Ran again = RunCmd(run);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  int hidden = 0;
  std::map<int, int> seen = Committed(dir, &hidden);
  EXPECT_EQ(hidden, 0);
  ASSERT_EQ(seen.size(), static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) ASSERT_EQ(seen[i], 1) << "record " << i;
}

// The job id is compiled in from the script's file name: a renamed (or redeployed) binary is the
// same job and goes on with its state; another --job-id is refused by the state dir, which is
// left as it was; a second process on a running job's state dir exits 3 at once.
TEST(FlowcExactlyOnce, RenamedBinaryIsTheSameJobAndAnotherJobIdIsRefused) {
  std::string dir = ScratchDir("flowc-job-identity");
  const int n = 2000;
  WriteCopyJob(dir, "clicks", n);
  Ran built = BuildJob(dir + "/clicks.flow", dir + "/job-v1");
  ASSERT_EQ(built.exit_code, 0) << built.err;
  auto run = [&](const std::string& binary, std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {binary,        "--parallelism",       "2",
                                     "--state-dir", dir + "/state",        "--checkpoint-interval",
                                     "20ms",        "--progress-interval", "0"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return RunCmd(argv);
  };
  Ran first = run(dir + "/job-v1");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(ReadText(dir + "/state/_job"), "clicks\n");
  fs::rename(dir + "/job-v1", dir + "/job-v2");
  Ran renamed = run(dir + "/job-v2");
  EXPECT_EQ(renamed.exit_code, 0) << renamed.err;
  EXPECT_NE(renamed.err.find("restoring"), std::string::npos)
      << "the renamed binary did not go on: " << renamed.err;
  Ran other = run(dir + "/job-v2", {"--job-id", "clicks-v2"});
  EXPECT_EQ(other.exit_code, 1) << other.err;
  EXPECT_NE(other.err.find("belongs to job `clicks`"), std::string::npos) << other.err;
  EXPECT_TRUE(fs::exists(dir + "/state/_committed"));
  // Every record exactly once after the three runs.
  int hidden = 0;
  std::map<int, int> seen = Committed(dir, &hidden);
  ASSERT_EQ(seen.size(), static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) ASSERT_EQ(seen[i], 1) << "record " << i;
}

}  // namespace
