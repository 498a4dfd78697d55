#include "flow/runtime/common/time.h"

#include <gtest/gtest.h>

#include <limits>
#include <utility>

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

TEST(TimeTest, TimestampSpellingsRfc3339Allows) {
  TimestampMs ts = 0;
  ASSERT_TRUE(ParseTimestamp("2024-01-01t00:00:00z", &ts));  // lowercase separators
  EXPECT_EQ(ts, 1704067200000);
  ASSERT_TRUE(ParseTimestamp("2024-01-01 00:00:00Z", &ts));
  EXPECT_EQ(ts, 1704067200000);
  ASSERT_TRUE(ParseTimestamp("2024-01-01T00:00:00.123456-01:30", &ts));  // digits past ms dropped
  EXPECT_EQ(ts, 1704067200000 + 90 * 60000 + 123);
  ASSERT_TRUE(ParseTimestamp("2016-12-31T23:59:60Z", &ts));  // a leap second: the next minute
  EXPECT_EQ(ts, 1483228800000);
  ASSERT_TRUE(ParseTimestamp("1969-12-31T23:59:59.999Z", &ts));  // before the epoch
  EXPECT_EQ(ts, -1);
  ASSERT_TRUE(ParseTimestamp("0001-01-01T00:00:00Z", &ts));
  EXPECT_EQ(ts, -62135596800000);
}

TEST(TimeTest, TimestampDatesMustExist) {
  TimestampMs ts = 0;
  EXPECT_TRUE(ParseTimestamp("2000-02-29T00:00:00Z", &ts));   // divisible by 400: leap
  EXPECT_FALSE(ParseTimestamp("1900-02-29T00:00:00Z", &ts));  // divisible by 100: not
  EXPECT_FALSE(ParseTimestamp("2023-02-29T00:00:00Z", &ts));
  EXPECT_FALSE(ParseTimestamp("2024-04-31T00:00:00Z", &ts));
  EXPECT_FALSE(ParseTimestamp("2024-01-00T00:00:00Z", &ts));
  EXPECT_FALSE(ParseTimestamp("2024-00-10T00:00:00Z", &ts));
  EXPECT_FALSE(ParseTimestamp("2024-01-01T24:00:00Z", &ts));
  EXPECT_FALSE(ParseTimestamp("2024-01-01T00:60:00Z", &ts));
  EXPECT_FALSE(ParseTimestamp("2024-01-01T00:00:61Z", &ts));
  EXPECT_FALSE(ParseTimestamp("2024-01-01T00:00:00+24:00", &ts));
  EXPECT_FALSE(ParseTimestamp("2024-01-01T00:00:00+0100", &ts));
}

TEST(TimeTest, BareDatesOnlyWhenAsked) {
  TimestampMs ts = 0;
  EXPECT_FALSE(ParseTimestamp("2024-02-29", &ts));
  ASSERT_TRUE(ParseTimestamp("2024-02-29", &ts, TimestampText::kDateTimeOrDate));
  EXPECT_EQ(ts, 1709164800000);
  ASSERT_TRUE(ParseTimestamp("1969-12-31", &ts, TimestampText::kDateTimeOrDate));
  EXPECT_EQ(ts, -86400000);
  ASSERT_TRUE(ParseTimestamp("2024-02-29T01:00:00Z", &ts, TimestampText::kDateTimeOrDate));
  EXPECT_EQ(ts, 1709164800000 + 3600000);
  EXPECT_FALSE(ParseTimestamp("2023-02-29", &ts, TimestampText::kDateTimeOrDate));
  EXPECT_FALSE(ParseTimestamp("2024-02-2", &ts, TimestampText::kDateTimeOrDate));
  EXPECT_FALSE(ParseTimestamp("2024-02-29T", &ts, TimestampText::kDateTimeOrDate));
  EXPECT_FALSE(ParseTimestamp("2024-02-29Z", &ts, TimestampText::kDateTimeOrDate));
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

TEST(TimeTest, EveryDurationUnit) {
  const std::pair<const char*, DurationMs> kUnits[] = {
      {"7ms", 7}, {"7s", 7000}, {"7m", 420000}, {"7h", 25200000}, {"7d", 604800000}};
  for (const auto& [text, ms] : kUnits) {
    DurationMs d = 0;
    ASSERT_TRUE(ParseDuration(text, &d)) << text;
    EXPECT_EQ(d, ms) << text;
  }
  DurationMs d = 0;
  for (const char* bad : {"7w", "7y", "7us", "7M", "7S"})
    EXPECT_FALSE(ParseDuration(bad, &d)) << bad;
}

TEST(TimeTest, DurationSettingsTakePlainMillisecondsAndNeverNegative) {
  DurationMs d = 0;
  EXPECT_TRUE(ParseDurationOrMillis("250ms", &d));
  EXPECT_EQ(d, 250);
  EXPECT_TRUE(ParseDurationOrMillis("5m", &d));
  EXPECT_EQ(d, 300000);
  EXPECT_TRUE(ParseDurationOrMillis("2h", &d));
  EXPECT_EQ(d, 7200000);
  EXPECT_TRUE(ParseDurationOrMillis("1h30m", &d));
  EXPECT_EQ(d, 5400000);
  EXPECT_TRUE(ParseDurationOrMillis("1500", &d));
  EXPECT_EQ(d, 1500);
  EXPECT_TRUE(ParseDurationOrMillis("0", &d));
  EXPECT_EQ(d, 0);
  EXPECT_FALSE(ParseDurationOrMillis("-1s", &d));
  EXPECT_FALSE(ParseDurationOrMillis("-5", &d));
  EXPECT_FALSE(ParseDurationOrMillis("", &d));
  EXPECT_FALSE(ParseDurationOrMillis("s", &d));
  EXPECT_FALSE(ParseDurationOrMillis("1x", &d));
  EXPECT_FALSE(ParseDurationOrMillis("+5", &d));
  EXPECT_FALSE(ParseDurationOrMillis("99999999999999999999", &d));
}

TEST(TimeTest, AlignedStartRoundsTowardNegativeInfinity) {
  EXPECT_EQ(AlignedStart(59999, 60000), 0);
  EXPECT_EQ(AlignedStart(60000, 60000), 60000);
  EXPECT_EQ(AlignedStart(-1, 60000), -60000);
}

}  // namespace
}  // namespace flow::rt
