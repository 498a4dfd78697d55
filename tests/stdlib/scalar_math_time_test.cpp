#include <gtest/gtest.h>

#include <ctime>
#include <random>

#include "flow/stdlib/scalar.h"

namespace flow::fn {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

TEST(StdlibMath, AbsSignFloorCeil) {
  EXPECT_EQ(Abs(int64_t{-5}), 5);
  EXPECT_EQ(Abs(kMin), kMin);  // documented: wraps
  EXPECT_EQ(Abs(-2.5), 2.5);
  EXPECT_EQ(Sign(int64_t{-9}), -1);
  EXPECT_EQ(Sign(0.0), 0);
  EXPECT_EQ(Sign(std::numeric_limits<double>::quiet_NaN()), 0);
  EXPECT_EQ(Sign(3.5), 1);
  EXPECT_EQ(Floor(-2.5), -3.0);
  EXPECT_EQ(Ceil(-2.5), -2.0);
  EXPECT_EQ(Floor(int64_t{7}), 7);
  static_assert(std::is_same_v<decltype(Floor(int64_t{7})), int64_t>);
}

TEST(StdlibMath, RoundHalfAwayFromZero) {
  EXPECT_EQ(Round(2.5), 3.0);
  EXPECT_EQ(Round(-2.5), -3.0);
  EXPECT_EQ(Round(1.2345, int64_t{2}), 1.23);
  EXPECT_EQ(Round(1234.5, int64_t{-2}), 1200.0);
  EXPECT_EQ(Round(int64_t{1250}, int64_t{-2}), 1300);
  EXPECT_EQ(Round(int64_t{-1250}, int64_t{-2}), -1300);
  EXPECT_EQ(Round(int64_t{1249}, int64_t{-2}), 1200);
  EXPECT_EQ(Round(int64_t{17}, int64_t{3}), 17);
  EXPECT_EQ(Round(int64_t{17}, int64_t{-40}), 0);
  EXPECT_EQ(Round(kMax, int64_t{-1}), 9223372036854775800);  // no overflow
  EXPECT_EQ(Round(1e300, int64_t{20}), 1e300);
}

TEST(StdlibMath, ModAndDivisionByZero) {
  EXPECT_EQ(Mod(int64_t{7}, int64_t{3}), 1);
  EXPECT_EQ(Mod(int64_t{-7}, int64_t{3}), -1);  // sign of the dividend
  EXPECT_EQ(Mod(int64_t{7}, int64_t{0}), 0);    // documented
  EXPECT_EQ(Mod(kMin, int64_t{-1}), 0);         // no overflow trap
  EXPECT_DOUBLE_EQ(Mod(7.5, 2.0), 1.5);
  EXPECT_DOUBLE_EQ(Mod(int64_t{7}, 2.5), 2.0);
  EXPECT_TRUE(std::isnan(Mod(1.0, 0.0)));
}

TEST(StdlibMath, Transcendental) {
  EXPECT_DOUBLE_EQ(Sqrt(int64_t{16}), 4.0);
  EXPECT_TRUE(std::isnan(Sqrt(-1.0)));
  EXPECT_DOUBLE_EQ(Pow(int64_t{2}, int64_t{10}), 1024.0);
  EXPECT_DOUBLE_EQ(Ln(std::exp(1.0)), 1.0);
  EXPECT_EQ(Ln(0.0), -std::numeric_limits<double>::infinity());
  EXPECT_DOUBLE_EQ(Log10(1000.0), 3.0);
  EXPECT_DOUBLE_EQ(Exp(0.0), 1.0);
}

TEST(StdlibMath, GreatestLeast) {
  EXPECT_EQ(Greatest(int64_t{3}, int64_t{9}, int64_t{-1}), 9);
  EXPECT_EQ(Least(int64_t{3}, int64_t{9}, int64_t{-1}), -1);
  EXPECT_DOUBLE_EQ(Greatest(int64_t{3}, 3.5), 3.5);
  EXPECT_EQ(Greatest(std::string("pear"), std::string("apple")), "pear");
  EXPECT_EQ(Least(int64_t{4}), 4);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(std::isnan(Greatest(1.0, nan, 2.0)));
  EXPECT_TRUE(std::isnan(Greatest(nan, 1.0)));
  EXPECT_EQ(Least(nan, 1.0, 2.0), 1.0);
  EXPECT_EQ(Least(1.0, nan), 1.0);
  EXPECT_EQ(Greatest(int64_t{1}, std::optional<int64_t>()), std::optional<int64_t>());
  EXPECT_EQ(Least(std::optional<int64_t>(2), int64_t{5}), std::optional<int64_t>(2));
}

// Independent reference: the C library's UTC calendar.
std::tm Gm(int64_t ms) {
  time_t secs = static_cast<time_t>(ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000));
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return tm;
}

int64_t FromTm(std::tm tm) {
  return static_cast<int64_t>(timegm(&tm)) * 1000;
}

