// Recovery selection: the newest checkpoint that verifies wins; damaged ones are skipped with a
// warning that names the file and the problem.

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "checkpoint_test_util.h"
#include "flow/runtime/checkpoint/recovery.h"
#include "flow/runtime/common/serde.h"

namespace flow::rt {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

std::string Hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", v);
  return buf;
}

// Three complete checkpoints 1..3.
struct ThreeCheckpoints {
  ThreeCheckpoints() {
    storage = test::OpenStorage(dir.path(), 5);
    for (int64_t id = 1; id <= 3; ++id)
      test::WriteCheckpoint(storage.get(), id, "state" + std::to_string(id),
                            {"sst-" + std::to_string(id)});
  }
  Result<RestoreSelection> Select() { return SelectRestoreCheckpoint(dir.path(), test::TestJob()); }
  TempDir dir;
  std::unique_ptr<CheckpointStorage> storage;
};

TEST(SelectRestoreCheckpoint, NewestCompleteWins) {
  ThreeCheckpoints t;
  auto sel = t.Select();
  ASSERT_TRUE(sel.ok()) << sel.status().ToString();
  ASSERT_TRUE(sel->point);
  EXPECT_EQ(sel->point->metadata.checkpoint_id, 3);
  EXPECT_TRUE(sel->warnings.empty());
  EXPECT_EQ(fs::path(sel->point->path).filename(), "chk-3");
  const OperatorSnapshot* agg0 = SnapshotsOf(sel->point->metadata, "agg")[0];
  auto bytes = ReadRestoreFile(*sel->point, agg0->files[0]);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, "state30");
  auto shared = ReadRestoreFile(*sel->point, agg0->files[1]);
  ASSERT_TRUE(shared.ok());
  EXPECT_EQ(*shared, "content of sst-3");
  EXPECT_EQ(SnapshotsOf(sel->point->metadata, "src")[0]->source_position, "offset=300");
}

TEST(SelectRestoreCheckpoint, EmptyOrMissingStateDirMeansFreshStart) {
  TempDir dir;
  auto sel = SelectRestoreCheckpoint(dir / "does-not-exist", test::TestJob());
  ASSERT_TRUE(sel.ok());
  EXPECT_FALSE(sel->point);
  sel = SelectRestoreCheckpoint(dir.path(), test::TestJob());
  ASSERT_TRUE(sel.ok());
  EXPECT_FALSE(sel->point);
}

TEST(SelectRestoreCheckpoint, PartialCheckpointWithoutMetadataIsSkipped) {
  ThreeCheckpoints t;
  ASSERT_TRUE(t.storage->WriteSnapshotFile(4, "agg-0.snap", "half").ok());
  auto sel = t.Select();
  ASSERT_TRUE(sel.ok());
  EXPECT_EQ(sel->point->metadata.checkpoint_id, 3);
  ASSERT_EQ(sel->warnings.size(), 1u);
  EXPECT_EQ(sel->warnings[0], "skipping chk-4: no _metadata (incomplete checkpoint)");
}

TEST(SelectRestoreCheckpoint, FlippedByteInSnapshotFileFallsBack) {
  ThreeCheckpoints t;
  std::string path = t.dir / "chk-3/agg-1.snap";
  std::string original = test::ReadAll(path);
  std::string flipped = original;
  flipped[2] = static_cast<char>(flipped[2] ^ 0x01);
  test::WriteAll(path, flipped);
  auto sel = t.Select();
  ASSERT_TRUE(sel.ok());
  EXPECT_EQ(sel->point->metadata.checkpoint_id, 2);
  ASSERT_EQ(sel->warnings.size(), 1u);
  EXPECT_EQ(sel->warnings[0], "skipping chk-3: chk-3/agg-1.snap: checksum mismatch (expected " +
                                  Hex(Crc32c(original)) + ", actual " + Hex(Crc32c(flipped)) + ")");
}

TEST(SelectRestoreCheckpoint, TruncatedAndMissingFilesFallBackSeveralSteps) {
  ThreeCheckpoints t;
  test::WriteAll(t.dir / "chk-3/agg-0.snap", "sta");  // truncated
  fs::remove(t.dir / "chk-2/agg-1.snap");             // missing
  auto sel = t.Select();
  ASSERT_TRUE(sel.ok());
  EXPECT_EQ(sel->point->metadata.checkpoint_id, 1);
  ASSERT_EQ(sel->warnings.size(), 2u);
  EXPECT_EQ(sel->warnings[0],
            "skipping chk-3: chk-3/agg-0.snap: size 3 bytes, expected 7 (truncated)");
  EXPECT_EQ(sel->warnings[1], "skipping chk-2: chk-2/agg-1.snap: missing file");
}

