// Source positions restored at another parallelism (SourceFunction/RawSource::RestoreRescaled):
// files read part-way by 3 subtasks continue in 2 or 4 subtasks, and again after a second
// rescale; every line must be read exactly once over all runs (compared with the files' lines).

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "flow/runtime/connectors/file_source.h"

namespace flow::rt {
namespace {

namespace fs = std::filesystem;

class FileSourceRescaleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("flow_file_rescale_{}", ::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    // 7 files of different lengths (file 5 is empty).
    for (int f = 0; f < 7; ++f) {
      std::ofstream out(dir_ / fmt::format("f{}.txt", f));
      int lines = f == 5 ? 0 : 40 + f * 17;
      for (int i = 0; i < lines; ++i) {
        std::string line = fmt::format("file{}-line{}", f, i);
        out << line << "\n";
        ++expected_[line];
      }
    }
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<FileSource> Open(uint32_t subtask, uint32_t parallelism) {
    FileSourceOptions o;
    o.path = dir_.string();
    o.read_chunk_bytes = 64;  // many small reads: positions land inside the chunking
    auto s = std::make_unique<FileSource>(o);
    EXPECT_TRUE(s->Open(subtask, parallelism).ok());
    return s;
  }

  // Polls up to `max_polls` times (3 records each); records every line; returns kEnd reached.
  bool Read(FileSource* s, int max_polls) {
    for (int i = 0; i < max_polls; ++i) {
      std::vector<RawRecord> out;
      auto r = s->Poll(&out, 3, 0);
      EXPECT_TRUE(r.ok()) << r.status().ToString();
      for (const RawRecord& rec : out) ++seen_[std::string(rec.payload)];
      if (*r == PollResult::kEnd) return true;
    }
    return false;
  }

  // Runs `parallelism` subtasks from `old` (empty: fresh), polling each `polls` times (-1: to
  // the end); returns their positions.
  std::vector<OldSourcePosition> Run(const std::vector<OldSourcePosition>& old, uint32_t old_p,
                                     uint32_t p, std::vector<int> polls) {
    std::vector<OldSourcePosition> next(p);
    for (uint32_t s = 0; s < p; ++s) {
      auto src = Open(s, p);
      if (!old.empty()) {
        Status st = src->RestoreRescaled(old, old_p);
        EXPECT_TRUE(st.ok()) << st.ToString();
      }
      bool ended = Read(src.get(), polls[s] < 0 ? 1 << 20 : polls[s]);
      next[s].subtask = s;
      next[s].finished = ended;
      if (!ended) {
        BinaryWriter w;
        EXPECT_TRUE(src->SnapshotPosition(&w).ok());
        next[s].position = w.Release();
      }
    }
    return next;
  }

  fs::path dir_;
  std::map<std::string, int> expected_;
  std::map<std::string, int> seen_;
};

TEST_F(FileSourceRescaleTest, ThreeToTwoToFourReadsEveryLineOnce) {
  // Subtask 2 finishes (its files are short enough), the others stop mid-file.
  auto p3 = Run({}, 0, 3, {9, 25, 1000});
  ASSERT_TRUE(p3[2].finished);
  ASSERT_FALSE(p3[0].finished);
  auto p2 = Run(p3, 3, 2, {20, 7});
  auto p4 = Run(p2, 2, 4, {-1, -1, -1, -1});
  EXPECT_EQ(seen_, expected_);
}

TEST_F(FileSourceRescaleTest, ThreeToFourToOneReadsEveryLineOnce) {
  auto p3 = Run({}, 0, 3, {4, 11, 30});
  auto p4 = Run(p3, 3, 4, {6, 0, 13, 2});
  auto p1 = Run(p4, 4, 1, {-1});
  EXPECT_EQ(seen_, expected_);
}

TEST_F(FileSourceRescaleTest, SameParallelismAfterARescaleKeepsLaterFiles) {
  // After 3 -> 2, a subtask holds several part-read files; its own position (version 2) must
  // carry them through a restore at the same parallelism.
  auto p3 = Run({}, 0, 3, {10, 10, 10});
  auto p2 = Run(p3, 3, 2, {2, 2});
  for (uint32_t s = 0; s < 2; ++s) {
    auto src = Open(s, 2);
    if (!p2[s].finished) {
      BinaryReader r(p2[s].position);
      Status st = src->RestorePosition(&r);
      ASSERT_TRUE(st.ok()) << st.ToString();
      Read(src.get(), 1 << 20);
    }
  }
  EXPECT_EQ(seen_, expected_);
}

TEST_F(FileSourceRescaleTest, CorruptOldPositionIsAnError) {
  auto p3 = Run({}, 0, 3, {2, 2, 2});
  p3[1].position = p3[0].position;  // subtask 1 "says" it is subtask 0
  auto src = Open(0, 2);
  Status st = src->RestoreRescaled(p3, 3);
  EXPECT_EQ(st.code(), StatusCode::kCorruption) << st.ToString();
  EXPECT_NE(st.message().find("old subtask 1"), std::string::npos) << st.ToString();
}

}  // namespace
}  // namespace flow::rt
