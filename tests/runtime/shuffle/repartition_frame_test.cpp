// The repartition topic's value format: round trips, the pinned bytes of version 1 (values cross
// between instances and outlive a binary), and refusals of every malformed value.

#include "flow/runtime/shuffle/repartition_frame.h"

#include <gtest/gtest.h>

#include <string>

namespace flow::rt::shuffle {
namespace {

ProgressReport SampleReport() {
  ProgressReport r;
  r.writer = "a/1";
  r.sources.push_back(SourceProgress{
      "orders.source", 3, {{0, 1000, false, false}, {2, kMinWatermark, true, false}}});
  r.sources.push_back(SourceProgress{"bids.source", 1, {{0, kMaxWatermark, false, true}}});
  return r;
}

TEST(RepartitionFrameTest, RecordsKeepTheirInputAndBytes) {
  for (int input : {0, 1}) {
    std::string value;
    AppendRecordHeader(input, 1764720000123 + input, &value);
    const std::string payload("\x00\x01record\xff", 9);
    value += payload;
    auto frame = DecodeFrame(value, "test");
    ASSERT_TRUE(frame.ok()) << frame.status().ToString();
    EXPECT_EQ(frame->kind, input == 0 ? FrameKind::kRecord0 : FrameKind::kRecord1);
    EXPECT_EQ(frame->input(), input);
    EXPECT_EQ(frame->timestamp, 1764720000123 + input);
    EXPECT_EQ(frame->record, payload);
  }
  std::string empty;
  AppendRecordHeader(0, kMinWatermark, &empty);
  auto frame = DecodeFrame(empty, "test");
  ASSERT_TRUE(frame.ok()) << frame.status().ToString();
  EXPECT_TRUE(frame->record.empty());
  EXPECT_EQ(frame->timestamp, kMinWatermark);
}

TEST(RepartitionFrameTest, ProgressRoundTrips) {
  const ProgressReport report = SampleReport();
  auto frame = DecodeFrame(EncodeProgress(report), "test");
  ASSERT_TRUE(frame.ok()) << frame.status().ToString();
  EXPECT_EQ(frame->kind, FrameKind::kProgress);
  EXPECT_EQ(frame->progress, report);
}

// Version 1's bytes, written out by hand from the format in the header: a change of the encoding
// must be a new version, not a silent one (instances of one job may briefly run different builds
// during an upgrade, and must then refuse each other's values rather than misread them).
TEST(RepartitionFrameTest, ProgressBytesArePinned) {
  ProgressReport r;
  r.writer = "w";
  r.sources.push_back(SourceProgress{"s", 2, {{1, 258, true, false}}});
  const std::string expected(
      "\x01\x02"                           // version 1, kind progress
      "\x01\x00\x00\x00\x00\x00\x00\x00w"  // writer
      "\x01\x00\x00\x00"                   // 1 source
      "\x01\x00\x00\x00\x00\x00\x00\x00s"  // its name
      "\x02\x00\x00\x00"                   // 2 partitions in its topic
      "\x01\x00\x00\x00"                   // 1 reported
      "\x01\x00\x00\x00"                   // partition 1
      "\x02\x01\x00\x00\x00\x00\x00\x00"   // watermark 258
      "\x01",                              // idle
      2 + 9 + 4 + 9 + 4 + 4 + 4 + 8 + 1);
  EXPECT_EQ(EncodeProgress(r), expected);
  std::string record;
  AppendRecordHeader(1, 258, &record);
  EXPECT_EQ(record, std::string("\x01\x01\x02\x01\x00\x00\x00\x00\x00\x00", 10));
}

TEST(RepartitionFrameTest, MalformedValuesAreCorruptionNamingWhere) {
  auto expect_corrupt = [](const std::string& value, const std::string& needle) {
    auto frame = DecodeFrame(value, "topic t partition 3 offset 17");
    ASSERT_FALSE(frame.ok()) << "decoded: " << testing::PrintToString(value);
    EXPECT_EQ(frame.status().code(), StatusCode::kCorruption);
    EXPECT_NE(frame.status().message().find("topic t partition 3 offset 17"), std::string::npos)
        << frame.status().ToString();
    EXPECT_NE(frame.status().message().find(needle), std::string::npos)
        << frame.status().ToString();
  };
  expect_corrupt("", "shorter than its 2-byte header");
  expect_corrupt(std::string("\x01", 1), "shorter than its 2-byte header");
  expect_corrupt(std::string("\x02\x00", 2), "format version 2, this binary reads version 1");
  expect_corrupt(std::string("\x01\x07", 2), "unknown kind 7");
  expect_corrupt(std::string("\x01\x01\x00\x00", 4),
                 "a record of 4 bytes, shorter than its 10-byte header");
  expect_corrupt(EncodeProgress(SampleReport()) + "x", "1 bytes after the end");

  std::string bad_flags =
      EncodeProgress(ProgressReport{"w", {SourceProgress{"s", 1, {{0, 5, false, false}}}}});
  bad_flags.back() = '\x04';
  expect_corrupt(bad_flags, "unknown flags 0x4");

  // A count far beyond what the value holds is refused before anything is allocated for it.
  std::string huge("\x01\x02\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\xff\xff", 14);
  expect_corrupt(huge, "4294967295 sources do not fit");
}

TEST(RepartitionFrameTest, EveryTruncationOfAProgressValueIsRefused) {
  const std::string value = EncodeProgress(SampleReport());
  for (size_t n = 2; n < value.size(); ++n) {
    auto frame = DecodeFrame(value.substr(0, n), "test");
    ASSERT_FALSE(frame.ok()) << "a value cut to " << n << " of " << value.size()
                             << " bytes decoded";
    EXPECT_EQ(frame.status().code(), StatusCode::kCorruption);
  }
}

}  // namespace
}  // namespace flow::rt::shuffle
