// Command-line parsing of job binaries, typed parameters, usage errors (exit 2) and log lines.

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "flow/runtime/engine/main.h"
#include "flow/runtime/engine/options.h"
#include "flow/runtime/log/log.h"

namespace flow::rt {
namespace {

const std::vector<ParamSpec> kSpecs = {
    {"threshold", ParamType::kInt, "10", "minimum count"},
    {"ratio", ParamType::kDouble, "0.5", ""},
    {"verbose", ParamType::kBool, "false", ""},
    {"topic", ParamType::kString, "clicks", ""},
    {"window", ParamType::kDuration, "1m", ""},
};

Result<ParsedArgs> Parse(std::vector<const char*> args) {
  args.insert(args.begin(), "job");
  return ParseJobArgs(static_cast<int>(args.size()), args.data(), kSpecs);
}

TEST(OptionsTest, ParsesFlagsAndParameters) {
  auto r = Parse({"--parallelism", "3", "--set", "threshold=42", "--set=ratio=0.25",
                  "--metrics-port", "0", "--progress-interval=0", "--log-level", "warn", "--set",
                  "window=90s", "--log-format", "json"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const JobOptions& o = r->options;
  EXPECT_EQ(o.parallelism, 3u);
  EXPECT_EQ(o.metrics_port, 0);
  EXPECT_EQ(o.progress_interval_s, 0);
  EXPECT_EQ(o.log_level, LogLevel::kWarn);
  EXPECT_EQ(o.log_format, LogFormat::kJson);
  EXPECT_EQ(*o.params.GetInt("threshold"), 42);
  EXPECT_EQ(*o.params.GetDouble("ratio"), 0.25);
  EXPECT_EQ(*o.params.GetBool("verbose"), false);  // default
  EXPECT_EQ(*o.params.GetString("topic"), "clicks");
  EXPECT_EQ(*o.params.GetDuration("window"), 90000);
  EXPECT_FALSE(r->help);
}

TEST(OptionsTest, DefaultsForBuiltBinaries) {
  auto r = Parse({});
  ASSERT_TRUE(r.ok());
  EXPECT_GE(r->options.parallelism, 1u);
  EXPECT_EQ(r->options.metrics_port, -1);
  EXPECT_EQ(r->options.progress_interval_s, 5);
  EXPECT_EQ(*r->options.params.GetDuration("window"), 60000);
}

TEST(OptionsTest, ErrorsNameTheFlagOrParameter) {
  struct Case {
    std::vector<const char*> args;
    std::string want;
  };
  std::vector<Case> cases = {
      {{"--bogus"}, "unknown flag '--bogus'"},
      {{"--parallelism", "zero"}, "--parallelism zero"},
      {{"--parallelism", "0"}, "--parallelism 0"},
      {{"--parallelism"}, "--parallelism: missing value"},
      {{"--set", "nope=1"}, "--set nope: unknown parameter (known: threshold, ratio"},
      {{"--set", "threshold=abc"}, "--set threshold=abc: expected an integer"},
      {{"--set", "verbose=maybe"}, "expected true or false"},
      {{"--set", "window=5 parsecs"}, "expected a duration"},
      {{"--set", "novalue"}, "expected name=value"},
      {{"--metrics-port", "70000"}, "--metrics-port 70000"},
      {{"--log-level", "loud"}, "--log-level loud"},
      {{"--log-format", "xml"}, "--log-format xml: expected text or json"},
  };
  for (const Case& c : cases) {
    auto r = Parse(c.args);
    ASSERT_FALSE(r.ok()) << c.want;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(c.want), std::string::npos) << r.status().message();
  }
}

TEST(OptionsTest, InstanceNeedsAStateDirAndGetsShortCheckpointTimeouts) {
  auto r = Parse({"--instance", "node-1", "--state-dir", "/tmp/x"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->options.instance, "node-1");
  // Checkpoints are on (offsets reach the group only at checkpoints), and a checkpoint may take
  // 30 s, not 10 min, so the transaction timeout derived from it stays short.
  EXPECT_EQ(r->options.checkpoint.options.interval_ms, 1000);
  EXPECT_EQ(r->options.checkpoint.options.timeout_ms, kInstanceCheckpointTimeoutMs);
  auto given = Parse({"--instance", "n", "--state-dir", "/tmp/x", "--checkpoint-timeout", "5m"});
  ASSERT_TRUE(given.ok()) << given.status().ToString();
  EXPECT_EQ(given->options.checkpoint.options.timeout_ms, 300000);
  auto single = Parse({"--state-dir", "/tmp/x"});
  ASSERT_TRUE(single.ok());
  EXPECT_EQ(single->options.checkpoint.options.timeout_ms, 600000);
  struct Case {
    std::vector<const char*> args;
    std::string want;
  };
  std::vector<Case> cases = {
      {{"--instance", "a"},
       "--instance: instances commit their progress at checkpoints; give --state-dir"},
      {{"--instance", "a b", "--state-dir", "/tmp/x"},
       "--instance a b: expected 1 to 64 characters"},
      {{"--instance", "a", "--state-dir", "/tmp/x", "--checkpoint-interval", "0"},
       "--checkpoint-interval: an instance (--instance) hands its progress"},
  };
  for (const Case& c : cases) {
    auto bad = Parse(c.args);
    ASSERT_FALSE(bad.ok()) << c.want;
    EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(bad.status().message().find(c.want), std::string::npos) << bad.status().message();
  }
}

TEST(OptionsTest, ShuffleFlagsNameTheClusterAndPartitionCount) {
  auto defaults = Parse({});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->options.shuffle_brokers, "");
  EXPECT_EQ(defaults->options.shuffle_partitions, 12);
  auto r = Parse({"--shuffle-brokers", "k1:9092,k2:9092", "--shuffle-partitions", "6"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->options.shuffle_brokers, "k1:9092,k2:9092");
  EXPECT_EQ(r->options.shuffle_partitions, 6);
  for (const char* bad : {"0", "-1", "x", "70000"}) {
    auto b = Parse({"--shuffle-partitions", bad});
    ASSERT_FALSE(b.ok()) << bad;
    EXPECT_NE(b.status().message().find(std::string("--shuffle-partitions ") + bad),
              std::string::npos)
        << b.status().message();
  }
  auto empty = Parse({"--shuffle-brokers", ""});
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("--shuffle-brokers"), std::string::npos);
}

// --state-root puts the instance's state dir under a root every instance reads.
TEST(OptionsTest, StateRootIsTheInstancesStateDirUnderASharedRoot) {
  auto r = Parse({"--instance", "b", "--state-root", "/mnt/shared/clicks"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->options.state_root, "/mnt/shared/clicks");
  EXPECT_EQ(r->options.checkpoint.state_dir, "/mnt/shared/clicks/b");
  auto no_instance = Parse({"--state-root", "/mnt/shared/clicks"});
  ASSERT_FALSE(no_instance.ok());
  EXPECT_NE(no_instance.status().message().find("give --instance"), std::string::npos)
      << no_instance.status().message();
  auto both = Parse({"--instance", "b", "--state-root", "/r", "--state-dir", "/s"});
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.status().message().find("give one"), std::string::npos) << both.status().message();
  auto few = Parse({"--instance", "b", "--state-root", "/r", "--retained-checkpoints", "2"});
  ASSERT_FALSE(few.ok());
  EXPECT_NE(few.status().message().find("at least 3"), std::string::npos) << few.status().message();
  auto empty = Parse({"--instance", "b", "--state-root", ""});
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("--state-root"), std::string::npos);
}

// --forget-instance runs no job: an instance's own command line serves (its --instance and
// --state-root are not checked as a run's would be); --dry-run goes with it only.
TEST(OptionsTest, ForgetInstanceTakesAnInstancesFlagsAndDryRunNeedsIt) {
  auto r = Parse({"--instance", "a", "--state-root", "/r", "--shuffle-brokers", "k:9092",
                  "--forget-instance", "c", "--dry-run", "--retained-checkpoints", "1"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->forget_instance, "c");
  EXPECT_TRUE(r->dry_run);
  EXPECT_EQ(r->options.state_root, "/r");
  EXPECT_EQ(r->options.shuffle_brokers, "k:9092");
  auto alone = Parse({"--forget-instance", "c", "--state-root", "/r"});
  ASSERT_TRUE(alone.ok()) << alone.status().ToString();
  EXPECT_FALSE(alone->dry_run);
  auto dry = Parse({"--dry-run"});
  ASSERT_FALSE(dry.ok());
  EXPECT_NE(dry.status().message().find("only with --forget-instance"), std::string::npos)
      << dry.status().message();
  auto bad = Parse({"--forget-instance", "a b"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--forget-instance a b: expected"), std::string::npos)
      << bad.status().message();
}

TEST(OptionsTest, KafkaPropertiesFileAndSavepointOnStop) {
  const std::string path = ::testing::TempDir() + "flow-options-kafka.properties";
  {
    std::ofstream f(path);
    f << "# cluster\nsecurity.protocol=SASL_SSL\nsasl.password=${FLOW_OPTIONS_TEST_PW}\n";
  }
  ::setenv("FLOW_OPTIONS_TEST_PW", "pw", 1);
  auto ok =
      Parse({"--kafka-properties", path.c_str(), "--savepoint-on-stop", "--state-dir", "/tmp/x"});
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->options.kafka_properties.at("security.protocol"), "SASL_SSL");
  EXPECT_EQ(ok->options.kafka_properties.at("sasl.password"), "pw");
  EXPECT_TRUE(ok->options.savepoint_on_stop);
  ::unsetenv("FLOW_OPTIONS_TEST_PW");
  auto unset = Parse({"--kafka-properties", path.c_str()});
  ASSERT_FALSE(unset.ok());
  EXPECT_NE(unset.status().message().find("FLOW_OPTIONS_TEST_PW"), std::string::npos)
      << unset.status().message();
  EXPECT_NE(unset.status().message().find(path), std::string::npos) << unset.status().message();
  auto missing = Parse({"--kafka-properties", "/nonexistent/flow.properties"});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/flow.properties"), std::string::npos);
  auto no_dir = Parse({"--savepoint-on-stop"});
  ASSERT_FALSE(no_dir.ok());
  EXPECT_NE(no_dir.status().message().find("--state-dir"), std::string::npos)
      << no_dir.status().message();
}

TEST(OptionsTest, TypedGettersRejectWrongNameOrType) {
  auto r = Parse({});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->options.params.GetInt("missing").status().code(), StatusCode::kInvalidArgument);
  auto wrong = r->options.params.GetInt("ratio");
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("'ratio' is double, not int"), std::string::npos);
}

TEST(RunMainTest, UsageErrorExitsWith2AndMessage) {
  bool built = false;
  const char* argv[] = {"myjob", "--no-such-flag"};
  ::testing::internal::CaptureStderr();
  int rc = RunMain(2, argv, kSpecs, [&](Job&) {
    built = true;
    return Status::Ok();
  });
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, 2);
  EXPECT_FALSE(built);
  EXPECT_NE(err.find("myjob: error: unknown flag '--no-such-flag'"), std::string::npos) << err;

