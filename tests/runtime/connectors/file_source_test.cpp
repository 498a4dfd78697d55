#include "flow/runtime/connectors/file_source.h"

#include <gtest/gtest.h>

#include <array>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "flow/runtime/formats/csv_decoder.h"
#include "temp_dir.h"

namespace flow::rt {
namespace {

using testing::TempDir;

// One record as a test sees it: file, line number, payload.
using Line = std::tuple<std::string, int64_t, std::string>;

// Reads everything a source gives; `locate` records which file each came from.
std::vector<Line> Drain(FileSource* src, size_t batch = 3, size_t limit = SIZE_MAX) {
  std::vector<Line> got;
  std::vector<RawRecord> recs;
  while (got.size() < limit) {
    recs.clear();
    Result<PollResult> r = src->Poll(&recs, std::min(batch, limit - got.size()), 10);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) break;
    for (const auto& rec : recs) {
      std::string where = src->Locate(rec);  // "file <path> line <n>"
      std::string file = where.substr(5, where.rfind(" line ") - 5);
      got.emplace_back(file, rec.offset, std::string(rec.payload));
    }
    if (*r == PollResult::kEnd) break;
  }
  return got;
}

class FileSourceTest : public ::testing::Test {
 protected:
  // Files a..e with different line counts; the expected records are built here independently.
  void SetUp() override {
    for (int f = 0; f < 5; ++f) {
      std::string name = std::string(1, static_cast<char>('a' + f)) + ".jsonl";
      std::string content;
      for (int l = 1; l <= 3 + f * 4; ++l) {
        std::string payload = "{\"f\":" + std::to_string(f) + ",\"l\":" + std::to_string(l) + "}";
        content += payload + "\n";
        expected_.emplace(dir_.File(name), l, payload);
      }
      dir_.Write(name, content);
    }
  }
  TempDir dir_;
  std::set<Line> expected_;
};

TEST_F(FileSourceTest, UnionOfSplitsIsEveryLineExactlyOnce) {
  for (uint32_t p = 1; p <= 3; ++p) {
    std::multiset<Line> all;
    for (uint32_t s = 0; s < p; ++s) {
      FileSource src({.path = dir_.path()});
      ASSERT_TRUE(src.Open(s, p).ok());
      // File i (sorted) goes to subtask i % p.
      std::vector<std::string> want;
      for (size_t i = s; i < 5; i += p) {
        want.push_back(dir_.File(std::string(1, static_cast<char>('a' + i)) + ".jsonl"));
      }
      EXPECT_EQ(src.assigned_files(), want);
      for (auto& l : Drain(&src)) {
        EXPECT_NE(std::find(want.begin(), want.end(), std::get<0>(l)), want.end());
        all.insert(l);
      }
    }
    EXPECT_EQ(all.size(), expected_.size()) << "parallelism " << p;
    EXPECT_EQ(std::set<Line>(all.begin(), all.end()), expected_) << "parallelism " << p;
  }
}

TEST_F(FileSourceTest, RestoreContinuesExactlyAfterSnapshot) {
  for (size_t chunk : {size_t{5}, size_t{1} << 20}) {
    for (size_t cut : {1, 4, 7, 20}) {
      FileSourceOptions opts{.path = dir_.path(), .read_chunk_bytes = chunk};
      FileSource first(opts);
      ASSERT_TRUE(first.Open(1, 2).ok());
      std::vector<Line> before = Drain(&first, 2, cut);
      BinaryWriter w;
      ASSERT_TRUE(first.SnapshotPosition(&w).ok());
      std::vector<Line> rest = Drain(&first);

      FileSource second(opts);
      ASSERT_TRUE(second.Open(1, 2).ok());
      BinaryReader r(w.data());
      ASSERT_TRUE(second.RestorePosition(&r).ok());
      EXPECT_EQ(Drain(&second, 4), rest) << "chunk " << chunk << " cut " << cut;
      EXPECT_EQ(before.size() + rest.size(), 7u + 15u);  // files b and d
    }
  }
}

TEST_F(FileSourceTest, RestoreAtOtherParallelismIsRejected) {
  FileSource first({.path = dir_.path()});
  ASSERT_TRUE(first.Open(0, 2).ok());
  BinaryWriter w;
  ASSERT_TRUE(first.SnapshotPosition(&w).ok());
  FileSource second({.path = dir_.path()});
  ASSERT_TRUE(second.Open(0, 3).ok());
  BinaryReader r(w.data());
  EXPECT_EQ(second.RestorePosition(&r).code(), StatusCode::kInvalidArgument);
  BinaryReader truncated(std::string_view(w.data()).substr(0, 5));
  EXPECT_FALSE(second.RestorePosition(&truncated).ok());
}

TEST(FileSource, MissingPathIsNotFoundNamingIt) {
  TempDir dir;
  for (std::string path : {dir.File("nope.jsonl"), dir.File("*.csv")}) {
    FileSource src({.path = path});
    Status s = src.Open(0, 1);
    EXPECT_EQ(s.code(), StatusCode::kNotFound);
    EXPECT_NE(s.message().find(path), std::string::npos) << s.message();
  }
}

TEST(FileSource, LongLineIsAnErrorNamingFileAndLine) {
  TempDir dir;
  dir.Write("x.txt", "short\nalso ok\n" + std::string(100, 'z') + "\nafter\n");
  for (size_t chunk : {size_t{4}, size_t{1024}}) {
    FileSource src({.path = dir.File("x.txt"), .max_line_bytes = 10, .read_chunk_bytes = chunk});
    ASSERT_TRUE(src.Open(0, 1).ok());
    std::vector<RawRecord> recs;
    Status error;
    size_t good = 0;
    for (int i = 0; i < 100 && error.ok(); ++i) {
      recs.clear();
      Result<PollResult> r = src.Poll(&recs, 1, 0);
      if (!r.ok()) {
        error = r.status();
      } else {
        good += recs.size();
        if (*r == PollResult::kEnd) break;
      }
    }
    EXPECT_EQ(good, 2u);
    EXPECT_EQ(error.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(error.message().find("x.txt line 3"), std::string::npos) << error.message();
  }
}

TEST(FileSource, LineEndsEmptyLinesGlobAndHeader) {
  TempDir dir;
  dir.Write("1.csv", "h1,h2\r\na,b\r\n\r\nc,d");  // CRLF, an empty line, no final newline
  dir.Write("2.csv", "h1,h2\ne,f\n");
  dir.Write("skip.txt", "not matched\n");
  dir.Write(".hidden.csv", "hidden\n");
  FileSource src({.path = dir.path() + "/*.csv", .header_lines = 1});
  ASSERT_TRUE(src.Open(0, 1).ok());
  EXPECT_EQ(src.all_files().size(), 2u);
  std::vector<Line> got = Drain(&src, 10);
  std::vector<Line> want = {
      {dir.File("1.csv"), 2, "a,b"}, {dir.File("1.csv"), 4, "c,d"}, {dir.File("2.csv"), 2, "e,f"}};
  EXPECT_EQ(got, want);
  EXPECT_EQ(src.header_lines(), std::vector<std::string>{"h1,h2"});

  // A directory skips hidden files.
  FileSource all({.path = dir.path(), .skip_empty_lines = false});
  ASSERT_TRUE(all.Open(0, 1).ok());
  EXPECT_EQ(all.all_files(),
            (std::vector<std::string>{dir.File("1.csv"), dir.File("2.csv"), dir.File("skip.txt")}));
  EXPECT_EQ(Drain(&all, 100).size(), 4u + 2u + 1u);
}

TEST(FileSource, QuotedNewlinesKeepCsvRecordsWhole) {
  TempDir dir;
  dir.Write("q.csv", "id,text\n1,\"two\nlines\"\r\n2,\"a \"\"q\"\"\nb\nc\"\n3,plain\n");
  for (size_t chunk : {size_t{3}, size_t{4096}}) {
    FileSource src({.path = dir.File("q.csv"),
                    .read_chunk_bytes = chunk,
                    .quoted_newlines = true,
                    .header_lines = 1});
    ASSERT_TRUE(src.Open(0, 1).ok());
    std::vector<Line> want = {{dir.File("q.csv"), 2, "1,\"two\nlines\""},
                              {dir.File("q.csv"), 4, "2,\"a \"\"q\"\"\nb\nc\""},
                              {dir.File("q.csv"), 7, "3,plain"}};
    EXPECT_EQ(Drain(&src, 2), want) << "chunk " << chunk;
  }
  // Without the option every physical line is a record.
  FileSource lines({.path = dir.File("q.csv")});
  ASSERT_TRUE(lines.Open(0, 1).ok());
  EXPECT_EQ(Drain(&lines).size(), 7u);
}

TEST(FileSource, ReplaysFirstLineAfterRestoreForCsvHeaders) {
  TempDir dir;
  dir.Write("a.csv", "name,n\nx,1\ny,2\nz,3\n");
  dir.Write("b.csv", "n,name\n4,w\n");
  FileSourceOptions opts{.path = dir.path(), .replay_first_line_on_restore = true};
  // Decodes records the way an engine would: line 1 of each file is its header.
  constexpr std::array<std::string_view, 2> kNames{"name", "n"};
  constexpr std::array<bool, 2> kRequired{true, true};
  auto decode_all = [&](FileSource* src, CsvDecoder* csv, size_t limit) {
    std::vector<std::string> rows;
    std::vector<RawRecord> recs;
    while (true) {
      recs.clear();
      Result<PollResult> r = src->Poll(&recs, 1, 0);
      EXPECT_TRUE(r.ok());
      for (const auto& rec : recs) {
        Result<bool> header = csv->ConsumeHeader(rec.payload, rec.offset);
        EXPECT_TRUE(header.ok()) << header.status().ToString();
        if (*header) continue;
        std::string name;
        int64_t n = 0;
        EXPECT_TRUE(csv->Parse(rec.payload, rec.offset).ok());
        EXPECT_TRUE(csv->Read<CsvString>(0, &name).ok());
        EXPECT_TRUE(csv->Read<CsvInt>(1, &n).ok());
        rows.push_back(name + "=" + std::to_string(n));
      }
      if (!r.ok() || *r == PollResult::kEnd || rows.size() >= limit) break;
    }
    return rows;
  };
  FileSource first(opts);
  ASSERT_TRUE(first.Open(0, 1).ok());
  CsvDecoder csv1;
  csv1.UseHeaderRows(kNames, kRequired);
  EXPECT_EQ(decode_all(&first, &csv1, 2), (std::vector<std::string>{"x=1", "y=2"}));
  BinaryWriter w;
  ASSERT_TRUE(first.SnapshotPosition(&w).ok());

  FileSource second(opts);
  ASSERT_TRUE(second.Open(0, 1).ok());
  BinaryReader r(w.data());
  ASSERT_TRUE(second.RestorePosition(&r).ok());
  CsvDecoder csv2;  // a fresh decoder, as after a restart
  csv2.UseHeaderRows(kNames, kRequired);
  EXPECT_EQ(decode_all(&second, &csv2, 100), (std::vector<std::string>{"z=3", "w=4"}));
}

}  // namespace
}  // namespace flow::rt
