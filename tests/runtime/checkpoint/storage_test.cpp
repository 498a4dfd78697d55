// Checkpoint storage: on-disk layout, metadata encoding, atomic finalisation, retention with
// shared files and savepoints.

#include <cstring>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "checkpoint_test_util.h"
#include "flow/runtime/checkpoint/checkpoint_metadata.h"
#include "flow/runtime/checkpoint/checkpoint_storage.h"
#include "flow/runtime/checkpoint/recovery.h"
#include "flow/runtime/common/serde.h"

namespace flow::rt {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

CheckpointMetadata SampleMetadata() {
  CheckpointMetadata m;
  m.checkpoint_id = 12;
  m.savepoint_name = "";
  m.created_ms = 1700000000123;
  m.job_fingerprint = 0x1234567890ABCDEFull;
  m.max_parallelism = 128;
  m.operators = {{"src", 2}, {"agg", 4}};
  OperatorSnapshot a;
  a.operator_name = "agg";
  a.subtask = 3;
  a.key_group_first = 96;
  a.key_group_end = 128;
  a.files = {{"agg-3.snap", 77, 0xDEADBEEF, false}, {"sst-000012", 4096, 0x01020304, true}};
  OperatorSnapshot s;
  s.operator_name = "src";
  s.subtask = 1;
  s.source_position = std::string("\x00\x01pos", 5);
  s.source_watermark = std::string("\x01\x00wm", 4);
  OperatorSnapshot done;
  done.operator_name = "src";
  done.subtask = 0;
  done.finished = true;
  m.snapshots = {a, s, done};
  return m;
}

TEST(CheckpointMetadata, RoundTrip) {
  CheckpointMetadata m = SampleMetadata();
  auto d = DecodeCheckpointMetadata(EncodeCheckpointMetadata(m));
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->checkpoint_id, 12);
  EXPECT_EQ(d->created_ms, 1700000000123);
  EXPECT_EQ(d->job_fingerprint, 0x1234567890ABCDEFull);
  EXPECT_EQ(d->operators, m.operators);
  ASSERT_EQ(d->snapshots.size(), 3u);
  EXPECT_EQ(d->snapshots[0].key_group_first, 96u);
  EXPECT_EQ(d->snapshots[0].key_group_end, 128u);
  ASSERT_EQ(d->snapshots[0].files.size(), 2u);
  EXPECT_EQ(d->snapshots[0].files[1].name, "sst-000012");
  EXPECT_TRUE(d->snapshots[0].files[1].shared);
  EXPECT_EQ(d->snapshots[0].files[0].crc32c, 0xDEADBEEFu);
  EXPECT_EQ(d->snapshots[1].source_position, std::string("\x00\x01pos", 5));
  EXPECT_TRUE(d->snapshots[2].finished);
  EXPECT_FALSE(d->snapshots[1].finished);
  EXPECT_EQ(d->snapshots[1].source_watermark, std::string("\x01\x00wm", 4));
}

// Checkpoints written before source watermarks were recorded (version 1) still restore.
TEST(CheckpointMetadata, Version1FilesDecodeWithoutSourceWatermarks) {
  CheckpointMetadata m = SampleMetadata();
  for (OperatorSnapshot& s : m.snapshots) s.source_watermark.clear();
  // Version 1 is version 2 without the (here empty) watermark strings: drop each one's 8-byte
  // length, which follows the source position, and patch the header and checksum.
  BinaryWriter w;
  w.PutU32(0x4D434C46);
  w.PutU32(1);
  w.PutU64(0);
  w.PutI64(m.checkpoint_id);
  w.PutString(m.savepoint_name);
  w.PutI64(m.created_ms);
  w.PutU64(m.job_fingerprint);
  w.PutU32(m.max_parallelism);
  w.PutU32(static_cast<uint32_t>(m.operators.size()));
  for (const OperatorParallelism& op : m.operators) {
    w.PutString(op.name);
    w.PutU32(op.parallelism);
  }
  w.PutU32(static_cast<uint32_t>(m.snapshots.size()));
  for (const OperatorSnapshot& s : m.snapshots) {
    w.PutString(s.operator_name);
    w.PutU32(s.subtask);
    w.PutU32(s.key_group_first);
    w.PutU32(s.key_group_end);
    w.PutBool(s.finished);
    w.PutString(s.source_position);
    w.PutU32(static_cast<uint32_t>(s.files.size()));
    for (const SnapshotFile& f : s.files) {
      w.PutString(f.name);
      w.PutU64(f.size);
      w.PutU32(f.crc32c);
      w.PutBool(f.shared);
    }
  }
  std::string v1 = w.Release();
  uint64_t total = v1.size() + 4;
  std::memcpy(v1.data() + 8, &total, sizeof total);
  uint32_t crc = Crc32c(v1);
  v1.append(reinterpret_cast<const char*>(&crc), sizeof crc);
  auto d = DecodeCheckpointMetadata(v1);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_EQ(d->snapshots.size(), 3u);
  EXPECT_EQ(d->snapshots[1].source_position, std::string("\x00\x01pos", 5));
  EXPECT_TRUE(d->snapshots[1].source_watermark.empty());
  EXPECT_EQ(EncodeCheckpointMetadata(*d), EncodeCheckpointMetadata(m))
      << "re-encoded as the current version";
}