  const char* bad_param[] = {"myjob", "--set", "threshold=x"};
  ::testing::internal::CaptureStderr();
  rc = RunMain(3, bad_param, kSpecs, [&](Job&) { return Status::Ok(); });
  err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, 2);
  EXPECT_NE(err.find("threshold=x"), std::string::npos) << err;
}

TEST(RunMainTest, HelpPrintsUsageAndExits0) {
  const char* argv[] = {"myjob", "--help"};
  ::testing::internal::CaptureStdout();
  int rc = RunMain(2, argv, kSpecs, [](Job&) { return Status::Internal("must not build"); });
  std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(rc, 0);
  EXPECT_NE(out.find("usage: myjob"), std::string::npos);
  EXPECT_NE(out.find("--parallelism N"), std::string::npos);
  EXPECT_NE(out.find("threshold (int, default 10)"), std::string::npos) << out;
}

TEST(RunMainTest, BuildErrorFromBadParameterValueExits2) {
  const char* argv[] = {"myjob", "--set", "threshold=-5", "--log-level", "off"};
  int rc = RunMain(5, argv, kSpecs, [](Job& job) -> Status {
    auto t = job.params().GetInt("threshold");
    if (!t.ok()) return t.status();
    if (*t < 0) return Status::InvalidArgument("threshold must be >= 0");
    return Status::Ok();
  });
  SetLogLevel(LogLevel::kInfo);
  EXPECT_EQ(rc, 2);
}

