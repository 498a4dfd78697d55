#include "flow/runtime/common/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace flow::rt {
namespace {

size_t Strict(std::string_view s, size_t i = 0) {
  return Utf8SequenceLength(s, i, Utf8Check::kStrict);
}
size_t Shape(std::string_view s, size_t i = 0) {
  return Utf8SequenceLength(s, i, Utf8Check::kShape);
}

TEST(Utf8, LengthsOfWellFormedSequences) {
  EXPECT_EQ(Strict("a"), 1u);
  EXPECT_EQ(Strict(std::string(1, '\0')), 1u);
  EXPECT_EQ(Strict("\xC3\xA9"), 2u);          // é
  EXPECT_EQ(Strict("\xE2\x82\xAC"), 3u);      // €
  EXPECT_EQ(Strict("\xF0\x9F\x98\x80"), 4u);  // 😀
  EXPECT_EQ(Strict("x\xC3\xA9", 1), 2u);      // at an offset
  // The extremes of each length: U+0080, U+07FF, U+0800, U+FFFF, U+10000, U+10FFFF.
  EXPECT_EQ(Strict("\xC2\x80"), 2u);
  EXPECT_EQ(Strict("\xDF\xBF"), 2u);
  EXPECT_EQ(Strict("\xE0\xA0\x80"), 3u);
  EXPECT_EQ(Strict("\xEF\xBF\xBF"), 3u);
  EXPECT_EQ(Strict("\xF0\x90\x80\x80"), 4u);
  EXPECT_EQ(Strict("\xF4\x8F\xBF\xBF"), 4u);
  // Around the surrogates: U+D7FF and U+E000 are characters.
  EXPECT_EQ(Strict("\xED\x9F\xBF"), 3u);
  EXPECT_EQ(Strict("\xEE\x80\x80"), 3u);
}

TEST(Utf8, MalformedBytesAreNoSequenceInEitherMode) {
  for (auto check : {Utf8Check::kStrict, Utf8Check::kShape}) {
    EXPECT_EQ(Utf8SequenceLength("\x80", 0, check), 0u);  // stray continuation byte
    EXPECT_EQ(Utf8SequenceLength("\xBF"
                                 "a",
                                 0, check),
              0u);
    EXPECT_EQ(Utf8SequenceLength("\xC3", 0, check), 0u);  // truncated at the end
    EXPECT_EQ(Utf8SequenceLength("\xE2\x82", 0, check), 0u);
    EXPECT_EQ(Utf8SequenceLength("\xF0\x9F\x98", 0, check), 0u);
    EXPECT_EQ(Utf8SequenceLength("\xC3"
                                 "a",
                                 0, check),
              0u);  // continuation missing
    EXPECT_EQ(Utf8SequenceLength("\xE2\x82"
                                 "a",
                                 0, check),
              0u);
    EXPECT_EQ(Utf8SequenceLength("\xF8\x88\x80\x80\x80", 0, check), 0u);  // 5-byte lead
    EXPECT_EQ(Utf8SequenceLength("\xFF", 0, check), 0u);
  }
}

TEST(Utf8, StrictRejectsOverlongsSurrogatesAndBeyondU10FFFF) {
  // Overlong '/' in two, three and four bytes; the shape alone accepts them.
  EXPECT_EQ(Strict("\xC0\xAF"), 0u);
  EXPECT_EQ(Shape("\xC0\xAF"), 2u);
  EXPECT_EQ(Strict("\xC1\xBF"), 0u);
  EXPECT_EQ(Strict("\xE0\x80\xAF"), 0u);
  EXPECT_EQ(Shape("\xE0\x80\xAF"), 3u);
  EXPECT_EQ(Strict("\xE0\x9F\xBF"), 0u);  // U+07FF in three bytes
  EXPECT_EQ(Strict("\xF0\x80\x80\xAF"), 0u);
  EXPECT_EQ(Strict("\xF0\x8F\xBF\xBF"), 0u);  // U+FFFF in four bytes
  // UTF-16 surrogates encoded as UTF-8 (CESU-8): U+D800, U+DBFF, U+DC00, U+DFFF.
  EXPECT_EQ(Strict("\xED\xA0\x80"), 0u);
  EXPECT_EQ(Strict("\xED\xAF\xBF"), 0u);
  EXPECT_EQ(Strict("\xED\xB0\x80"), 0u);
  EXPECT_EQ(Strict("\xED\xBF\xBF"), 0u);
  EXPECT_EQ(Shape("\xED\xA0\x80"), 3u);
  // U+110000 and the leads F5-F7 that can only start code points above U+10FFFF.
  EXPECT_EQ(Strict("\xF4\x90\x80\x80"), 0u);
  EXPECT_EQ(Strict("\xF5\x80\x80\x80"), 0u);
  EXPECT_EQ(Strict("\xF7\xBF\xBF\xBF"), 0u);
  EXPECT_EQ(Shape("\xF7\xBF\xBF\xBF"), 4u);
}

TEST(Utf8, WholeTextValidation) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain ascii"));
  EXPECT_TRUE(IsValidUtf8(std::string("nul\0inside", 10)));
  EXPECT_TRUE(IsValidUtf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("caf\xE9"));           // Latin-1
  EXPECT_FALSE(IsValidUtf8("ok\xC3"));            // truncated at the end
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));          // overlong
  EXPECT_FALSE(IsValidUtf8("a\xED\xA0\x80z"));    // surrogate
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));  // above U+10FFFF
}

}  // namespace
}  // namespace flow::rt
