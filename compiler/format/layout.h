#pragma once
// Internal to flow::format: turns what the printer emits into lines, and places comments.
//
// The printer emits one logical line at a time (StartLine ... FinishLine): text pieces and soft
// breaks. A soft break prints as one space, or as a line break to its continuation indent when
// the text up to the next break would pass the width limit (greedy fill). Before each piece that
// came from the source the printer calls Anchor(offset); every comment that starts before that
// offset and has not been placed yet is placed there:
//  - a comment with code before it on its source line trails the current line (a line comment
//    then forces a break), or the previous line when the current one is still empty;
//  - a comment on its own line goes on its own line, at the logical line's indent when nothing
//    has been emitted on the logical line yet, else at its continuation indent.
// Measure() renders an emitter flat, without comments, to decide between layouts.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "format/comments.h"
#include "format/format.h"

namespace flow::format {

class Layout {
 public:
  Layout(std::string_view source, std::vector<Comment> comments, const FormatOptions& options);

  // Begins a logical line at `indent`; soft breaks without their own indent and forced breaks
  // continue at `cont_indent`. `blank_before` asks for an empty line above it (never at the top
  // of the output); `top_level` lets comments placed before it keep one empty line above them.
  void StartLine(int indent, int cont_indent, bool blank_before = false, bool top_level = false);
  void Text(std::string_view text);
  // A break opportunity printed as one space; `indent` < 0 means the line's continuation indent.
  // Breaks of a deeper `level` (inside an expression) are only taken when the text up to the next
  // break of an outer level does not fit.
  void Soft(int level = 0, int indent = -1);
  void Anchor(uint32_t offset);
  void FinishLine();
  // Places the remaining comments and returns the whole text (ending in one line break unless
  // empty).
  std::string Finish();

  bool measuring() const { return measuring_; }
  // Width of `emit` rendered on one line without comments; a huge value if it needs a line break.
  // `last_anchor`, when given, receives the largest offset `emit` anchored at: comments before it
  // are placed inside what `emit` prints, later ones after it.
  int Measure(const std::function<void()>& emit, uint32_t* last_anchor = nullptr);
  // Width of the current logical line so far, rendered flat.
  int CurrentWidth() const;
  // True when a comment starts inside [begin, end).
  bool HasCommentIn(uint32_t begin, uint32_t end) const;
  // Width the comments in [begin, end) that will trail the line printed up to `begin` add to it
  // (each with its two spaces): those before the first comment on its own source line.
  int TrailingCommentsWidth(uint32_t begin, uint32_t end) const;
  int indent_unit() const { return options_.indent; }
  int max_width() const { return options_.max_width; }

 private:
  enum class PieceKind { kText, kSoft, kTrailing, kOwnLine };
  struct Piece {
    PieceKind kind;
    std::string text;
    int indent = -1;
    int level = 0;
  };
  struct Line {
    std::string text;                   // with its indentation
    std::string trailing;               // a trailing comment, aligned when the output is joined
    bool ends_in_line_comment = false;  // nothing may be appended to it
  };

  static bool IsVisibleText(const Piece& p);
  static bool IsLineComment(std::string_view comment);
  void PlaceComment(const Comment& c);
  // Index of the first comment starting at or after `offset`.
  size_t FirstCommentFrom(uint32_t offset) const;
  void PushCommentLines(const std::string& text, int indent);
  void PushLine(std::string text, std::string trailing = {});
  void AttachTrailing(const std::string& text, int own_line_indent);

  std::string_view source_;
  std::vector<Comment> comments_;
  size_t next_comment_ = 0;
  FormatOptions options_;

  std::vector<Line> lines_;
  bool in_line_ = false;
  int indent_ = 0, cont_indent_ = 0;
  bool blank_before_ = false, top_level_ = false;
  std::vector<Piece> pieces_;

  bool measuring_ = false;
  std::string measure_text_;
  uint32_t measure_anchor_ = 0;
};

// Display width of UTF-8 text (code points).
int Width(std::string_view text);

}  // namespace flow::format
