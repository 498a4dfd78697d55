#pragma once
// LineReader: splits a file descriptor's bytes into lines with bounded memory. Used by the file
// and stdin sources. Lines end at '\n'; a '\r' before it is dropped; a last line without '\n' is
// returned at end of input. Views returned by NextLine stay valid until the next Fill().

#include <cstdint>
#include <string>
#include <string_view>

#include "flow/runtime/common/status.h"

namespace flow::rt {

class LineReader {
 public:
  // `quote_aware`: a '\n' between double quotes does not end the line (CSV records with quoted
  // line breaks); the record's number is that of its first line.
  LineReader(size_t max_line_bytes, size_t chunk_bytes, bool quote_aware = false)
      : max_line_bytes_(max_line_bytes), chunk_bytes_(chunk_bytes), quote_aware_(quote_aware) {}

  // Starts reading `fd` (not owned) whose current file offset is `start_offset`; the next line
  // returned gets number `next_line`.
  void Reset(int fd, uint64_t start_offset, int64_t next_line);

  enum class LineResult {
    kLine,      // *line and *line_no are set
    kNeedMore,  // call Fill()
    kEnd,       // input exhausted
    kTooLong,   // line next_line() is longer than max_line_bytes
  };
  LineResult NextLine(std::string_view* line, int64_t* line_no);

  enum class FillResult { kData, kEof, kNotReady };
  // Reads more bytes. Invalidates views from NextLine. `wait_ms` >= 0 waits at most that long for
  // the descriptor to become readable (kNotReady when it did not); -1 reads blocking.
  // Errors: kIoError when read or poll fails.
  [[nodiscard]] Result<FillResult> Fill(int wait_ms);

  bool eof() const { return eof_; }
  // File offset of the first byte not yet returned as part of a line.
  uint64_t position() const { return buffer_offset_ + begin_; }
  // Number the next returned line will get.
  int64_t next_line() const { return next_line_; }

 private:
  const char* FindLineEnd();

  size_t max_line_bytes_;
  size_t chunk_bytes_;
  bool quote_aware_;
  bool in_quotes_ = false;         // quote state at scan_ (quote_aware_ only)
  int64_t embedded_newlines_ = 0;  // '\n' inside quotes in [begin_, scan_)
  int fd_ = -1;
  std::string buf_;
  size_t begin_ = 0;            // start of unreturned data in buf_
  size_t end_ = 0;              // end of valid data in buf_
  size_t scan_ = 0;             // bytes before this in [begin_, end_) hold no '\n'
  uint64_t buffer_offset_ = 0;  // file offset of buf_[0]
  int64_t next_line_ = 1;
  bool eof_ = false;
};

}  // namespace flow::rt