TEST(CheckpointMetadata, EveryTruncationAndEveryFlippedByteIsCorruption) {
  std::string bytes = EncodeCheckpointMetadata(SampleMetadata());
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto d = DecodeCheckpointMetadata(std::string_view(bytes).substr(0, n));
    ASSERT_FALSE(d.ok()) << "truncated to " << n;
    EXPECT_EQ(d.status().code(), StatusCode::kCorruption);
  }
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string b = bytes;
    b[i] = static_cast<char>(b[i] ^ 0x5A);
    auto d = DecodeCheckpointMetadata(b);
    ASSERT_FALSE(d.ok()) << "flipped byte " << i;
    EXPECT_EQ(d.status().code(), StatusCode::kCorruption);
  }
  auto d = DecodeCheckpointMetadata(bytes.substr(0, 9));
  EXPECT_NE(d.status().message().find("truncated: 9 bytes"), std::string::npos)
      << d.status().message();
}

TEST(CheckpointMetadata, HugeCountsAreRejectedBeforeAllocating) {
  // A well-formed header and checksum around an absurd operator count.
  BinaryWriter w;
  w.PutU32(0x4D434C46);
  w.PutU32(1);
  // magic, version, size, id, empty name, created, fingerprint, max_p, count, checksum
  w.PutU64(4 + 4 + 8 + 8 + 8 + 8 + 8 + 4 + 4 + 4);
  w.PutI64(1);
  w.PutString("");
  w.PutI64(0);
  w.PutU64(0);
  w.PutU32(128);
  w.PutU32(0xFFFFFFFF);
  std::string b = w.Release();
  uint32_t crc = Crc32c(b);
  b.append(reinterpret_cast<const char*>(&crc), 4);
  auto d = DecodeCheckpointMetadata(b);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("operator count 4294967295 exceeds"), std::string::npos)
      << d.status().message();
}

TEST(CheckpointStorage, LayoutAndMetadataContent) {
  TempDir dir;
  auto storage = test::OpenStorage(dir.path());
  ASSERT_TRUE(storage);
  test::WriteCheckpoint(storage.get(), 1, "state-a", {"sst-1"});
  EXPECT_TRUE(fs::is_regular_file(dir / "chk-1/_metadata"));
  EXPECT_FALSE(fs::exists(dir / "chk-1/_metadata.tmp"));
  EXPECT_EQ(test::ReadAll(dir / "chk-1/agg-0.snap"), "state-a0");
  EXPECT_EQ(test::ReadAll(dir / "chk-1/agg-1.snap"), "state-a1");
  EXPECT_EQ(test::ReadAll(dir / "shared/sst-1"), "content of sst-1");

  auto meta = DecodeCheckpointMetadata(test::ReadAll(dir / "chk-1/_metadata"));
  ASSERT_TRUE(meta.ok()) << meta.status().ToString();
  EXPECT_EQ(meta->checkpoint_id, 1);
  EXPECT_EQ(meta->job_fingerprint, 0xF00Du);
  EXPECT_EQ(meta->created_ms, 1700000000000);
  EXPECT_EQ(meta->operators, (std::vector<OperatorParallelism>{{"src", 1}, {"agg", 2}}));
  ASSERT_EQ(meta->snapshots.size(), 3u);  // sorted by operator, subtask
  EXPECT_EQ(meta->snapshots[0].operator_name, "agg");
  EXPECT_EQ(meta->snapshots[0].subtask, 0u);
  ASSERT_EQ(meta->snapshots[0].files.size(), 2u);
  EXPECT_EQ(meta->snapshots[0].files[0].crc32c, Crc32c("state-a0"));
  EXPECT_EQ(meta->snapshots[0].files[0].size, 8u);
  EXPECT_EQ(meta->snapshots[0].files[1].crc32c, Crc32c("content of sst-1"));
  EXPECT_TRUE(meta->snapshots[0].files[1].shared);
  EXPECT_EQ(meta->snapshots[1].key_group_first, 64u);
  EXPECT_EQ(meta->snapshots[2].operator_name, "src");
  EXPECT_EQ(meta->snapshots[2].source_position, "offset=100");
}

