#pragma once
// LSP positions are (line, character) with `character` counted in UTF-16 code units; the compiler
// works in byte offsets into UTF-8 text. LineIndex converts between the two for one text.
//
// Line terminators are "\n", "\r\n" and "\r" (as the protocol defines them). A character past the
// end of its line clamps to the line end, a line past the end clamps to the end of the text, and a
// position inside a surrogate pair (a UTF-16 offset in the middle of a 4-byte character) moves to
// the start of that character. Invalid UTF-8 bytes count as one code unit each.
// Threading: immutable after construction.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace flow::lsp {

struct Position {
  uint32_t line = 0;
  uint32_t character = 0;  // UTF-16 code units
  friend bool operator==(const Position&, const Position&) = default;
};

struct Range {
  Position start;
  Position end;
  friend bool operator==(const Range&, const Range&) = default;
};

class LineIndex {
 public:
  explicit LineIndex(std::string_view text);

  // Byte offset of an LSP position (clamped as described above).
  size_t ToOffset(Position p) const;
  // LSP position of a byte offset (clamped to the text; an offset inside a UTF-8 sequence counts
  // from the start of that sequence).
  Position ToPosition(size_t offset) const;
  size_t line_count() const { return line_starts_.size(); }

 private:
  // Byte offset where line `line`'s content ends (before its terminator).
  size_t LineEnd(size_t line) const;

  std::string_view text_;
  std::vector<size_t> line_starts_;
};

// Replaces the bytes between the offsets of `range` in `*text` with `replacement` (an incremental
// didChange). An inverted range is treated as empty at its start.
void ApplyEdit(std::string* text, const Range& range, std::string_view replacement);

}  // namespace flow::lsp