TEST(StdlibTime, PartsMatchTheCLibraryOnRandomTimestamps) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int64_t> dist(-5'000'000'000'000,
                                              5'000'000'000'000);  // ~1811..2128
  for (int i = 0; i < 20000; ++i) {
    int64_t ts = dist(rng);
    std::tm tm = Gm(ts);
    ASSERT_EQ(Year(ts), tm.tm_year + 1900) << ts;
    ASSERT_EQ(Month(ts), tm.tm_mon + 1) << ts;
    ASSERT_EQ(Day(ts), tm.tm_mday) << ts;
    ASSERT_EQ(Hour(ts), tm.tm_hour) << ts;
    ASSERT_EQ(Minute(ts), tm.tm_min) << ts;
    ASSERT_EQ(Second(ts), tm.tm_sec) << ts;
    ASSERT_EQ(DayOfWeek(ts), tm.tm_wday == 0 ? 7 : tm.tm_wday) << ts;

    std::tm t = tm;
    t.tm_sec = 0;
    ASSERT_EQ(DateTrunc(std::string("minute"), ts), FromTm(t)) << ts;
    t.tm_min = 0;
    ASSERT_EQ(DateTrunc(std::string("hour"), ts), FromTm(t)) << ts;
    t.tm_hour = 0;
    ASSERT_EQ(DateTrunc(std::string("day"), ts), FromTm(t)) << ts;
    std::tm w = t;
    w.tm_mday -= (tm.tm_wday + 6) % 7;  // back to Monday; timegm normalises
    ASSERT_EQ(DateTrunc(std::string("week"), ts), FromTm(w)) << ts;
    t.tm_mday = 1;
    ASSERT_EQ(DateTrunc(std::string("month"), ts), FromTm(t)) << ts;
    t.tm_mon = 0;
    ASSERT_EQ(DateTrunc(std::string("year"), ts), FromTm(t)) << ts;
    ASSERT_EQ(DateTrunc(std::string("second"), ts), FromTm(tm)) << ts;
  }
}

TEST(StdlibTime, Conversions) {
  // 2024-02-29T23:59:58.250Z, a leap day.
  int64_t ts = 1709251198250;
  EXPECT_EQ(ToTimestamp(ts), ts);
  EXPECT_EQ(ToMillis(ts), ts);
  EXPECT_EQ(FormatTimestamp(ts, std::string("%Y-%m-%d %H:%M:%S.%L")), "2024-02-29 23:59:58.250");
  EXPECT_EQ(FormatTimestamp(ts, std::string("100%% %Q %")), "100% %Q %");
  EXPECT_EQ(FormatTimestamp(int64_t{-1}, std::string("%Y-%m-%dT%H:%M:%S.%L")),
            "1969-12-31T23:59:59.999");
  EXPECT_EQ(ParseTimestamp(std::string("2024-02-29T23:59:58.25Z")), std::optional<int64_t>(ts));
  EXPECT_EQ(ParseTimestamp(std::string("2024-03-01T01:59:58.250+02:00")),
            std::optional<int64_t>(ts));
  EXPECT_EQ(ParseTimestamp(std::string("yesterday")), std::optional<int64_t>());
  EXPECT_EQ(ParseTimestamp(std::string("")), std::optional<int64_t>());
  EXPECT_EQ(DateTrunc(std::string("fortnight"), ts), ts);  // documented fallback
  EXPECT_EQ(Year(std::optional<int64_t>()), std::optional<int64_t>());
  int64_t before = Now();
  EXPECT_GT(before, 1'700'000'000'000);  // after 2023: a wall clock in ms, not seconds
}

TEST(StdlibTime, ExtremeTimestampsStayInRange) {
  for (int64_t ts : {kMin, kMax, kMin + 1, int64_t{-1}, int64_t{0}}) {
    EXPECT_GE(Month(ts), 1);
    EXPECT_LE(Month(ts), 12);
    EXPECT_GE(Day(ts), 1);
    EXPECT_LE(Day(ts), 31);
    EXPECT_GE(Hour(ts), 0);
    EXPECT_LE(Hour(ts), 23);
    EXPECT_GE(DayOfWeek(ts), 1);
    EXPECT_LE(DayOfWeek(ts), 7);
    for (const char* unit : {"second", "minute", "hour", "day", "week", "month", "year"}) {
      int64_t t = DateTrunc(std::string(unit), ts);
      // Truncation never moves forward; below INT64_MIN it clamps instead of overflowing.
      EXPECT_LE(t, ts) << unit << " " << ts;
    }
    EXPECT_FALSE(FormatTimestamp(ts, std::string("%Y-%m-%d %H:%M:%S.%L")).empty());
  }
  EXPECT_EQ(DateTrunc(std::string("second"), kMin), kMin);
  EXPECT_EQ(Year(kMax), 292278994);  // 292278994-08-17T07:12:55.807Z
  EXPECT_EQ(Month(kMax), 8);
  EXPECT_EQ(Day(kMax), 17);
}

}  // namespace
}  // namespace flow::fn
