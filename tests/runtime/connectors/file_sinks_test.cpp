// FileSink, StdoutSink, BlackholeSink and StdinSource (through pipes and temp files).

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "flow/runtime/connectors/blackhole_sink.h"
#include "flow/runtime/connectors/file_sink.h"
#include "flow/runtime/connectors/stdin_source.h"
#include "flow/runtime/connectors/stdout_sink.h"
#include "temp_dir.h"

namespace flow::rt {
namespace {

using testing::ReadFile;
using testing::TempDir;

std::set<std::string> ListDir(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    names.insert(e.path().filename().string());
  }
  return names;
}

TEST(FileSink, WritesLinesVisibleAfterFlush) {
  TempDir dir;
  std::string out = dir.File("out");
  FileSink sink({.directory = out});
  ASSERT_TRUE(sink.Open(2, 4).ok());
  ASSERT_TRUE(sink.Write("", R"({"a":1})", 0).ok());
  ASSERT_TRUE(sink.Write("k", R"({"a":2})", 5).ok());
  ASSERT_TRUE(sink.Flush().ok());
  EXPECT_EQ(ReadFile(out + "/part-2-0.jsonl"), "{\"a\":1}\n{\"a\":2}\n");
  ASSERT_TRUE(sink.Write("", "third", 0).ok());
  ASSERT_TRUE(sink.Close().ok());
  EXPECT_EQ(ReadFile(out + "/part-2-0.jsonl"), "{\"a\":1}\n{\"a\":2}\nthird\n");
  EXPECT_EQ(ListDir(out), std::set<std::string>{"part-2-0.jsonl"});
}

TEST(FileSink, RollsBySizeAndNeverOverwrites) {
  TempDir dir;
  {
    FileSink sink({.directory = dir.path(), .suffix = ".txt", .roll_bytes = 10});
    ASSERT_TRUE(sink.Open(0, 1).ok());
    for (std::string p : {"aaaa", "bbbb", "cccc", "dddddddddddddddd", "e"}) {
      ASSERT_TRUE(sink.Write("", p, 0).ok());
    }
    ASSERT_TRUE(sink.Close().ok());
  }
  // 10-byte limit: "aaaa\nbbbb\n" fills part 0; the 17-byte record gets a file of its own.
  EXPECT_EQ(ReadFile(dir.File("part-0-0.txt")), "aaaa\nbbbb\n");
  EXPECT_EQ(ReadFile(dir.File("part-0-1.txt")), "cccc\n");
  EXPECT_EQ(ReadFile(dir.File("part-0-2.txt")), "dddddddddddddddd\n");
  EXPECT_EQ(ReadFile(dir.File("part-0-3.txt")), "e\n");
  {
    FileSink again({.directory = dir.path(), .suffix = ".txt", .roll_bytes = 10});
    ASSERT_TRUE(again.Open(0, 1).ok());
    ASSERT_TRUE(again.Write("", "new", 0).ok());
    ASSERT_TRUE(again.Close().ok());
  }
  EXPECT_EQ(ReadFile(dir.File("part-0-4.txt")), "new\n");
  EXPECT_EQ(ReadFile(dir.File("part-0-0.txt")), "aaaa\nbbbb\n");
}

TEST(FileSink, UnwritableDirectoryIsIoError) {
  TempDir dir;
  dir.Write("file", "x");
  FileSink sink({.directory = dir.File("file") + "/sub"});
  Status s = sink.Open(0, 1);
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_NE(s.message().find("file/sub"), std::string::npos) << s.message();
}

// Built with append rather than operator+ to avoid a GCC 12 -Wrestrict false positive.
std::string Tag(int t, int i) {
  std::string s = "t";
  s.append(std::to_string(t)).append("-").append(std::to_string(i));
  return s;
}

TEST(StdoutSink, WholeLinesFromParallelWriters) {
  TempDir dir;
  int fd = ::open(dir.File("out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  constexpr int kThreads = 3;
  constexpr int kLines = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([fd, t] {
      StdoutSink sink({.fd = fd, .buffer_bytes = 100});
      ASSERT_TRUE(sink.Open(static_cast<uint32_t>(t), kThreads).ok());
      for (int i = 0; i < kLines; ++i) {
        ASSERT_TRUE(sink.Write("", Tag(t, i), 0).ok());
      }
      ASSERT_TRUE(sink.Close().ok());
    });
  }
  for (auto& th : threads) th.join();
  ::close(fd);
  std::set<std::string> want;
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kLines; ++i) want.insert(Tag(t, i));
  }
  std::string text = ReadFile(dir.File("out"));
  std::multiset<std::string> got;
  size_t start = 0;
  for (size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1) {
    got.insert(text.substr(start, nl - start));
  }
  EXPECT_EQ(start, text.size());  // ends with a newline
  EXPECT_EQ(got.size(), want.size());
  EXPECT_EQ(std::set<std::string>(got.begin(), got.end()), want);
}

TEST(StdoutSink, ClosedPipeIsIoErrorNotACrash) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::close(fds[0]);  // the reader went away, as in `job | head -1`
  StdoutSink sink({.fd = fds[1]});
  ASSERT_TRUE(sink.Open(0, 1).ok());
  ASSERT_TRUE(sink.Write("", "line", 0).ok());
  Status s = sink.Flush();
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_NE(s.message().find("standard output"), std::string::npos) << s.message();
  ::close(fds[1]);
}

TEST(BlackholeSink, Counts) {
  BlackholeSink sink;
  ASSERT_TRUE(sink.Open(0, 1).ok());
  ASSERT_TRUE(sink.Write("k", "abc", 0).ok());
  ASSERT_TRUE(sink.Write("", "de", 0).ok());
  EXPECT_EQ(sink.records(), 2u);
  EXPECT_EQ(sink.bytes(), 5u);
}

TEST(StdinSource, ReadsLinesIdlesThenEnds) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  StdinSource src({.fd = fds[0]});
  EXPECT_EQ(src.Open(0, 2).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(src.Open(0, 1).ok());
  std::vector<RawRecord> recs;
  Result<PollResult> r = src.Poll(&recs, 10, 0);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, PollResult::kIdle);  // nothing written yet, no hang

  std::string data = "one\r\ntwo\n\nthr";
  ASSERT_EQ(::write(fds[1], data.data(), data.size()), static_cast<ssize_t>(data.size()));
  r = src.Poll(&recs, 10, 1000);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].payload, "one");
  EXPECT_EQ(recs[1].payload, "two");
  EXPECT_EQ(src.Locate(recs[1]), "stdin line 2");
  BinaryWriter w;
  ASSERT_TRUE(src.SnapshotPosition(&w).ok());

  ASSERT_EQ(::write(fds[1], "ee\n", 3), 3);
  ::close(fds[1]);
  recs.clear();
  std::vector<std::string> rest;
  for (int i = 0; i < 10; ++i) {
    r = src.Poll(&recs, 10, 1000);
    ASSERT_TRUE(r.ok());
    for (auto& rec : recs) rest.emplace_back(rec.payload);
    recs.clear();
    if (*r == PollResult::kEnd) break;
  }
  EXPECT_EQ(rest, std::vector<std::string>{"three"});
  ::close(fds[0]);

  StdinSource fresh({.fd = 0});
  ASSERT_TRUE(fresh.Open(0, 1).ok());
  BinaryReader reader(w.data());
  EXPECT_EQ(fresh.RestorePosition(&reader).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace flow::rt
