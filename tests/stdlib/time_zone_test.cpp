// The `zone` forms of the time functions (flow/runtime/common/time_zone.h). The reference is the C
// library's own reading of the same zone database (localtime_r and mktime with TZ set), plus
// clock changes written out by hand from the zones' published rules.

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <random>
#include <string>

#include "flow/runtime/common/time_zone.h"
#include "flow/stdlib/scalar.h"
#include "stdlib/registry/registry.h"

namespace flow::fn {
namespace {

// 2026-03-29T01:00:00Z: Europe/Berlin goes from 02:00 CET to 03:00 CEST.
constexpr int64_t kBerlinSpring = 1774746000000;
// 2026-10-25T01:00:00Z: Europe/Berlin goes back from 03:00 CEST to 02:00 CET.
constexpr int64_t kBerlinAutumn = 1792890000000;
constexpr int64_t kHour = 3600000;

class LocalTz {
 public:
  explicit LocalTz(const char* zone) {
    setenv("TZ", zone, 1);
    tzset();
  }
  ~LocalTz() {
    unsetenv("TZ");
    tzset();
  }
};

TEST(TimeZones, PartsMatchTheCLibraryInZonesWithDaylightSavingAndOddOffsets) {
  // Lord Howe moves its clocks by 30 minutes; Kolkata and St. John's are off by half hours.
  for (const char* zone : {"Europe/Berlin", "America/New_York", "Asia/Kolkata",
                           "Australia/Lord_Howe", "America/St_Johns", "UTC"}) {
    LocalTz tz(zone);
    std::mt19937_64 rng(11);
    std::uniform_int_distribution<int64_t> dist(157766400000, 2114380800000);  // 1975..2037
    for (int i = 0; i < 5000; ++i) {
      int64_t ts = dist(rng);
      time_t secs = static_cast<time_t>(ts / 1000);
      std::tm tm{};
      ASSERT_NE(localtime_r(&secs, &tm), nullptr);
      std::string z = zone;
      ASSERT_EQ(Year(ts, z), tm.tm_year + 1900) << zone << " " << ts;
      ASSERT_EQ(Month(ts, z), tm.tm_mon + 1) << zone << " " << ts;
      ASSERT_EQ(Day(ts, z), tm.tm_mday) << zone << " " << ts;
      ASSERT_EQ(Hour(ts, z), tm.tm_hour) << zone << " " << ts;
      ASSERT_EQ(Minute(ts, z), tm.tm_min) << zone << " " << ts;
      ASSERT_EQ(DayOfWeek(ts, z), tm.tm_wday == 0 ? 7 : tm.tm_wday) << zone << " " << ts;
      // The start of the local day: mktime of local midnight, where midnight is shown exactly
      // once. Not in Lord Howe, and not in St. John's, which changed clocks at 00:01 until 2011,
      // so that some midnights were shown twice (we take the earlier; mktime here the later).
      if (std::string(zone) != "Australia/Lord_Howe" && std::string(zone) != "America/St_Johns") {
        std::tm midnight = tm;
        midnight.tm_hour = midnight.tm_min = midnight.tm_sec = 0;
        midnight.tm_isdst = -1;
        ASSERT_EQ(DateTrunc(std::string("day"), ts, z),
                  static_cast<int64_t>(mktime(&midnight)) * 1000)
            << zone << " " << ts;
      }
    }
  }
}

TEST(TimeZones, ClockChangesInBerlin) {
  const std::string berlin = "Europe/Berlin";
  EXPECT_EQ(Hour(kBerlinSpring - 1, berlin), 1);  // 01:59:59.999 CET
  EXPECT_EQ(Hour(kBerlinSpring, berlin), 3);      // 03:00 CEST
  EXPECT_EQ(FormatTimestamp(kBerlinAutumn - 1, std::string("%H:%M:%S.%L"), berlin), "02:59:59.999");
  EXPECT_EQ(FormatTimestamp(kBerlinAutumn, std::string("%Y-%m-%d %H:%M"), berlin),
            "2026-10-25 02:00");
  // The spring day has 23 hours: it starts at 23:00Z the day before and the next at 22:00Z.
  EXPECT_EQ(DateTrunc(std::string("day"), kBerlinSpring + 10 * kHour, berlin),
            kBerlinSpring - 2 * kHour);
  EXPECT_EQ(DateTrunc(std::string("day"), kBerlinSpring + 22 * kHour, berlin),
            kBerlinSpring + 21 * kHour);
  EXPECT_EQ(DateTrunc(std::string("month"), kBerlinSpring, berlin),
            1772319600000);  // 2026-02-28T23:00Z
  // Asia/Kolkata is UTC+05:30: 00:10Z is 05:40 local; its hour began at 23:30Z the day before.
  EXPECT_EQ(DateTrunc(std::string("hour"), 1767226200000, std::string("Asia/Kolkata")),
            1767223800000);
}

TEST(TimeZones, WallClockTextsWithoutAnOffsetAreReadInTheZone) {
  const std::string berlin = "Europe/Berlin";
  // 02:30 on the autumn day is shown twice: the earlier (CEST) instant, 00:30Z.
  EXPECT_EQ(ParseTimestamp(std::string("2026-10-25T02:30:00"), berlin), kBerlinAutumn - kHour / 2);
  // 02:30 on the spring day is never shown: the instant of the change.
  EXPECT_EQ(ParseTimestamp(std::string("2026-03-29T02:30:00"), berlin), kBerlinSpring);
  EXPECT_EQ(ParseTimestamp(std::string("2026-07-01T12:00:00.250"), berlin),
            1782900000250);  // 10:00:00.250Z
  // A text with its own offset keeps it.
  EXPECT_EQ(ParseTimestamp(std::string("2026-07-01T12:00:00Z"), berlin), 1782907200000);
  EXPECT_EQ(ParseTimestamp(std::string("not a time"), berlin), std::nullopt);
}

TEST(TimeZones, UnknownZonesAreUtcAndRefusedAsLiterals) {
  EXPECT_FALSE(rt::IsTimeZone("Mars/Olympus_Mons"));
  EXPECT_TRUE(rt::IsTimeZone("UTC"));
  EXPECT_EQ(Hour(kBerlinSpring, std::string("Mars/Olympus_Mons")), Hour(kBerlinSpring));
  const stdlib::FunctionSpec* year = stdlib::FindFunction("year");
  ASSERT_NE(year, nullptr);
  EXPECT_EQ(stdlib::CheckLiteralArgument(*year, 1, "Europe/Berlin"), "");
  EXPECT_EQ(
      stdlib::CheckLiteralArgument(*year, 1, "Europe/Berln"),
      "unknown time zone 'Europe/Berln' in `year`; use an IANA name such as \"Europe/Berlin\", "
      "\"America/New_York\" or \"UTC\"");
}

}  // namespace
}  // namespace flow::fn
