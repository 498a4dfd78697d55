#include "flow/runtime/common/json_escape.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

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

// The escaper scans 8 bytes at a time: every byte that needs care, at every position of a word
// and across word boundaries, with plain text around it, against the rules spelled out here one
// byte at a time.
TEST(JsonEscape, EveryByteThatNeedsCareIsFoundAtEveryPosition) {
  auto reference = [](const std::string& s, bool del) {
    static const char* kHex = "0123456789abcdef";
    std::string out = "\"";
    for (unsigned char c : s) {
      if (c == '"')
        out += "\\\"";
      else if (c == '\\')
        out += "\\\\";
      else if (c == '\n')
        out += "\\n";
      else if (c == '\t')
        out += "\\t";
      else if (c == '\r')
        out += "\\r";
      else if (c == '\b')
        out += "\\b";
      else if (c == '\f')
        out += "\\f";
      else if (c < 0x20 || (del && c == 0x7F)) {
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 15];
      } else if (c == 0xFF) {
        out += "\xEF\xBF\xBD";  // never valid in UTF-8
      } else {
        out += static_cast<char>(c);
      }
    }
    return out + "\"";
  };
  std::vector<unsigned char> care;
  for (int c = 0; c < 0x20; ++c) care.push_back(static_cast<unsigned char>(c));
  for (int c : {0x22, 0x5C, 0x7F, 0xFF}) care.push_back(static_cast<unsigned char>(c));
  // Plain bytes next to the special ones in value: one below and one above each.
  const std::string plain = "! #[]~ab0123456789xyzAZ";
  for (unsigned char c : care) {
    for (size_t pos = 0; pos < 20; ++pos) {
      for (size_t len : {pos + 1, pos + 3, pos + 9, size_t{24}}) {
        if (len <= pos) continue;
        std::string s;
        for (size_t i = 0; i < len; ++i) s.push_back(plain[i % plain.size()]);
        s[pos] = static_cast<char>(c);
        for (JsonControls mode : {JsonControls::kRequired, JsonControls::kAlsoDel}) {
          ASSERT_EQ(JsonQuoted(s, mode), reference(s, mode == JsonControls::kAlsoDel))
              << "byte " << int{c} << " at " << pos << " of " << len;
        }
      }
    }
  }
  // Two special bytes in one word, and a valid multi-byte sequence across a word boundary.
  EXPECT_EQ(JsonQuoted("abcdef\"\\ghijklmn"), "\"abcdef\\\"\\\\ghijklmn\"");
  EXPECT_EQ(JsonQuoted("abcdefg\xC3\xA9hijklmnop\x01"), "\"abcdefg\xC3\xA9hijklmnop\\u0001\"");
}

}  // namespace
}  // namespace flow::rt
