#include "flow/runtime/common/json_escape.h"

#include <gtest/gtest.h>

#include <string>

namespace flow::rt {
namespace {

TEST(JsonEscape, PlainTextIsQuotedOnly) {
  EXPECT_EQ(JsonQuoted(""), "\"\"");
  EXPECT_EQ(JsonQuoted("hello, world / {}[]:"), "\"hello, world / {}[]:\"");
}

TEST(JsonEscape, QuotesBackslashesAndEveryControlByte) {
  std::string all;
  for (int c = 0; c < 0x20; ++c) all.push_back(static_cast<char>(c));
  all += "\"\\";
  EXPECT_EQ(JsonQuoted(all),
            "\"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n\\u000b\\f\\r"
            "\\u000e\\u000f\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018\\u0019"
            "\\u001a\\u001b\\u001c\\u001d\\u001e\\u001f\\\"\\\\\"");
}

TEST(JsonEscape, DelIsEscapedOnlyWhenAsked) {
  EXPECT_EQ(JsonQuoted("a\x7f"
                       "b"),
            "\"a\x7f"
            "b\"");
  EXPECT_EQ(JsonQuoted("a\x7f"
                       "b",
                       JsonControls::kAlsoDel),
            "\"a\\u007fb\"");
  // The other rules are the same in both modes.
  EXPECT_EQ(JsonQuoted("\"\n\x01", JsonControls::kAlsoDel), "\"\\\"\\n\\u0001\"");
}

TEST(JsonEscape, ValidUtf8PassesThrough) {
  EXPECT_EQ(JsonQuoted("h\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \xF4\x8F\xBF\xBF"),
            "\"h\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \xF4\x8F\xBF\xBF\"");
}

TEST(JsonEscape, EachInvalidByteBecomesOneReplacementCharacter) {
  const std::string kFffd = "\xEF\xBF\xBD";
  EXPECT_EQ(JsonQuoted("a\x80"
                       "b"),
            "\"a" + kFffd + "b\"");                                            // stray byte
  EXPECT_EQ(JsonQuoted("b\xE2\x82"), "\"b" + kFffd + kFffd + "\"");            // truncated
  EXPECT_EQ(JsonQuoted("\xC0\xAF"), "\"" + kFffd + kFffd + "\"");              // overlong
  EXPECT_EQ(JsonQuoted("\xED\xA0\x80"), "\"" + kFffd + kFffd + kFffd + "\"");  // surrogate
  EXPECT_EQ(JsonQuoted("\xF4\x90\x80\x80"), "\"" + kFffd + kFffd + kFffd + kFffd + "\"");
  EXPECT_EQ(JsonQuoted("\xE9t\xE9"), "\"" + kFffd + "t" + kFffd + "\"");  // Latin-1
}

TEST(JsonEscape, AppendsAfterWhatIsThere) {
  std::string out = "{\"k\":";
  AppendJsonString("v\t", &out);
  out += "}";
  EXPECT_EQ(out, "{\"k\":\"v\\t\"}");
}

}  // namespace
}  // namespace flow::rt
