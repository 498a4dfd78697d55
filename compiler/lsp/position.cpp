#include "lsp/position.h"

#include <algorithm>

#include "flow/runtime/common/utf8.h"

namespace flow::lsp {

namespace {

// Length of the UTF-8-shaped sequence at text[i], or 1 when it is malformed (each bad byte is then
// one unit), so the same text always maps the same way. Only the shape is checked (kShape): the
// mapping needs to be consistent, not the text to be well-formed.
size_t SequenceAt(std::string_view text, size_t i) {
  return std::max<size_t>(1, rt::Utf8SequenceLength(text, i, rt::Utf8Check::kShape));
}

}  // namespace

LineIndex::LineIndex(std::string_view text) : text_(text) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') {
      line_starts_.push_back(i + 1);
    } else if (text[i] == '\r') {
      if (i + 1 < text.size() && text[i + 1] == '\n') ++i;
      line_starts_.push_back(i + 1);
    }
  }
}

size_t LineIndex::LineEnd(size_t line) const {
  if (line + 1 >= line_starts_.size()) return text_.size();
  size_t end = line_starts_[line + 1];
  // Step back over the terminator: "\n", "\r" or "\r\n".
  if (end > 0 && text_[end - 1] == '\n') --end;
  if (end > line_starts_[line] && text_[end - 1] == '\r') --end;
  return end;
}

size_t LineIndex::ToOffset(Position p) const {
  if (p.line >= line_starts_.size()) return text_.size();
  size_t i = line_starts_[p.line];
  size_t end = LineEnd(p.line);
  uint32_t units = 0;
  while (i < end && units < p.character) {
    size_t n = SequenceAt(text_, i);
    uint32_t width = n == 4 ? 2 : 1;
    if (units + width > p.character) break;  // inside a surrogate pair: stay at its start
    units += width;
    i += n;
  }
  return std::min(i, end);
}

Position LineIndex::ToPosition(size_t offset) const {
  offset = std::min(offset, text_.size());
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  size_t line = static_cast<size_t>(it - line_starts_.begin()) - 1;
  size_t i = line_starts_[line];
  size_t end = std::min(offset, LineEnd(line));
  uint32_t units = 0;
  while (i < end) {
    size_t n = SequenceAt(text_, i);
    if (i + n > end) break;  // offset inside a sequence
    units += n == 4 ? 2 : 1;
    i += n;
  }
  return {static_cast<uint32_t>(line), units};
}

void ApplyEdit(std::string* text, const Range& range, std::string_view replacement) {
  LineIndex index(*text);
  size_t begin = index.ToOffset(range.start);
  size_t end = index.ToOffset(range.end);
  if (end < begin) end = begin;
  text->replace(begin, end - begin, replacement);
}

}  // namespace flow::lsp