TEST(CheckpointStorage, SnapshotFileNamesAreSanitized) {
  EXPECT_EQ(SnapshotFileName("window agg/1", 3), "window_agg_1-3.snap");
  EXPECT_EQ(SnapshotFileName("..", 0), "_..-0.snap");
  EXPECT_EQ(CheckpointDirName(17), "chk-17");
  EXPECT_EQ(SavepointDirName("before-upgrade"), "sp-before-upgrade");
}

TEST(CheckpointStorage, RejectsBadNamesAndOptions) {
  TempDir dir;
  auto storage = test::OpenStorage(dir.path());
  ASSERT_TRUE(storage);
  EXPECT_EQ(storage->WriteSnapshotFile(1, "../escape", "x").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(storage->WriteSnapshotFile(1, "_metadata", "x").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(storage->WriteSharedFile("a/b", "x").status().code(), StatusCode::kInvalidArgument);
  CheckpointStorageOptions o;
  o.state_dir = "";
  EXPECT_NE(CheckpointStorage::Open(o, test::TestJob()).status().message().find("--state-dir"),
            std::string::npos);
  o.state_dir = dir.path();
  o.retained = 0;
  EXPECT_NE(CheckpointStorage::Open(o, test::TestJob()).status().message().find("retained"),
            std::string::npos);
  o.retained = 1;
  test::WriteAll(dir / "plainfile", "x");
  o.state_dir = dir / "plainfile/sub";
  EXPECT_EQ(CheckpointStorage::Open(o, test::TestJob()).status().code(), StatusCode::kIoError);
}

TEST(CheckpointStorage, FinalizeRefusesAckedFilesThatAreMissingOrShort) {
  TempDir dir;
  auto storage = test::OpenStorage(dir.path());
  ASSERT_TRUE(storage);
  TaskAck a;
  a.checkpoint_id = 1;
  OperatorSnapshot o;
  o.operator_name = "agg";
  o.files = {{"agg-0.snap", 10, 0, false}};
  a.snapshots = {o};
  Status s = storage->Finalize(1, {a});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("agg-0.snap"), std::string::npos) << s.message();
  EXPECT_FALSE(fs::exists(dir / "chk-1/_metadata"));
  auto f = storage->WriteSnapshotFile(1, "agg-0.snap", "12345");
  ASSERT_TRUE(f.ok());
  s = storage->Finalize(1, {a});  // acked 10 bytes, 5 on disk
  EXPECT_NE(s.message().find("has 5 bytes, acknowledged 10"), std::string::npos) << s.message();
  EXPECT_FALSE(fs::exists(dir / "chk-1/_metadata"));
}

TEST(CheckpointStorage, SharedFilesAreReusedOnlyWhenIdentical) {
  TempDir dir;
  auto storage = test::OpenStorage(dir.path());
  ASSERT_TRUE(storage);
  auto a = storage->WriteSharedFile("sst-5", "abc");
  ASSERT_TRUE(a.ok());
  auto again = storage->WriteSharedFile("sst-5", "abc");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->crc32c, a->crc32c);
  auto other = storage->WriteSharedFile("sst-5", "abd");
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("already exists with other content"), std::string::npos);
  EXPECT_EQ(test::ReadAll(dir / "shared/sst-5"), "abc");
}

TEST(CheckpointStorage, DiscardRemovesAbortedCheckpoint) {
  TempDir dir;
  auto storage = test::OpenStorage(dir.path());
  ASSERT_TRUE(storage);
  ASSERT_TRUE(storage->WriteSnapshotFile(4, "agg-0.snap", "x").ok());
  EXPECT_TRUE(fs::exists(dir / "chk-4"));
  storage->Discard(4);
  EXPECT_FALSE(fs::exists(dir / "chk-4"));
}

