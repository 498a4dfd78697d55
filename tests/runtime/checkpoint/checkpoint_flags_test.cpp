#include <gtest/gtest.h>

#include <string>

#include "flow/runtime/checkpoint/checkpoint_flags.h"

namespace flow::rt {
namespace {

void Set(CheckpointFlags* f, std::string_view name, std::string_view value) {
  auto r = ParseCheckpointFlag(name, value, f);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(*r) << name;
}

TEST(CheckpointFlags, ParsesEveryFlag) {
  CheckpointFlags f;
  Set(&f, "--state-dir", "/tmp/state");
  Set(&f, "--restore", "none");
  Set(&f, "--checkpoint-interval", "250ms");
  Set(&f, "--checkpoint-timeout", "5m");
  Set(&f, "--checkpoint-min-pause", "2s");
  Set(&f, "--max-concurrent-checkpoints", "2");
  Set(&f, "--tolerable-checkpoint-failures", "3");
  Set(&f, "--retained-checkpoints", "5");
  Set(&f, "--restart-attempts", "4");
  Set(&f, "--restart-delay", "100");
  Set(&f, "--restart-max-delay", "1h");
  Set(&f, "--restart-backoff-multiplier", "1.5");
  EXPECT_EQ(f.state_dir, "/tmp/state");
  EXPECT_EQ(f.restore, "none");
  EXPECT_EQ(f.interval_ms.value_or(-1), 250);
  EXPECT_EQ(f.options.timeout_ms, 300000);
  EXPECT_EQ(f.options.min_pause_ms, 2000);
  EXPECT_EQ(f.options.max_concurrent, 2u);
  EXPECT_EQ(f.options.tolerable_failures, 3u);
  EXPECT_EQ(f.retained, 5u);
  EXPECT_EQ(f.restart.max_attempts, 4u);
  EXPECT_EQ(f.restart.initial_delay_ms, 100);
  EXPECT_EQ(f.restart.max_delay_ms, 3600000);
  EXPECT_EQ(f.restart.multiplier, 1.5);
  ASSERT_TRUE(ResolveCheckpointFlags(&f, false).ok());
  EXPECT_EQ(f.options.interval_ms, 250);
}

TEST(CheckpointFlags, OtherFlagsAreNotOurs) {
  CheckpointFlags f;
  auto r = ParseCheckpointFlag("--parallelism", "4", &f);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(*r);
}

TEST(CheckpointFlags, BadValuesNameTheFlag) {
  struct Case {
    const char* name;
    const char* value;
  };
  for (const Case& c :
       {Case{"--checkpoint-interval", "10x"}, Case{"--checkpoint-timeout", "-5s"},
        Case{"--max-concurrent-checkpoints", "two"}, Case{"--retained-checkpoints", "99999999999"},
        Case{"--restart-backoff-multiplier", "fast"}, Case{"--state-dir", ""},
        Case{"--restore", ""}, Case{"--checkpoint-interval", "ms"}}) {
    CheckpointFlags f;
    auto r = ParseCheckpointFlag(c.name, c.value, &f);
    ASSERT_FALSE(r.ok()) << c.name << " " << c.value;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message().rfind(c.name, 0), 0u) << r.status().message();
  }
}

TEST(CheckpointFlags, DefaultsDependOnExactlyOnceSink) {
  CheckpointFlags off;
  ASSERT_TRUE(ResolveCheckpointFlags(&off, false).ok());
  EXPECT_EQ(off.options.interval_ms, 0);

  CheckpointFlags eos;
  Status s = ResolveCheckpointFlags(&eos, true);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("--state-dir is required: the job has an exactly-once sink"),
            std::string::npos);
  eos.state_dir = "/tmp/x";
  ASSERT_TRUE(ResolveCheckpointFlags(&eos, true).ok());
  EXPECT_EQ(eos.options.interval_ms, 1000);

  CheckpointFlags explicit_off;
  Set(&explicit_off, "--checkpoint-interval", "0");
  ASSERT_TRUE(ResolveCheckpointFlags(&explicit_off, true).ok());
  EXPECT_EQ(explicit_off.options.interval_ms, 0);
}

TEST(CheckpointFlags, InvalidCombinations) {
  CheckpointFlags f;
  Set(&f, "--checkpoint-interval", "1s");
  Status s = ResolveCheckpointFlags(&f, false);
  EXPECT_NE(s.message().find("--state-dir is required when --checkpoint-interval"),
            std::string::npos);
  f.state_dir = "/tmp/x";
  Set(&f, "--checkpoint-interval", "5ms");
  s = ResolveCheckpointFlags(&f, false);
  EXPECT_NE(s.message().find("at least 10 ms"), std::string::npos) << s.message();
  Set(&f, "--checkpoint-interval", "1s");
  Set(&f, "--max-concurrent-checkpoints", "0");
  EXPECT_FALSE(ResolveCheckpointFlags(&f, false).ok());
  Set(&f, "--max-concurrent-checkpoints", "1");
  Set(&f, "--restart-backoff-multiplier", "0.5");
  s = ResolveCheckpointFlags(&f, false);
  EXPECT_NE(s.message().find("restart flags"), std::string::npos);
  Set(&f, "--restart-backoff-multiplier", "2");
  Set(&f, "--retained-checkpoints", "0");
  EXPECT_NE(ResolveCheckpointFlags(&f, false).message().find("--retained-checkpoints"),
            std::string::npos);
}

TEST(CheckpointFlags, ALocationWithASchemeIsRefusedBeforeAnythingIsCreated) {
  CheckpointFlags f;
  Set(&f, "--state-dir", "s3://bucket/job");
  Set(&f, "--checkpoint-interval", "1s");
  Status s = ResolveCheckpointFlags(&f, false);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("--state-dir: checkpoint location 's3://bucket/job'"),
            std::string::npos)
      << s.message();
  CheckpointFlags r;
  Set(&r, "--restore", "gs://bucket/job/chk-3");
  EXPECT_NE(ResolveCheckpointFlags(&r, false).message().find("--restore: "), std::string::npos);
  CheckpointFlags ok;
  Set(&ok, "--state-dir", "state/a://b");  // a directory whose name holds "://"
  Set(&ok, "--checkpoint-interval", "1s");
  EXPECT_TRUE(ResolveCheckpointFlags(&ok, false).ok());
}

TEST(CheckpointFlags, UsageListsEveryFlag) {
  std::string u = CheckpointFlagsUsage();
  for (const char* flag :
       {"--state-dir", "--restore", "--checkpoint-interval", "--checkpoint-timeout",
        "--checkpoint-min-pause", "--max-concurrent-checkpoints", "--tolerable-checkpoint-failures",
        "--retained-checkpoints", "--restart-attempts", "--restart-delay", "--restart-max-delay",
        "--restart-backoff-multiplier"}) {
    EXPECT_NE(u.find(flag), std::string::npos) << flag;
    CheckpointFlags f;
    auto r = ParseCheckpointFlag(flag, "1", &f);
    EXPECT_TRUE(r.ok() && *r) << flag;  // every listed flag is parsed
  }
}

}  // namespace
}  // namespace flow::rt
