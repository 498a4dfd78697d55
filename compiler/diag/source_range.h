#pragma once
// flow::diag::SourceRange: where a piece of syntax came from. Offsets are byte offsets into the
// file's text (begin inclusive, end exclusive); line and col (1-based, col counted in Unicode code
// points) locate `begin` so consumers need not re-scan the text.

#include <cstdint>

namespace flow::diag {

struct SourceRange {
  uint32_t file = 0;   // SourceManager file id
  uint32_t begin = 0;  // byte offset, inclusive
  uint32_t end = 0;    // byte offset, exclusive
  uint32_t line = 0;   // 1-based line of `begin`; 0 means "no location"
  uint32_t col = 0;    // 1-based column of `begin` in code points

  bool valid() const { return line != 0; }
};

}  // namespace flow::diag