TEST(CheckpointStorage, RetentionKeepsNewestAndSharedFilesStillReferenced) {
  TempDir dir;
  auto storage = test::OpenStorage(dir.path(), /*retained=*/2);
  ASSERT_TRUE(storage);
  test::WriteCheckpoint(storage.get(), 1, "s1", {"sst-a"});
  test::WriteCheckpoint(storage.get(), 2, "s2", {"sst-a", "sst-b"});
  ASSERT_TRUE(storage->CreateSavepoint(2, "keep-me").ok());
  // An abandoned partial checkpoint older than the next complete one.
  ASSERT_TRUE(storage->WriteSnapshotFile(3, "agg-0.snap", "partial").ok());
  test::WriteCheckpoint(storage.get(), 4, "s4", {"sst-b", "sst-c"});
  // Kept: chk-2, chk-4 (newest two). chk-1 deleted; partial chk-3 deleted; sst-a referenced only
  // by chk-1 and chk-2 -> still referenced by chk-2.
  EXPECT_FALSE(fs::exists(dir / "chk-1"));
  EXPECT_TRUE(fs::exists(dir / "chk-2"));
  EXPECT_FALSE(fs::exists(dir / "chk-3"));
  EXPECT_TRUE(fs::exists(dir / "chk-4"));
  EXPECT_TRUE(fs::exists(dir / "shared/sst-a"));
  test::WriteCheckpoint(storage.get(), 5, "s5", {"sst-c"});
  // Kept: chk-4, chk-5. sst-a only in deleted chk-2 (and in the self-contained savepoint's own
  // copy); sst-b still in chk-4; sst-c in both.
  EXPECT_FALSE(fs::exists(dir / "chk-2"));
  EXPECT_FALSE(fs::exists(dir / "shared/sst-a"));
  EXPECT_TRUE(fs::exists(dir / "shared/sst-b"));
  EXPECT_TRUE(fs::exists(dir / "shared/sst-c"));
  test::WriteCheckpoint(storage.get(), 6, "s6", {});
  test::WriteCheckpoint(storage.get(), 7, "s7", {});
  EXPECT_FALSE(fs::exists(dir / "shared/sst-b"));
  EXPECT_FALSE(fs::exists(dir / "shared/sst-c"));
  // Retention never touches the savepoint, and it verifies on its own.
  ASSERT_TRUE(fs::exists(dir / "sp-keep-me/_metadata"));
  auto sp = VerifyCheckpoint(dir / "sp-keep-me");
  ASSERT_TRUE(sp.ok()) << sp.status().ToString();
  EXPECT_EQ(sp->metadata.savepoint_name, "keep-me");
  EXPECT_EQ(sp->metadata.checkpoint_id, 2);
  for (const OperatorSnapshot& s : sp->metadata.snapshots) {
    for (const SnapshotFile& f : s.files) EXPECT_FALSE(f.shared) << f.name;
  }
  EXPECT_EQ(test::ReadAll(dir / "sp-keep-me/shared-sst-a"), "content of sst-a");
  EXPECT_EQ(test::ReadAll(dir / "sp-keep-me/agg-1.snap"), "s21");
}

// A commit of checkpoint 3 is slow or failing while 4, 5 and 6 complete: retention must keep
// chk-2, the last committed one, which a restart of a Kafka job restores exactly.
TEST(CheckpointStorage, RetentionKeepsTheLastCommittedCheckpoint) {
  TempDir dir;
  auto storage = test::OpenStorage(dir.path(), /*retained=*/2);
  ASSERT_TRUE(storage);
  test::WriteCheckpoint(storage.get(), 1, "s1", {"sst-a"});
  test::WriteCheckpoint(storage.get(), 2, "s2", {"sst-a", "sst-b"});
  storage->KeepCommitted(2);
  test::WriteCheckpoint(storage.get(), 3, "s3", {});
  test::WriteCheckpoint(storage.get(), 4, "s4", {});
  test::WriteCheckpoint(storage.get(), 5, "s5", {});
  test::WriteCheckpoint(storage.get(), 6, "s6", {});
  EXPECT_FALSE(fs::exists(dir / "chk-1"));
  EXPECT_TRUE(fs::exists(dir / "chk-2/_metadata"));
  EXPECT_TRUE(fs::exists(dir / "shared/sst-a")) << "a file the committed checkpoint lists";
  EXPECT_TRUE(fs::exists(dir / "shared/sst-b"));
  EXPECT_FALSE(fs::exists(dir / "chk-3"));
  EXPECT_FALSE(fs::exists(dir / "chk-4"));
  EXPECT_TRUE(VerifyCheckpoint(dir / "chk-2").ok());
  // Once a newer one is committed, chk-2 is an ordinary old checkpoint.
  storage->KeepCommitted(6);
  test::WriteCheckpoint(storage.get(), 7, "s7", {});
  EXPECT_FALSE(fs::exists(dir / "chk-2"));
  EXPECT_FALSE(fs::exists(dir / "shared/sst-a"));
  EXPECT_TRUE(fs::exists(dir / "chk-6"));
  EXPECT_TRUE(fs::exists(dir / "chk-7"));
}