TEST(OptionsTest, ForwardsCheckpointFlags) {
  auto r = Parse({"--state-dir", "/tmp/flow-state", "--checkpoint-interval=250ms", "--restore",
                  "none", "--parallelism", "2", "--retained-checkpoints", "5"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const CheckpointFlags& c = r->options.checkpoint;
  EXPECT_EQ(c.state_dir, "/tmp/flow-state");
  EXPECT_EQ(c.options.interval_ms, 250);
  EXPECT_EQ(c.restore, "none");
  EXPECT_EQ(c.retained, 5u);
  EXPECT_EQ(r->options.parallelism, 2u);  // flags after checkpoint flags still parsed
}

TEST(OptionsTest, CheckpointFlagErrorsAreUsageErrors) {
  auto bad = Parse({"--checkpoint-interval", "soon", "--state-dir", "/tmp/x"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("--checkpoint-interval"), std::string::npos);
  // Checkpoints on without a place to put them.
  auto no_dir = Parse({"--checkpoint-interval", "1s"});
  ASSERT_FALSE(no_dir.ok());
  EXPECT_EQ(no_dir.status().code(), StatusCode::kInvalidArgument);
  auto unknown = Parse({"--checkpoint-everything", "1"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown flag"), std::string::npos);
  auto defaults = Parse({});
  ASSERT_TRUE(defaults.ok());
  EXPECT_TRUE(defaults->options.checkpoint.state_dir.empty());
  EXPECT_EQ(defaults->options.checkpoint.options.interval_ms, 0);
}

TEST(OptionsTest, UsageListsCheckpointFlags) {
  std::string usage = JobUsage("job", kSpecs);
  EXPECT_NE(usage.find("--state-dir"), std::string::npos);
  EXPECT_NE(usage.find("--checkpoint-interval"), std::string::npos);
  EXPECT_NE(usage.find("--restore"), std::string::npos);
}

TEST(LogTest, LineFormat) {
  std::string line =
      FormatLogLine(LogLevel::kWarn, "engine", "task failed",
                    {{"task", "window"}, {"subtask", "2"}, {"error", "bad \"x\" here"}});
  // "<ts> WARN engine task failed task=window subtask=2 error=\"bad \\\"x\\\" here\""
  ASSERT_GT(line.size(), 25u);
  EXPECT_EQ(line[4], '-');
  EXPECT_EQ(line[23], 'Z');
  EXPECT_EQ(line.substr(25),
            "WARN engine task failed task=window subtask=2 error=\"bad \\\"x\\\" here\"");
}

// One JSON object per line, for log collectors; written out by hand from RFC 8259's escapes.
TEST(LogTest, JsonLineFormat) {
  std::string line =
      FormatLogLine(LogLevel::kError, "engine", "task \"failed\"",
                    {{"task", "win\\dow"}, {"error", "line one\nline two\ttab"}}, LogFormat::kJson);
  ASSERT_GT(line.size(), 33u);
  EXPECT_EQ(line.substr(0, 7), "{\"ts\":\"");
  EXPECT_EQ(line[30], 'Z') << line;
  EXPECT_EQ(line.substr(31),
            "\",\"level\":\"ERROR\",\"component\":\"engine\",\"message\":\"task \\\"failed\\\"\","
            "\"task\":\"win\\\\dow\",\"error\":\"line one\\nline two\\ttab\"}");
}

}  // namespace
}  // namespace flow::rt
