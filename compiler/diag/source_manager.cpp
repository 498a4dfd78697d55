#include "diag/source_manager.h"

#include <algorithm>

namespace flow::diag {

uint32_t CountCodePoints(std::string_view text) {
  uint32_t n = 0;
  for (unsigned char c : text) {
    if ((c & 0xC0) != 0x80) ++n;
  }
  return n;
}

uint32_t SourceManager::AddFile(std::string name, std::string text) {
  File f;
  f.name = std::move(name);
  f.text = std::move(text);
  f.line_starts.push_back(0);
  f.line_ascii.push_back(true);
  for (uint32_t i = 0; i < f.text.size(); ++i) {
    if (f.text[i] == '\n') {
      f.line_starts.push_back(i + 1);
      f.line_ascii.push_back(true);
    } else if (static_cast<unsigned char>(f.text[i]) >= 0x80) {
      f.line_ascii.back() = false;
    }
  }
  files_.push_back(std::move(f));
  return static_cast<uint32_t>(files_.size() - 1);
}

void SourceManager::Locate(uint32_t file, uint32_t offset, uint32_t* line, uint32_t* col) const {
  const File& f = files_[file];
  offset = std::min<uint32_t>(offset, static_cast<uint32_t>(f.text.size()));
  auto it = std::upper_bound(f.line_starts.begin(), f.line_starts.end(), offset);
  uint32_t index = static_cast<uint32_t>(it - f.line_starts.begin()) - 1;
  *line = index + 1;
  uint32_t start = f.line_starts[index];
  // On an ASCII line a column is a byte count: no scan, so locating every token of a very long
  // line (a schema of 50,000 fields on one line) stays linear.
  *col = f.line_ascii[index]
             ? offset - start + 1
             : CountCodePoints(std::string_view(f.text).substr(start, offset - start)) + 1;
}

SourceRange SourceManager::Range(uint32_t file, uint32_t begin, uint32_t end) const {
  SourceRange r;
  r.file = file;
  r.begin = begin;
  r.end = std::max(begin, end);
  Locate(file, begin, &r.line, &r.col);
  return r;
}

uint32_t SourceManager::LineStart(uint32_t file, uint32_t line) const {
  const File& f = files_[file];
  if (line == 0 || line > f.line_starts.size()) return static_cast<uint32_t>(f.text.size());
  return f.line_starts[line - 1];
}

std::string_view SourceManager::LineText(uint32_t file, uint32_t line) const {
  const File& f = files_[file];
  if (line == 0 || line > f.line_starts.size()) return {};
  uint32_t start = f.line_starts[line - 1];
  uint32_t end = line < f.line_starts.size() ? f.line_starts[line] : f.text.size();
  std::string_view s = std::string_view(f.text).substr(start, end - start);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

}  // namespace flow::diag
