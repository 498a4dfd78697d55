#include "flow/runtime/connectors/connector_factory.h"

#include <gtest/gtest.h>

#include "flow/runtime/connectors/file_sink.h"
#include "temp_dir.h"

namespace flow::rt {
namespace {

using testing::ReadFile;
using testing::TempDir;

std::string SourceError(std::string_view kind, const ConnectorOptions& o) {
  auto r = MakeRawSource(kind, o);
  EXPECT_FALSE(r.ok()) << kind;
  if (r.ok()) return "";
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  return r.status().message();
}

std::string SinkError(std::string_view kind, const ConnectorOptions& o) {
  auto r = MakeRawSink(kind, o);
  EXPECT_FALSE(r.ok()) << kind;
  if (r.ok()) return "";
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  return r.status().message();
}

TEST(ConnectorFactory, BuildsWorkingFileSourceAndSink) {
  TempDir dir;
  dir.Write("in.csv", "h\n\"a\nb\"\nc\n");
  auto src = MakeRawSource("file", {{"path", dir.File("in.csv")},
                                    {"quoted_newlines", "true"},
                                    {"header_lines", "1"},
                                    {"max_line_bytes", "1KiB"}});
  ASSERT_TRUE(src.ok()) << src.status().ToString();
  ASSERT_TRUE((*src)->Open(0, 1).ok());
  std::vector<RawRecord> recs;
  ASSERT_TRUE((*src)->Poll(&recs, 10, 0).ok());
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].payload, "\"a\nb\"");
  EXPECT_EQ(recs[1].payload, "c");

  auto sink = MakeRawSink(
      "file", {{"directory", dir.File("out")}, {"suffix", ".csv"}, {"roll_bytes", "1MiB"}});
  ASSERT_TRUE(sink.ok()) << sink.status().ToString();
  ASSERT_TRUE((*sink)->Open(1, 2).ok());
  ASSERT_TRUE((*sink)->Write("", "x", 0).ok());
  ASSERT_TRUE((*sink)->Close().ok());
  EXPECT_EQ(ReadFile(dir.File("out/part-1-0.csv")), "x\n");
}

TEST(ConnectorFactory, EveryKindIsKnown) {
  EXPECT_TRUE(MakeRawSource("stdin", {}).ok());
  EXPECT_TRUE(MakeRawSource("kafka", {{"brokers", "b:1"},
                                      {"topic", "t"},
                                      {"start", "latest"},
                                      {"metadata_timeout", "5s"},
                                      {"kafka.fetch.max.bytes", "1"}})
                  .ok());
  EXPECT_TRUE(MakeRawSink("stdout", {}).ok());
  EXPECT_TRUE(MakeRawSink("blackhole", {}).ok());
  EXPECT_TRUE(
      MakeRawSink(
          "kafka",
          {{"brokers", "b:1"}, {"topic", "t"}, {"partitioner", "explicit"}, {"partition", "3"}})
          .ok());
}

TEST(ConnectorFactory, ErrorsNameConnectorAndOption) {
  EXPECT_EQ(SourceError("ftp", {}), "unknown source `ftp` (known: kafka, file, stdin)");
  EXPECT_EQ(SinkError("printer", {}),
            "unknown sink `printer` (known: kafka, file, stdout, blackhole)");
  EXPECT_EQ(SourceError("file", {}), "file source: option `path` is required");
  EXPECT_EQ(SourceError("file", {{"path", "x"}, {"paht", "y"}}),
            "file source: unknown option `paht` (known: header_lines, max_line_bytes, path, "
            "quoted_newlines, read_chunk_bytes, replay_first_line_on_restore, skip_empty_lines)");
  EXPECT_EQ(
      SourceError("file", {{"path", "x"}, {"max_line_bytes", "lots"}}),
      "file source: option `max_line_bytes` must be a positive size like 16MiB, not \"lots\"");
  EXPECT_EQ(SourceError("kafka", {{"brokers", "b"}, {"topic", "t"}, {"start", "first"}}),
            "kafka source: option `start` must be one of earliest|latest|committed, not \"first\"");
  EXPECT_EQ(SourceError("kafka", {{"brokers", "b"}, {"topic", "t"}, {"metadata_timeout", "-1"}}),
            "kafka source: option `metadata_timeout` must be a positive duration like 10s, not "
            "\"-1\"");
  EXPECT_EQ(SinkError("kafka", {{"topic", "t"}}), "kafka sink: option `brokers` is required");
  EXPECT_EQ(SinkError("blackhole", {{"x", "1"}}),
            "blackhole sink: unknown option `x` (known: none)");
  EXPECT_EQ(SourceError("stdin", {{"skip_empty_lines", "yes"}}),
            "stdin source: option `skip_empty_lines` must be true or false, not \"yes\"");
}

TEST(ConnectorFactory, KafkaPassthroughReachesLibrdkafka) {
  // A rejected librdkafka key shows that "kafka.<key>" options are handed through (Open fails
  // while building the configuration, before any connection attempt).
  auto src = MakeRawSource(
      "kafka", {{"brokers", "127.0.0.1:1"}, {"topic", "t"}, {"kafka.no.such.key", "1"}});
  ASSERT_TRUE(src.ok());
  Status s = (*src)->Open(0, 1);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("no.such.key"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace flow::rt
