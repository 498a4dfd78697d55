// The state directory's lock and records: one process at a time, the job it belongs to, the
// newest committed checkpoint.

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "checkpoint_test_util.h"
#include "flow/runtime/checkpoint/state_dir.h"

namespace flow::rt {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

TEST(StateDirectory, SecondProcessIsRefusedWhileTheFirstHoldsIt) {
  TempDir dir;
  const std::string path = dir.path() + "/state";
  int ready[2], done[2];
  ASSERT_EQ(::pipe(ready), 0);
  ASSERT_EQ(::pipe(done), 0);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    auto held = StateDirectory::Open(path);
    char c = held.ok() ? 'y' : 'n';
    if (::write(ready[1], &c, 1) != 1) ::_exit(3);
    if (::read(done[0], &c, 1) != 1) ::_exit(4);
    ::_exit(held.ok() ? 0 : 2);
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ASSERT_EQ(c, 'y');
  auto second = StateDirectory::Open(path);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kFenced);
  EXPECT_NE(second.status().message().find("in use by another running instance"), std::string::npos)
      << second.status().message();
  EXPECT_NE(second.status().message().find("pid " + std::to_string(pid)), std::string::npos)
      << second.status().message();
  ASSERT_EQ(::write(done[1], "x", 1), 1);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  // The holder is gone (even a SIGKILL releases a flock): the directory can be opened again.
  auto third = StateDirectory::Open(path);
  EXPECT_TRUE(third.ok()) << third.status().ToString();
}

TEST(StateDirectory, BelongsToTheFirstJobThatClaimsIt) {
  TempDir dir;
  const std::string path = dir.path() + "/state";
  {
    auto d = StateDirectory::Open(path);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    EXPECT_EQ((*d)->recorded_job_id(), "");
    ASSERT_TRUE((*d)->Claim("clicks").ok());
    ASSERT_TRUE((*d)->Claim("clicks").ok());
  }
  auto d = StateDirectory::Open(path);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ((*d)->recorded_job_id(), "clicks");
  Status s = (*d)->Claim("clicks-v2");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("belongs to job `clicks`"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("--job-id clicks"), std::string::npos) << s.message();
  EXPECT_TRUE((*d)->Claim("").ok()) << "a job without an id claims nothing";
  EXPECT_EQ((*d)->recorded_job_id(), "clicks");
}

// A directory written before job ids were recorded: complete checkpoints, no `_job`.
TEST(StateDirectory, ClaimingADirectoryWithUnrecordedCheckpointsSaysSo) {
  TempDir dir;
  const std::string path = dir.path() + "/state";
  fs::create_directories(path + "/chk-4");
  fs::create_directories(path + "/chk-5");  // incomplete: no metadata
  {
    auto d = StateDirectory::Open(path);
    ASSERT_TRUE(d.ok());
    ASSERT_TRUE((*d)->Claim("job").ok());
    EXPECT_FALSE((*d)->claimed_unrecorded_checkpoints())
        << "chk-5 has no metadata, chk-4 neither yet";
  }
  fs::remove(fs::path(path) / "_job");
  std::ofstream(fs::path(path) / "chk-4" / "_metadata") << "x";
  {
    auto d = StateDirectory::Open(path);
    ASSERT_TRUE(d.ok());
    ASSERT_TRUE((*d)->Claim("job").ok());
    EXPECT_TRUE((*d)->claimed_unrecorded_checkpoints());
    EXPECT_FALSE(fs::exists(fs::path(path) / "_job")) << "recorded only once confirmed";
  }
  {
    auto d = StateDirectory::Open(path);
    ASSERT_TRUE(d.ok());
    ASSERT_TRUE((*d)->Claim("job").ok());
    EXPECT_TRUE((*d)->claimed_unrecorded_checkpoints());
    ASSERT_TRUE((*d)->ConfirmClaim().ok());
  }
  auto d = StateDirectory::Open(path);
  ASSERT_TRUE(d.ok());
  ASSERT_TRUE((*d)->Claim("job").ok());
  EXPECT_FALSE((*d)->claimed_unrecorded_checkpoints()) << "recorded now";
}

TEST(StateDirectory, CommittedIsRecordedDurablyAndOnlyGrows) {
  TempDir dir;
  const std::string path = dir.path() + "/state";
  {
    auto d = StateDirectory::Open(path);
    ASSERT_TRUE(d.ok());
    EXPECT_EQ((*d)->committed(), 0);
    ASSERT_TRUE((*d)->RecordCommitted(7).ok());
    ASSERT_TRUE((*d)->RecordCommitted(5).ok());
    EXPECT_EQ((*d)->committed(), 7);
  }
  auto d = StateDirectory::Open(path);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ((*d)->committed(), 7);
  d->reset();
  std::ofstream(fs::path(path) / "_committed") << "seven\n";
  auto bad = StateDirectory::Open(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kCorruption);
  EXPECT_NE(bad.status().message().find("_committed"), std::string::npos) << bad.status().message();
}

}  // namespace
}  // namespace flow::rt
