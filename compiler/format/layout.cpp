#include "format/layout.h"

#include <algorithm>
#include <limits>

namespace flow::format {

constexpr int kHuge = std::numeric_limits<int>::max() / 4;

int Width(std::string_view text) {
  int n = 0;
  for (char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

Layout::Layout(std::string_view source, std::vector<Comment> comments, const FormatOptions& options)
    : source_(source), comments_(std::move(comments)), options_(options) {}

bool Layout::IsVisibleText(const Piece& p) {
  return p.kind == PieceKind::kText && p.text.find_first_not_of(' ') != std::string::npos;
}

void Layout::StartLine(int indent, int cont_indent, bool blank_before, bool top_level) {
  if (measuring_) {
    measure_text_ += '\n';
    return;
  }
  if (in_line_) FinishLine();
  in_line_ = true;
  indent_ = indent;
  cont_indent_ = cont_indent;
  blank_before_ = blank_before;
  top_level_ = top_level;
  pieces_.clear();
}

void Layout::Text(std::string_view text) {
  if (text.empty()) return;
  if (measuring_) {
    measure_text_ += text;
    return;
  }
  if (!pieces_.empty() && pieces_.back().kind == PieceKind::kText) {
    std::string& last = pieces_.back().text;
    if (!last.empty() && last.back() == ' ' && text.front() == ' ') text.remove_prefix(1);
    last += text;
  } else {
    pieces_.push_back({PieceKind::kText, std::string(text)});
  }
}

void Layout::Soft(int level, int indent) {
  if (measuring_) {
    measure_text_ += ' ';
    return;
  }
  pieces_.push_back({PieceKind::kSoft, "", indent < 0 ? cont_indent_ : indent, level});
}

void Layout::Anchor(uint32_t offset) {
  if (measuring_) {
    measure_anchor_ = std::max(measure_anchor_, offset);
    return;
  }
  while (next_comment_ < comments_.size() && comments_[next_comment_].begin < offset)
    PlaceComment(comments_[next_comment_++]);
}

bool Layout::HasCommentIn(uint32_t begin, uint32_t end) const {
  size_t i = FirstCommentFrom(begin);
  return i < comments_.size() && comments_[i].begin < end;
}

size_t Layout::FirstCommentFrom(uint32_t offset) const {
  return static_cast<size_t>(
      std::lower_bound(comments_.begin(), comments_.end(), offset,
                       [](const Comment& c, uint32_t o) { return c.begin < o; }) -
      comments_.begin());
}

int Layout::TrailingCommentsWidth(uint32_t begin, uint32_t end) const {
  // As PlaceComment does: comments trail the line until one on its own line; later ones trail
  // that one.
  int width = 0;
  for (size_t i = FirstCommentFrom(begin); i < comments_.size() && comments_[i].begin < end; ++i) {
    const Comment& c = comments_[i];
    if (c.own_line) break;
    width += 2 + Width(std::string_view(c.text).substr(0, c.text.find('\n')));
  }
  return width;
}

void Layout::PlaceComment(const Comment& c) {
  bool line_empty = !in_line_ || std::none_of(pieces_.begin(), pieces_.end(), IsVisibleText);
  if (c.block && !line_empty && (!c.own_line || c.code_after)) {
    // `/* ... */` before code stays inline (also when it began a line: the line may have been
    // broken right before it).
    Text(" " + c.text + " ");
    return;
  }
  if (!c.own_line) {
    if (line_empty) {
      AttachTrailing(c.text, in_line_ ? indent_ : 0);
    } else {
      pieces_.push_back({PieceKind::kTrailing, c.text});
    }
    return;
  }
  if (!line_empty) {
    pieces_.push_back({PieceKind::kOwnLine, c.text});
    return;
  }
  // Before the logical line: its own lines at the line's indent.
  bool top = !in_line_ || top_level_;
  if (top && c.blank_before && !lines_.empty() && !lines_.back().text.empty()) PushLine("");
  PushCommentLines(c.text, in_line_ ? indent_ : 0);
}

void Layout::AttachTrailing(const std::string& text, int own_line_indent) {
  if (lines_.empty() || lines_.back().ends_in_line_comment) {
    // Nothing can follow a line comment on its line: this one gets its own line, where a second
    // pass (seeing it alone on its line) puts it too.
    PushCommentLines(text, own_line_indent);
    return;
  }
  Line& last = lines_.back();
  if (last.text.empty() && last.trailing.empty()) {
    last.text = text;
  } else if (last.trailing.empty()) {
    last.trailing = text;
  } else {
    last.trailing += " " + text;
  }
  last.ends_in_line_comment = IsLineComment(text);
}

bool Layout::IsLineComment(std::string_view comment) {
  return comment.substr(0, 2) == "//";
}

void Layout::PushCommentLines(const std::string& text, int indent) {
  // A block comment's later lines are kept exactly as written.
  size_t nl = text.find('\n');
  std::string first = text.substr(0, nl);
  PushLine(std::string(indent, ' ') + first);
  while (nl != std::string::npos) {
    size_t next = text.find('\n', nl + 1);
    std::string line =
        text.substr(nl + 1, next == std::string::npos ? std::string::npos : next - nl - 1);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
      line.pop_back();
    lines_.push_back({line, ""});
    nl = next;
  }
  lines_.back().ends_in_line_comment = IsLineComment(text);
}

void Layout::PushLine(std::string text, std::string trailing) {
  while (!text.empty() && (text.back() == ' ' || text.back() == '\r' || text.back() == '\t'))
    text.pop_back();
  bool line_comment = IsLineComment(trailing);
  lines_.push_back({std::move(text), std::move(trailing), line_comment});
}

void Layout::FinishLine() {
  if (measuring_ || !in_line_) return;
  in_line_ = false;
  bool any_text = std::any_of(pieces_.begin(), pieces_.end(), IsVisibleText);
  if (!any_text) {
    for (const Piece& p : pieces_) {
      if (p.kind == PieceKind::kTrailing) AttachTrailing(p.text, indent_);
      if (p.kind == PieceKind::kOwnLine) PushCommentLines(p.text, indent_);
    }
    pieces_.clear();
    return;
  }
  if (blank_before_ && !lines_.empty() && !lines_.back().text.empty()) PushLine("");
  std::string cur(indent_, ' ');
  bool has_content = false;
  auto fresh = [&](int indent) {
    cur.assign(indent, ' ');
    has_content = false;
  };
  for (size_t k = 0; k < pieces_.size(); ++k) {
    const Piece& p = pieces_[k];
    switch (p.kind) {
      case PieceKind::kText: {
        std::string_view t = p.text;
        if (!has_content) {
          size_t s = t.find_first_not_of(' ');
          t = s == std::string_view::npos ? std::string_view() : t.substr(s);
        } else if (!cur.empty() && cur.back() == ' ' && !t.empty() && t.front() == ' ') {
          t.remove_prefix(1);
        }
        if (t.empty()) break;
        cur += t;
        has_content = true;
        break;
      }
      case PieceKind::kSoft: {
        if (!has_content) break;
        // The text up to the next break of the same or an outer level must fit.
        int chunk = 0;
        for (size_t j = k + 1; j < pieces_.size(); ++j) {
          const Piece& q = pieces_[j];
          if (q.kind == PieceKind::kText) {
            chunk += Width(q.text);
          } else if (q.kind == PieceKind::kSoft && q.level > p.level) {
            chunk += 1;
          } else {
            break;
          }
        }
        if (Width(cur) + 1 + chunk > options_.max_width) {
          PushLine(cur);
          fresh(p.indent);
        } else if (cur.back() != ' ') {
          cur += ' ';
        }
        break;
      }
      case PieceKind::kTrailing:
        if (has_content) {
          PushLine(cur, p.text);
          fresh(cont_indent_);
        } else {
          AttachTrailing(p.text, cont_indent_);
        }
        break;
      case PieceKind::kOwnLine:
        if (has_content) PushLine(cur);
        PushCommentLines(p.text, cont_indent_);
        fresh(cont_indent_);
        break;
    }
  }
  if (has_content) PushLine(cur);
  pieces_.clear();
}

std::string Layout::Finish() {
  if (in_line_) FinishLine();
  in_line_ = false;
  while (next_comment_ < comments_.size()) PlaceComment(comments_[next_comment_++]);
  // Trailing comments of consecutive lines share one column when that stays within the width.
  for (size_t i = 0; i < lines_.size();) {
    if (lines_[i].trailing.empty()) {
      ++i;
      continue;
    }
    // A run: consecutive lines with trailing comments and the same indentation.
    auto indent_of = [](const std::string& t) { return t.find_first_not_of(' '); };
    size_t j = i;
    int column = 0, widest = 0;
    while (j < lines_.size() && !lines_[j].trailing.empty() &&
           indent_of(lines_[j].text) == indent_of(lines_[i].text)) {
      column = std::max(column, Width(lines_[j].text));
      widest = std::max(widest, Width(lines_[j].trailing));
      ++j;
    }
    bool align = j - i > 1 && column + 2 + widest <= options_.max_width;
    for (size_t k = i; k < j; ++k) {
      int pad = align ? column - Width(lines_[k].text) + 2 : 2;
      lines_[k].text += std::string(pad, ' ') + lines_[k].trailing;
      lines_[k].trailing.clear();
    }
    i = j;
  }
  std::string out;
  for (const Line& l : lines_) {
    out += l.text;
    out += '\n';
  }
  while (out.size() >= 2 && out[out.size() - 1] == '\n' && out[out.size() - 2] == '\n')
    out.pop_back();
  if (out == "\n") out.clear();
  return out;
}

int Layout::Measure(const std::function<void()>& emit, uint32_t* last_anchor) {
  bool was = measuring_;
  std::string saved = std::move(measure_text_);
  uint32_t saved_anchor = measure_anchor_;
  measuring_ = true;
  measure_text_.clear();
  measure_anchor_ = 0;
  emit();
  std::string text = std::move(measure_text_);
  if (last_anchor != nullptr) *last_anchor = measure_anchor_;
  measure_text_ = std::move(saved);
  measure_anchor_ = std::max(saved_anchor, measure_anchor_);
  measuring_ = was;
  if (text.find('\n') != std::string::npos) return kHuge;
  return Width(text);
}

int Layout::CurrentWidth() const {
  if (measuring_) return Width(measure_text_);
  int w = indent_;
  for (const Piece& p : pieces_) {
    if (p.kind == PieceKind::kText) w += Width(p.text);
    if (p.kind == PieceKind::kSoft) w += 1;
  }
  return w;
}

}  // namespace flow::format