TEST(SelectRestoreCheckpoint, DamagedSharedFileAndMetadata) {
  ThreeCheckpoints t;
  test::WriteAll(t.dir / "shared/sst-3", "content of sst-X");
  std::string meta = test::ReadAll(t.dir / "chk-2/_metadata");
  test::WriteAll(t.dir / "chk-2/_metadata", meta.substr(0, meta.size() / 2));
  auto sel = t.Select();
  ASSERT_TRUE(sel.ok());
  EXPECT_EQ(sel->point->metadata.checkpoint_id, 1);
  ASSERT_EQ(sel->warnings.size(), 2u);
  EXPECT_NE(sel->warnings[0].find("skipping chk-3: shared/sst-3: checksum mismatch"),
            std::string::npos)
      << sel->warnings[0];
  EXPECT_EQ(sel->warnings[1], "skipping chk-2: chk-2/_metadata: checkpoint metadata truncated: " +
                                  std::to_string(meta.size() / 2) + " bytes, expected " +
                                  std::to_string(meta.size()));
}

TEST(SelectRestoreCheckpoint, NothingValidLeavesNoPointButAllWarnings) {
  ThreeCheckpoints t;
  for (int id = 1; id <= 3; ++id) fs::remove(t.dir / ("chk-" + std::to_string(id) + "/_metadata"));
  auto sel = t.Select();
  ASSERT_TRUE(sel.ok());
  EXPECT_FALSE(sel->point);
  EXPECT_EQ(sel->warnings.size(), 3u);
}

TEST(SelectRestoreCheckpoint, CheckpointOfAnotherJobIsRefused) {
  ThreeCheckpoints t;
  auto sel = SelectRestoreCheckpoint(t.dir.path(), test::TestJob(/*fingerprint=*/0xBEEF));
  ASSERT_FALSE(sel.ok());
  EXPECT_EQ(sel.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(
      sel.status().message().find("taken by another job (fingerprint 000000000000f00d, this job "
                                  "000000000000beef)"),
      std::string::npos)
      << sel.status().message();
  sel = SelectRestoreCheckpoint(t.dir.path(), test::TestJob(0xF00D, /*max_parallelism=*/64));
  ASSERT_FALSE(sel.ok());
  EXPECT_NE(sel.status().message().find("max parallelism 128, this job has 64"), std::string::npos);
}

TEST(ResolveRestore, NoneExplicitPathAndNoFallbackForExplicitPath) {
  ThreeCheckpoints t;
  auto none = ResolveRestore(t.dir.path(), "none", test::TestJob());
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->point);
  auto explicit_old = ResolveRestore(t.dir.path(), t.dir / "chk-1", test::TestJob());
  ASSERT_TRUE(explicit_old.ok());
  EXPECT_EQ(explicit_old->point->metadata.checkpoint_id, 1);
  ASSERT_TRUE(t.storage->CreateSavepoint(2, "v1").ok());
  auto sp = ResolveRestore(t.dir.path(), t.dir / "sp-v1/", test::TestJob());
  ASSERT_TRUE(sp.ok()) << sp.status().ToString();
  EXPECT_EQ(sp->point->metadata.savepoint_name, "v1");
  auto sp_bytes = ReadRestoreFile(*sp->point, SnapshotsOf(sp->point->metadata, "agg")[0]->files[1]);
  ASSERT_TRUE(sp_bytes.ok());
  EXPECT_EQ(*sp_bytes, "content of sst-2");
  test::WriteAll(t.dir / "chk-3/agg-0.snap", "garbage");
  auto bad = ResolveRestore(t.dir.path(), t.dir / "chk-3", test::TestJob());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--restore "), std::string::npos);
  EXPECT_NE(bad.status().message().find("chk-3/agg-0.snap: checksum mismatch"), std::string::npos)
      << bad.status().message();
  auto missing = ResolveRestore(t.dir.path(), t.dir / "chk-99", test::TestJob());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  auto auto_sel = ResolveRestore(t.dir.path(), "", test::TestJob());
  ASSERT_TRUE(auto_sel.ok());
  EXPECT_EQ(auto_sel->point->metadata.checkpoint_id, 2);
}

TEST(ReadRestoreFile, DetectsDamageAfterSelection) {
  ThreeCheckpoints t;
  auto sel = t.Select();
  ASSERT_TRUE(sel.ok());
  const SnapshotFile& f = SnapshotsOf(sel->point->metadata, "agg")[1]->files[0];
  test::WriteAll(t.dir / "chk-3/agg-1.snap", "state3X");
  auto r = ReadRestoreFile(*sel->point, f);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
  fs::remove(t.dir / "chk-3/agg-1.snap");
  r = ReadRestoreFile(*sel->point, f);
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace flow::rt
