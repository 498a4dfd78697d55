#include <gtest/gtest.h>

#include "flow/stdlib/scalar.h"

namespace flow::fn {
namespace {

using OptS = std::optional<std::string>;
using OptI = std::optional<int64_t>;

// "é" is 2 bytes, "€" is 3 bytes, "😀" is 4 bytes in UTF-8.
const std::string kMixed = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80z";  // aé€😀z

TEST(StdlibString, CaseMappingIsAsciiAndKeepsMultibyteBytes) {
  EXPECT_EQ(Upper(std::string("Hello, World 1")), "HELLO, WORLD 1");
  EXPECT_EQ(Lower(std::string("Hello, World 1")), "hello, world 1");
  EXPECT_EQ(Upper(std::string("")), "");
  // Multibyte characters pass through byte for byte.
  EXPECT_EQ(Upper(kMixed), "A\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80Z");
  EXPECT_EQ(Lower(std::string("\xC3\x89X")), "\xC3\x89x");  // ÉX -> Éx
}

TEST(StdlibString, LengthCountsCodePoints) {
  EXPECT_EQ(Length(std::string("")), 0);
  EXPECT_EQ(Length(std::string("abc")), 3);
  EXPECT_EQ(Length(kMixed), 5);
  // A stray continuation byte is one character, not an error.
  EXPECT_EQ(Length(std::string("\x80"
                               "a")),
            2);
}

TEST(StdlibString, Trim) {
  EXPECT_EQ(Trim(std::string(" \t a b \n")), "a b");
  EXPECT_EQ(Ltrim(std::string("  a b  ")), "a b  ");
  EXPECT_EQ(Rtrim(std::string("  a b  ")), "  a b");
  EXPECT_EQ(Trim(std::string("   ")), "");
  EXPECT_EQ(Trim(std::string("")), "");
}

TEST(StdlibString, SubstrIsOneBasedWithSqlClipping) {
  std::string s = "hello";
  EXPECT_EQ(Substr(s, int64_t{1}), "hello");
  EXPECT_EQ(Substr(s, int64_t{2}, int64_t{3}), "ell");
  EXPECT_EQ(Substr(s, int64_t{4}, int64_t{100}), "lo");
  EXPECT_EQ(Substr(s, int64_t{6}), "");
  EXPECT_EQ(Substr(s, int64_t{100}, int64_t{2}), "");
  // Window [0, 2) clipped to [1, 5]: one character (as in PostgreSQL).
  EXPECT_EQ(Substr(s, int64_t{0}, int64_t{2}), "h");
  EXPECT_EQ(Substr(s, int64_t{-3}, int64_t{5}), "h");
  EXPECT_EQ(Substr(s, int64_t{-3}), "hello");
  EXPECT_EQ(Substr(s, int64_t{2}, int64_t{-1}), "");
  EXPECT_EQ(Substr(s, int64_t{2}, std::numeric_limits<int64_t>::max()), "ello");
  EXPECT_EQ(Substr(std::string(""), int64_t{1}, int64_t{1}), "");
  // Positions count characters, so a multibyte character is never cut.
  EXPECT_EQ(Substr(kMixed, int64_t{2}, int64_t{2}), "\xC3\xA9\xE2\x82\xAC");
  EXPECT_EQ(Substr(kMixed, int64_t{4}), "\xF0\x9F\x98\x80z");
}

TEST(StdlibString, ConcatReplaceAndPredicates) {
  EXPECT_EQ(Concat(std::string("a"), std::string(""), std::string("bc")), "abc");
  EXPECT_EQ(Concat(std::string("x")), "x");
  EXPECT_EQ(Replace(std::string("a.b.c"), std::string("."), std::string("::")), "a::b::c");
  EXPECT_EQ(Replace(std::string("aaa"), std::string("aa"), std::string("b")), "ba");
  EXPECT_EQ(Replace(std::string("abc"), std::string(""), std::string("x")), "abc");
  EXPECT_TRUE(StartsWith(std::string("https://x"), std::string("https://")));
  EXPECT_FALSE(StartsWith(std::string("http"), std::string("https")));
  EXPECT_TRUE(EndsWith(std::string("a.json"), std::string(".json")));
  EXPECT_TRUE(Contains(std::string("googlebot/2"), std::string("bot")));
  EXPECT_TRUE(Contains(std::string("abc"), std::string("")));
  EXPECT_FALSE(Contains(std::string(""), std::string("a")));
}

TEST(StdlibString, Split) {
  using V = std::vector<std::string>;
  EXPECT_EQ(Split(std::string("a,b,,c"), std::string(",")), (V{"a", "b", "", "c"}));
  EXPECT_EQ(Split(std::string(",a,"), std::string(",")), (V{"", "a", ""}));
  EXPECT_EQ(Split(std::string("abc"), std::string("::")), (V{"abc"}));
  EXPECT_EQ(Split(std::string(""), std::string(",")), V{});
  EXPECT_EQ(Split(kMixed, std::string("")),
            (V{"a", "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80", "z"}));
}

TEST(StdlibString, PadAndReverse) {
  EXPECT_EQ(Lpad(std::string("7"), int64_t{3}, std::string("0")), "007");
  EXPECT_EQ(Lpad(std::string("hi"), int64_t{5}, std::string("xy")), "xyxhi");
  EXPECT_EQ(Rpad(std::string("hi"), int64_t{4}), "hi  ");
  EXPECT_EQ(Lpad(std::string("hello"), int64_t{2}), "he");
  EXPECT_EQ(Lpad(std::string("hi"), int64_t{-1}), "");
  EXPECT_EQ(Rpad(std::string("hi"), int64_t{5}, std::string("")), "hi");
  EXPECT_EQ(Rpad(std::string("\xC3\xA9"), int64_t{3}, std::string("\xE2\x82\xAC")),
            "\xC3\xA9\xE2\x82\xAC\xE2\x82\xAC");
  // A huge length is capped instead of exhausting memory.
  EXPECT_EQ(Lpad(std::string("x"), std::numeric_limits<int64_t>::max()).size(), size_t{1} << 20);
  EXPECT_EQ(Reverse(std::string("abc")), "cba");
  EXPECT_EQ(Reverse(std::string("")), "");
  EXPECT_EQ(Reverse(kMixed),
            "z\xF0\x9F\x98\x80\xE2\x82\xAC\xC3\xA9"
            "a");
}

TEST(StdlibString, RegularExpressions) {
  EXPECT_TRUE(RegexpLike(std::string("/api/v2/users"), std::string("^/api/v[0-9]+/")));
  EXPECT_FALSE(RegexpLike(std::string("/web/v2"), std::string("^/api/")));
  EXPECT_EQ(RegexpExtract(std::string("x?id=42&y"), std::string("id=([0-9]+)"), int64_t{1}),
            OptS("42"));
  EXPECT_EQ(RegexpExtract(std::string("x?id=42&y"), std::string("id=[0-9]+")), OptS("id=42"));
  EXPECT_EQ(RegexpExtract(std::string("nothing"), std::string("id=([0-9]+)"), int64_t{1}), OptS());
  EXPECT_EQ(RegexpExtract(std::string("id=1"), std::string("id=([0-9]+)"), int64_t{2}), OptS());
  EXPECT_EQ(RegexpExtract(std::string("ab"), std::string("a|(c)"), int64_t{1}), OptS());
  // Invalid patterns match nothing rather than failing.
  EXPECT_FALSE(RegexpLike(std::string("a[b"), std::string("a[b")));
  EXPECT_EQ(RegexpExtract(std::string("a"), std::string("(")), OptS());
  CachedRegex bad("(");
  EXPECT_FALSE(bad.error().empty());
  // Text after a NUL byte is still searched.
  EXPECT_TRUE(RegexpLike(std::string("a\0b", 3), std::string("b$")));
  // A long input does not exhaust the stack.
  EXPECT_TRUE(RegexpLike(std::string(1'000'000, 'a') + "b", std::string("^a*b$")));
  // Many distinct patterns stay correct across cache evictions.
  for (int i = 0; i < 200; ++i) {
    std::string n = std::to_string(i);
    EXPECT_TRUE(RegexpLike(std::string("k").append(n), std::string("^k").append(n).append("$")));
  }
}

TEST(StdlibString, ToStringAndParse) {
  EXPECT_EQ(ToString(int64_t{-42}), "-42");
  EXPECT_EQ(ToString(true), "true");
  EXPECT_EQ(ToString(2.5), "2.5");
  EXPECT_EQ(ToString(3.0), "3.0");
  EXPECT_EQ(ToString(0.1), "0.1");
  EXPECT_EQ(ToString(std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(ToString(-std::numeric_limits<double>::infinity()), "-Infinity");
  EXPECT_EQ(ToString(std::string("s")), "s");
  EXPECT_EQ(ToString(int64_t{1500}, tag::Duration{}), "1500ms");
  EXPECT_EQ(ToString(int64_t{1764427275123}, tag::Timestamp{}), "2025-11-29T14:41:15.123Z");
  EXPECT_EQ(ToString(std::vector<int64_t>{1, 2}), "[1, 2]");
  EXPECT_EQ(ToString(std::vector<std::optional<std::string>>{"a", std::nullopt}), "[a, null]");

  EXPECT_EQ(ParseInt(std::string(" 42 ")), OptI(42));
  EXPECT_EQ(ParseInt(std::string("-7")), OptI(-7));
  EXPECT_EQ(ParseInt(std::string("+7")), OptI(7));
  EXPECT_EQ(ParseInt(std::string("9223372036854775807")),
            OptI(std::numeric_limits<int64_t>::max()));
  EXPECT_EQ(ParseInt(std::string("9223372036854775808")), OptI());
  EXPECT_EQ(ParseInt(std::string("12a")), OptI());
  EXPECT_EQ(ParseInt(std::string("")), OptI());
  EXPECT_EQ(ParseInt(std::string("++1")), OptI());
  EXPECT_EQ(ParseFloat(std::string("2.5e3")), std::optional<double>(2500.0));
  EXPECT_EQ(ParseFloat(std::string("x")), std::optional<double>());
  EXPECT_EQ(ParseFloat(std::string("1e999")), std::optional<double>());
}

TEST(StdlibString, NullPropagation) {
  OptS none;
  OptS some = "Ab";
  EXPECT_EQ(Upper(none), OptS());
  EXPECT_EQ(Upper(some), OptS("AB"));
  EXPECT_EQ(Substr(some, std::optional<int64_t>()), OptS());
  EXPECT_EQ(Substr(std::string("abc"), int64_t{2}, std::optional<int64_t>(1)), OptS("b"));
  EXPECT_EQ(Concat(std::string("a"), none, std::string("b")), OptS());
  EXPECT_EQ(Length(none), OptI());
  // A function that may itself return null is not wrapped twice.
  static_assert(std::is_same_v<decltype(ParseInt(some)), OptI>);
  EXPECT_EQ(ParseInt(OptS("5")), OptI(5));
  EXPECT_EQ(ParseInt(none), OptI());
  static_assert(std::is_same_v<decltype(Upper(std::string("x"))), std::string>);
}

}  // namespace
}  // namespace flow::fn