// Instances with --state-root: a checkpoint a committed offset still names is kept (another
// instance may have to adopt state from it); while the names are unknown nothing is deleted.
TEST(CheckpointStorage, RetentionKeepsTheCheckpointsCommittedOffsetsName) {
  TempDir dir;
  auto storage = test::OpenStorage(dir.path(), /*retained=*/2);
  ASSERT_TRUE(storage);
  std::optional<std::set<int64_t>> named;  // unknown
  storage->KeepNamed([&named] { return named; });
  test::WriteCheckpoint(storage.get(), 1, "s1", {"sst-a"});
  test::WriteCheckpoint(storage.get(), 2, "s2", {});
  test::WriteCheckpoint(storage.get(), 3, "s3", {});
  EXPECT_TRUE(fs::exists(dir / "chk-1")) << "deleted while the names were unknown";
  named = std::set<int64_t>{1};
  test::WriteCheckpoint(storage.get(), 4, "s4", {});
  EXPECT_TRUE(fs::exists(dir / "chk-1/_metadata"));
  EXPECT_TRUE(fs::exists(dir / "shared/sst-a")) << "a file the named checkpoint lists";
  EXPECT_FALSE(fs::exists(dir / "chk-2"));
  EXPECT_TRUE(VerifyCheckpoint(dir / "chk-1").ok());
  named = std::set<int64_t>{};  // its partition was committed again by its new owner
  test::WriteCheckpoint(storage.get(), 5, "s5", {});
  EXPECT_FALSE(fs::exists(dir / "chk-1"));
  EXPECT_FALSE(fs::exists(dir / "shared/sst-a"));
  EXPECT_TRUE(fs::exists(dir / "chk-4"));
  EXPECT_TRUE(fs::exists(dir / "chk-5"));
}

// Forgetting an instance: every checkpoint but the named ones goes, the newest and unfinished
// ones included; a shared file stays while a kept checkpoint or a savepoint lists it.
TEST(CheckpointStorage, DeleteCheckpointsExceptKeepsOnlyTheNamedOnesAndTheFilesTheyList) {
  TempDir dir;
  {
    auto storage = test::OpenStorage(dir.path(), /*retained=*/5);
    ASSERT_TRUE(storage);
    test::WriteCheckpoint(storage.get(), 1, "s1", {"sst-a"});
    test::WriteCheckpoint(storage.get(), 2, "s2", {"sst-a", "sst-b"});
    test::WriteCheckpoint(storage.get(), 3, "s3", {"sst-c"});
    test::WriteCheckpoint(storage.get(), 4, "s4", {"sst-d"});
    ASSERT_TRUE(storage->CreateSavepoint(4, "keep").ok());
    ASSERT_TRUE(storage->WriteSnapshotFile(5, "agg-0.snap", "partial").ok());
  }
  auto deleted = DeleteCheckpointsExcept(dir.path(), {2});
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  EXPECT_EQ(*deleted, (std::vector<int64_t>{1, 3, 4, 5}));
  EXPECT_TRUE(VerifyCheckpoint(dir / "chk-2").ok());
  for (const char* gone : {"chk-1", "chk-3", "chk-4", "chk-5", "shared/sst-c"}) {
    EXPECT_FALSE(fs::exists(dir / gone)) << gone;
  }
  EXPECT_TRUE(fs::exists(dir / "shared/sst-a")) << "listed by chk-2";
  EXPECT_TRUE(fs::exists(dir / "shared/sst-b")) << "listed by chk-2";
  EXPECT_TRUE(fs::exists(dir / "sp-keep/_metadata")) << "savepoints are not checkpoints";
  auto none = DeleteCheckpointsExcept(dir.path(), {});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, (std::vector<int64_t>{2}));
  EXPECT_FALSE(fs::exists(dir / "shared/sst-a"));
  // Like an object store's prefix, a directory nothing was written to has nothing to delete.
  auto missing = DeleteCheckpointsExcept(dir.path() + "/nope", {});
  ASSERT_TRUE(missing.ok()) << missing.status().ToString();
  EXPECT_TRUE(missing->empty());
  EXPECT_FALSE(fs::exists(dir / "nope")) << "not created";
}

