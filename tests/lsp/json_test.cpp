#include "lsp/json.h"

#include <gtest/gtest.h>

namespace flow::lsp {
namespace {

Json MustParse(std::string_view text) {
  JsonParseResult r = ParseJson(text);
  EXPECT_TRUE(r.value.has_value()) << text << ": " << r.error;
  return r.value ? *r.value : Json();
}

TEST(LspJson, ParsesRequestShape) {
  Json j =
      MustParse(R"({"jsonrpc":"2.0","id":7,"method":"x","params":{"a":[1,2.5,true,null,"s"]}})");
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(*j.GetString("method"), "x");
  EXPECT_EQ(j.GetInt("id"), 7);
  const Json* a = j.GetObject("params")->GetArray("a");
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->as_array().size(), 5u);
  EXPECT_TRUE(a->as_array()[0].is_int());
  EXPECT_DOUBLE_EQ(a->as_array()[1].as_double(), 2.5);
  EXPECT_TRUE(a->as_array()[2].as_bool());
  EXPECT_TRUE(a->as_array()[3].is_null());
  EXPECT_EQ(a->as_array()[4].as_string(), "s");
}

TEST(LspJson, LargeIntegerIdsStayExact) {
  // 2^53 + 1 is not representable as a double; ids must be echoed exactly.
  Json j = MustParse(R"({"id":9007199254740993})");
  EXPECT_EQ(WriteJson(j), R"({"id":9007199254740993})");
}

TEST(LspJson, DecodesEscapesAndSurrogatePairs) {
  Json j = MustParse(R"("a\"b\\c\/d\n\t\u00e9\ud83d\ude00")");
  EXPECT_EQ(j.as_string(), "a\"b\\c/d\n\t\xC3\xA9\xF0\x9F\x98\x80");
  // A lone surrogate becomes U+FFFD instead of invalid UTF-8.
  EXPECT_EQ(MustParse(R"("x\ud800y")").as_string(), "x\xEF\xBF\xBDy");
  EXPECT_EQ(MustParse(R"("\udc00")").as_string(), "\xEF\xBF\xBD");
}

TEST(LspJson, RejectsMalformedInputWithAPosition) {
  for (std::string_view bad : {"", "{", "{\"a\" 1}", "[1,]", "{\"a\":1,}", "01", "1.", "tru",
                               "\"abc", "\"\\x\"", "\"a\nb\"", "{} x", "[1 2]", "-", "\"\\u12\""}) {
    JsonParseResult r = ParseJson(bad);
    EXPECT_FALSE(r.value.has_value()) << "accepted: " << bad;
    EXPECT_NE(r.error.find("at byte"), std::string::npos) << r.error;
  }
}

TEST(LspJson, LimitsNesting) {
  std::string deep(kMaxJsonDepth + 5, '[');
  deep += std::string(kMaxJsonDepth + 5, ']');
  JsonParseResult r = ParseJson(deep);
  EXPECT_FALSE(r.value.has_value());
  EXPECT_NE(r.error.find("nesting"), std::string::npos) << r.error;
  std::string ok(kMaxJsonDepth - 1, '[');
  ok += std::string(kMaxJsonDepth - 1, ']');
  EXPECT_TRUE(ParseJson(ok).value.has_value());
}

TEST(LspJson, WriterEscapesEverythingJsonRequires) {
  Json j = Json::MakeObject();
  j.Set("k\"ey",
        std::string("q\" b\\ nl\n cr\r tab\t nul") + std::string(1, '\0') + "\x01\x1f\x7f");
  EXPECT_EQ(WriteJson(j), R"({"k\"ey":"q\" b\\ nl\n cr\r tab\t nul\u0000\u0001\u001f\u007f"})");
}

TEST(LspJson, WriterReplacesInvalidUtf8) {
  // A stray continuation byte, a truncated sequence, an overlong '/' and a surrogate encoding.
  std::string s =
      "a\x80"
      "b\xE2\x82"
      "c\xC0\xAF"
      "d\xED\xA0\x80"
      "e\xE2\x82\xAC";
  std::string out = WriteJson(Json(s));
  EXPECT_EQ(out,
            "\"a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD\xEF\xBF\xBD"
            "c\xEF\xBF\xBD\xEF\xBF\xBD"
            "d\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"
            "e\xE2\x82\xAC\"");
  // What was written parses back.
  EXPECT_TRUE(ParseJson(out).value.has_value());
}

TEST(LspJson, RoundTripsNestedValues) {
  std::string text = R"({"a":[1,-2,{"b":"c"}],"d":{"e":false,"f":null},"g":0.5})";
  EXPECT_EQ(WriteJson(MustParse(text)), text);
}

TEST(LspJson, IntegralDoublesReadAsIntegers) {
  Json j = MustParse(R"({"line":3.0,"character":1.5})");
  EXPECT_EQ(j.GetInt("line"), 3);
  EXPECT_FALSE(j.GetInt("character").has_value());
}

}  // namespace
}  // namespace flow::lsp
