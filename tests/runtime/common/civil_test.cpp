#include "flow/runtime/common/civil.h"

#include <gtest/gtest.h>

namespace flow::rt {
namespace {

void ExpectDate(int64_t days, int64_t year, unsigned month, unsigned day) {
  const CivilDate c = CivilFromDays(days);
  EXPECT_EQ(c.year, year) << days;
  EXPECT_EQ(c.month, month) << days;
  EXPECT_EQ(c.day, day) << days;
  EXPECT_EQ(DaysFromCivil(year, month, day), days) << year << "-" << month << "-" << day;
}

TEST(Civil, KnownDates) {
  ExpectDate(0, 1970, 1, 1);
  ExpectDate(19782, 2024, 2, 29);  // a leap day
  ExpectDate(19783, 2024, 3, 1);
  ExpectDate(11016, 2000, 2, 29);  // 2000 is divisible by 400: leap
  ExpectDate(-25508, 1900, 3, 1);  // 1900 is divisible by 100: 1900-02-28 is the day before
  ExpectDate(-25509, 1900, 2, 28);
  ExpectDate(2932896, 9999, 12, 31);
}

TEST(Civil, DatesBefore1970) {
  ExpectDate(-1, 1969, 12, 31);
  ExpectDate(-365, 1969, 1, 1);
  ExpectDate(-719162, 1, 1, 1);    // 0001-01-01
  ExpectDate(-719163, 0, 12, 31);  // year 0 (1 BC) is a leap year
  ExpectDate(-719468, 0, 3, 1);    // the algorithm's era start
  ExpectDate(-719469, 0, 2, 29);
  ExpectDate(-719529, -1, 12, 31);
}

TEST(Civil, RoundTripsEveryDayOverFiveCenturies) {
  for (int64_t d = -200000; d <= 20000; ++d) {
    const CivilDate c = CivilFromDays(d);
    ASSERT_GE(c.month, 1u);
    ASSERT_LE(c.month, 12u);
    ASSERT_GE(c.day, 1u);
    ASSERT_LE(c.day, DaysInMonth(c.year, c.month)) << d;
    ASSERT_EQ(DaysFromCivil(c.year, c.month, c.day), d);
    // Consecutive days are consecutive dates.
    const CivilDate next = CivilFromDays(d + 1);
    if (c.day < DaysInMonth(c.year, c.month)) {
      ASSERT_EQ(next.day, c.day + 1) << d;
    } else {
      ASSERT_EQ(next.day, 1u) << d;
    }
  }
}

TEST(Civil, LeapYearsAndMonthLengths) {
  EXPECT_TRUE(IsLeapYear(2024));
  EXPECT_TRUE(IsLeapYear(2000));
  EXPECT_TRUE(IsLeapYear(0));
  EXPECT_TRUE(IsLeapYear(-4));
  EXPECT_FALSE(IsLeapYear(2023));
  EXPECT_FALSE(IsLeapYear(1900));
  EXPECT_FALSE(IsLeapYear(2100));
  EXPECT_FALSE(IsLeapYear(-100));
  EXPECT_EQ(DaysInMonth(2024, 2), 29u);
  EXPECT_EQ(DaysInMonth(2023, 2), 28u);
  EXPECT_EQ(DaysInMonth(1900, 2), 28u);
  EXPECT_EQ(DaysInMonth(2023, 1), 31u);
  EXPECT_EQ(DaysInMonth(2023, 4), 30u);
  EXPECT_EQ(DaysInMonth(2023, 12), 31u);
  static_assert(DaysFromCivil(1970, 1, 1) == 0, "usable in constant expressions");
}

}  // namespace
}  // namespace flow::rt