TEST(CheckpointStorage, DiscardNewerThanDeletesOnlyNewerCheckpoints) {
  TempDir dir;
  auto storage = test::OpenStorage(dir.path(), /*retained=*/5);
  ASSERT_TRUE(storage);
  test::WriteCheckpoint(storage.get(), 1, "s1", {});
  test::WriteCheckpoint(storage.get(), 2, "s2", {});
  test::WriteCheckpoint(storage.get(), 3, "s3", {});
  ASSERT_TRUE(storage->WriteSnapshotFile(4, "agg-0.snap", "partial").ok());
  ASSERT_TRUE(storage->CreateSavepoint(3, "sp").ok());
  ASSERT_TRUE(storage->DiscardNewerThan(1).ok());
  EXPECT_TRUE(fs::exists(dir / "chk-1/_metadata"));
  EXPECT_FALSE(fs::exists(dir / "chk-2"));
  EXPECT_FALSE(fs::exists(dir / "chk-3"));
  EXPECT_FALSE(fs::exists(dir / "chk-4"));
  EXPECT_TRUE(fs::exists(dir / "sp-sp/_metadata")) << "savepoints are not checkpoints";
  EXPECT_EQ(ParseCheckpointDir("chk-12"), 12);
  EXPECT_EQ(ParseCheckpointDir("chk-"), -1);
  EXPECT_EQ(ParseCheckpointDir("chk-1x"), -1);
  EXPECT_EQ(ParseCheckpointDir("sp-1"), -1);
}

TEST(CheckpointStorage, CheckpointDirNamesRoundTripAndJunkIsNoCheckpoint) {
  for (int64_t id : {int64_t{0}, int64_t{1}, int64_t{17}, int64_t{123456789012345}}) {
    EXPECT_EQ(ParseCheckpointDir(CheckpointDirName(id)), id);
  }
  EXPECT_EQ(ParseCheckpointDir("chk-007"), 7);  // leading zeros are digits too
  for (const char* junk : {"", "chk", "chk-", "chk-1x", "chk-x1", "chk--1", "chk-+1", "chk- 1",
                           "chk-1 ", "chk-1.tmp", "chk-1/", "CHK-1", "xchk-1", "chk_1", "sp-1",
                           "shared", "chk-9223372036854775808", "chk-99999999999999999999"}) {
    EXPECT_EQ(ParseCheckpointDir(junk), -1) << junk;
  }
}

TEST(CheckpointStorage, InProgressNewerDirectoryIsNotDeleted) {
  TempDir dir;
  auto storage = test::OpenStorage(dir.path(), 1);
  ASSERT_TRUE(storage);
  ASSERT_TRUE(storage->WriteSnapshotFile(9, "agg-0.snap", "being written").ok());
  test::WriteCheckpoint(storage.get(), 8, "x", {});
  EXPECT_TRUE(fs::exists(dir / "chk-9/agg-0.snap"));
}

TEST(CheckpointStorage, SavepointErrors) {
  TempDir dir;
  auto storage = test::OpenStorage(dir.path());
  ASSERT_TRUE(storage);
  EXPECT_EQ(storage->CreateSavepoint(1, "x").code(), StatusCode::kNotFound);
  test::WriteCheckpoint(storage.get(), 1, "s", {});
  EXPECT_EQ(storage->CreateSavepoint(1, "bad/name").code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(storage->CreateSavepoint(1, "a").ok());
  Status again = storage->CreateSavepoint(1, "a");
  EXPECT_NE(again.message().find("already exists"), std::string::npos);
}

}  // namespace
}  // namespace flow::rt
