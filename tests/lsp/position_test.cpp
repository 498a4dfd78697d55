#include "lsp/position.h"

#include <gtest/gtest.h>

namespace flow::lsp {
namespace {

TEST(LspPosition, AsciiLines) {
  std::string text = "ab\ncde\n";
  LineIndex idx(text);
  EXPECT_EQ(idx.line_count(), 3u);
  EXPECT_EQ(idx.ToOffset({0, 0}), 0u);
  EXPECT_EQ(idx.ToOffset({1, 2}), 5u);
  EXPECT_EQ(idx.ToPosition(5), (Position{1, 2}));
  EXPECT_EQ(idx.ToPosition(7), (Position{2, 0}));
}

TEST(LspPosition, Utf16CodeUnits) {
  // "é" is 2 bytes and 1 UTF-16 unit; "😀" (U+1F600) is 4 bytes and 2 units.
  std::string text = "x\xC3\xA9y\xF0\x9F\x98\x80z";
  LineIndex idx(text);
  // Byte offsets: x=0, é=1..2, y=3, 😀=4..7, z=8.
  EXPECT_EQ(idx.ToOffset({0, 1}), 1u);
  EXPECT_EQ(idx.ToOffset({0, 2}), 3u);
  EXPECT_EQ(idx.ToOffset({0, 3}), 4u);
  EXPECT_EQ(idx.ToOffset({0, 5}), 8u);
  EXPECT_EQ(idx.ToPosition(8), (Position{0, 5}));
  EXPECT_EQ(idx.ToPosition(3), (Position{0, 2}));
  // Inside the surrogate pair: the start of the character.
  EXPECT_EQ(idx.ToOffset({0, 4}), 4u);
  // Inside a UTF-8 sequence: counts from the sequence start.
  EXPECT_EQ(idx.ToPosition(2), (Position{0, 1}));
}

TEST(LspPosition, AllThreeLineTerminators) {
  std::string text = "a\r\nbb\rc\nd";
  LineIndex idx(text);
  EXPECT_EQ(idx.line_count(), 4u);
  EXPECT_EQ(idx.ToOffset({1, 0}), 3u);
  EXPECT_EQ(idx.ToOffset({2, 0}), 6u);
  EXPECT_EQ(idx.ToOffset({3, 0}), 8u);
  // A character past the line end clamps before the terminator.
  EXPECT_EQ(idx.ToOffset({0, 9}), 1u);
  EXPECT_EQ(idx.ToOffset({1, 9}), 5u);
  EXPECT_EQ(idx.ToPosition(4), (Position{1, 1}));
}

TEST(LspPosition, ClampsPastTheEnd) {
  std::string text = "ab";
  LineIndex idx(text);
  EXPECT_EQ(idx.ToOffset({5, 0}), 2u);
  EXPECT_EQ(idx.ToPosition(99), (Position{0, 2}));
  LineIndex empty("");
  EXPECT_EQ(empty.ToOffset({0, 3}), 0u);
  EXPECT_EQ(empty.ToPosition(0), (Position{0, 0}));
}

TEST(LspPosition, InvalidUtf8BytesCountOneUnitEach) {
  std::string text = "a\xFF\x80z";
  LineIndex idx(text);
  EXPECT_EQ(idx.ToOffset({0, 3}), 3u);
  EXPECT_EQ(idx.ToPosition(4), (Position{0, 4}));
}

TEST(LspPosition, IncrementalEdits) {
  std::string text = "stream s = x\n  | where \xC3\xA9 > 1\n";
  // Replace the "é" (line 1, characters 10..11) with "amount".
  ApplyEdit(&text, Range{{1, 10}, {1, 11}}, "amount");
  EXPECT_EQ(text, "stream s = x\n  | where amount > 1\n");
  // Insert at the end of the document.
  ApplyEdit(&text, Range{{2, 0}, {2, 0}}, "y");
  EXPECT_EQ(text, "stream s = x\n  | where amount > 1\ny");
  // Delete across lines.
  ApplyEdit(&text, Range{{0, 12}, {1, 2}}, "");
  EXPECT_EQ(text, "stream s = x| where amount > 1\ny");
  // An inverted range inserts at its start.
  ApplyEdit(&text, Range{{0, 1}, {0, 0}}, "!");
  EXPECT_EQ(text, "s!tream s = x| where amount > 1\ny");
}

}  // namespace
}  // namespace flow::lsp
