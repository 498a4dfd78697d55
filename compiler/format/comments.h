#pragma once
// Internal to flow::format: the comments of a script. They are not in the AST, so they are found
// by a small scan of the source (the script has already parsed, so strings and comments are
// well formed) and placed by byte offset next to the nodes the printer emits.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace flow::format {

struct Comment {
  uint32_t begin = 0;         // byte offset of `//` or `/*`
  uint32_t end = 0;           // one past the comment (a line comment stops before its line break)
  std::string text;           // as written; trailing blanks of line comments removed
  bool block = false;         // `/* ... */`
  bool own_line = false;      // nothing but blanks before it on its line
  bool code_after = false;    // block comments: code or a block comment follows on its line
  bool blank_before = false;  // an empty line separates it from what precedes it
};

// Every comment of `source`, in order.
std::vector<Comment> ScanComments(std::string_view source);

// True when the blanks just before `offset` contain an empty line (two or more line breaks).
bool BlankLineBefore(std::string_view source, uint32_t offset);

}  // namespace flow::format
