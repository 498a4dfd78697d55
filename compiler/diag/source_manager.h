#pragma once
// flow::diag::SourceManager: owns the text of every file the compiler reads and maps byte offsets
// to lines and columns. Not thread-safe; one per compilation. File ids are dense from 0.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "diag/source_range.h"

namespace flow::diag {

class SourceManager {
 public:
  // Adds a file's text under a display name; returns its id.
  uint32_t AddFile(std::string name, std::string text);

  const std::string& name(uint32_t file) const { return files_[file].name; }
  const std::string& text(uint32_t file) const { return files_[file].text; }
  size_t file_count() const { return files_.size(); }

  // 1-based line and code-point column of a byte offset (clamped to the text).
  void Locate(uint32_t file, uint32_t offset, uint32_t* line, uint32_t* col) const;
  // A range for [begin, end) with line/col filled in.
  SourceRange Range(uint32_t file, uint32_t begin, uint32_t end) const;
  // The text of a 1-based line without its line terminator; empty past the end.
  std::string_view LineText(uint32_t file, uint32_t line) const;
  // Byte offset where a 1-based line starts.
  uint32_t LineStart(uint32_t file, uint32_t line) const;

 private:
  struct File {
    std::string name;
    std::string text;
    std::vector<uint32_t> line_starts;  // byte offset of each line's first byte
    std::vector<bool> line_ascii;       // per line: no byte >= 0x80 (columns are byte counts)
  };
  std::vector<File> files_;
};

// Number of code points in a UTF-8 byte range (continuation bytes are not counted).
uint32_t CountCodePoints(std::string_view text);

}  // namespace flow::diag
