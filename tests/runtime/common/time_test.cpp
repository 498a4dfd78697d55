#include "flow/runtime/common/time.h"

#include <gtest/gtest.h>

#include <limits>

namespace flow::rt {
namespace {

TEST(TimeTest, FormatsEpochAndKnownInstants) {
  EXPECT_EQ(FormatTimestamp(0), "1970-01-01T00:00:00.000Z");
  // 2024-02-29T12:34:56.789Z, a leap day: 19782 days after the epoch.
  EXPECT_EQ(FormatTimestamp(19782LL * 86400000 + 45296789), "2024-02-29T12:34:56.789Z");
  EXPECT_EQ(FormatTimestamp(-1), "1969-12-31T23:59:59.999Z");
}

TEST(TimeTest, ParsesRfc3339WithFractionsAndOffsets) {
  TimestampMs ts = 0;
  ASSERT_TRUE(ParseTimestamp("2024-02-29T12:34:56.789Z", &ts));
  EXPECT_EQ(ts, 19782LL * 86400000 + 45296789);
  ASSERT_TRUE(ParseTimestamp("2024-02-29T14:34:56.789+02:00", &ts));
  EXPECT_EQ(ts, 19782LL * 86400000 + 45296789);
  ASSERT_TRUE(ParseTimestamp("1970-01-01T00:00:01Z", &ts));
  EXPECT_EQ(ts, 1000);
}

TEST(TimeTest, RejectsMalformedTimestamps) {
  TimestampMs ts = 0;
  EXPECT_FALSE(ParseTimestamp("", &ts));
  EXPECT_FALSE(ParseTimestamp("2024-02-29", &ts));
  EXPECT_FALSE(ParseTimestamp("2024-13-01T00:00:00Z", &ts));
  EXPECT_FALSE(ParseTimestamp("2024-01-01T00:00:00", &ts));  // no zone
  EXPECT_FALSE(ParseTimestamp("2024-01-01T00:00:00Zjunk", &ts));
  EXPECT_FALSE(ParseTimestamp("2024-01-01T00:00:00.Z", &ts));
}

TEST(TimeTest, RoundTripsAcrossCenturies) {
  for (TimestampMs ts : {-62135596800000LL, -1234567LL, 0LL, 951782400000LL, 4102444800123LL}) {
    TimestampMs back = 0;
    ASSERT_TRUE(ParseTimestamp(FormatTimestamp(ts), &back)) << ts;
    EXPECT_EQ(back, ts);
  }
}

TEST(TimeTest, FormatsExtremeTimestampsWithoutOverflow) {
  // Far outside RFC 3339's year range, but must not overflow (UBSan) or crash.
  EXPECT_FALSE(FormatTimestamp(std::numeric_limits<int64_t>::min()).empty());
  EXPECT_FALSE(FormatTimestamp(std::numeric_limits<int64_t>::max()).empty());
  EXPECT_EQ(FormatTimestamp(-86400000), "1969-12-31T00:00:00.000Z");
}

TEST(TimeTest, ParsesDurationsWithUnitsGroupsAndBareMilliseconds) {
  DurationMs d = 0;
  ASSERT_TRUE(ParseDuration("250ms", &d));
  EXPECT_EQ(d, 250);
  ASSERT_TRUE(ParseDuration("5m", &d));  // minutes, not "5" + "m"s
  EXPECT_EQ(d, 300000);
  ASSERT_TRUE(ParseDuration("1h30m", &d));
  EXPECT_EQ(d, 5400000);
  ASSERT_TRUE(ParseDuration("1s500ms", &d));
  EXPECT_EQ(d, 1500);
  ASSERT_TRUE(ParseDuration("2d", &d));
  EXPECT_EQ(d, 172800000);
  ASSERT_TRUE(ParseDuration("-10s", &d));
  EXPECT_EQ(d, -10000);
}

TEST(TimeTest, RejectsMalformedDurations) {
  DurationMs d = 0;
  for (const char* bad : {"", "-", "s", "5000", "5x", "1h30", "5 s", "ms", "99999999999999999999ms",
                          "9223372036854775807d", "1.5s"}) {
    EXPECT_FALSE(ParseDuration(bad, &d)) << bad;
  }
}

TEST(TimeTest, AlignedStartRoundsTowardNegativeInfinity) {
  EXPECT_EQ(AlignedStart(59999, 60000), 0);
  EXPECT_EQ(AlignedStart(60000, 60000), 60000);
  EXPECT_EQ(AlignedStart(-1, 60000), -60000);
}

}  // namespace
}  // namespace flow::rt
