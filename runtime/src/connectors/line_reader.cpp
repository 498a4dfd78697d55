#include "line_reader.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace flow::rt {

void LineReader::Reset(int fd, uint64_t start_offset, int64_t next_line) {
  fd_ = fd;
  begin_ = end_ = scan_ = 0;
  in_quotes_ = false;
  embedded_newlines_ = 0;
  buffer_offset_ = start_offset;
  next_line_ = next_line;
  eof_ = false;
}

const char* LineReader::FindLineEnd() {
  const char* base = buf_.data();
  if (!quote_aware_) {
    return static_cast<const char*>(std::memchr(base + scan_, '\n', end_ - scan_));
  }
  for (size_t i = scan_; i < end_; ++i) {
    char c = base[i];
    if (c == '"') {
      in_quotes_ = !in_quotes_;
    } else if (c == '\n') {
      if (!in_quotes_) {
        scan_ = i;
        return base + i;
      }
      ++embedded_newlines_;
    }
  }
  scan_ = end_;
  return nullptr;
}

LineReader::LineResult LineReader::NextLine(std::string_view* line, int64_t* line_no) {
  if (begin_ == end_) return eof_ ? LineResult::kEnd : LineResult::kNeedMore;
  const char* base = buf_.data();
  const char* nl = FindLineEnd();
  size_t line_end;
  size_t next;
  if (nl != nullptr) {
    line_end = static_cast<size_t>(nl - base);
    next = line_end + 1;
  } else if (eof_) {
    line_end = end_;
    next = end_;
  } else {
    scan_ = end_;
    // +1: a line of exactly the maximum may still be followed by '\r'.
    if (end_ - begin_ > max_line_bytes_ + 1) return LineResult::kTooLong;
    return LineResult::kNeedMore;
  }
  size_t len = line_end - begin_;
  if (len > 0 && base[line_end - 1] == '\r') --len;
  if (len > max_line_bytes_) return LineResult::kTooLong;
  *line = std::string_view(base + begin_, len);
  *line_no = next_line_;
  next_line_ += 1 + embedded_newlines_;
  embedded_newlines_ = 0;
  in_quotes_ = false;
  begin_ = scan_ = next;
  return LineResult::kLine;
}

Result<LineReader::FillResult> LineReader::Fill(int wait_ms) {
  if (eof_) return FillResult::kEof;
  size_t pending = end_ - begin_;
  if (begin_ > 0) {
    std::memmove(buf_.data(), buf_.data() + begin_, pending);
    buffer_offset_ += begin_;
    scan_ -= begin_;
    begin_ = 0;
    end_ = pending;
  }
  // Memory stays below max_line_bytes + 1 + chunk: NextLine reports kTooLong before that.
  if (buf_.size() < pending + chunk_bytes_) buf_.resize(pending + chunk_bytes_);
  if (wait_ms >= 0) {
    pollfd pfd{fd_, POLLIN, 0};
    int r;
    do {
      r = ::poll(&pfd, 1, wait_ms);
    } while (r < 0 && errno == EINTR);
    if (r < 0) return Status::IoError(fmt::format("poll failed: {}", std::strerror(errno)));
    if (r == 0) return FillResult::kNotReady;
  }
  ssize_t n;
  do {
    n = ::read(fd_, buf_.data() + end_, buf_.size() - end_);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return Status::IoError(fmt::format("read failed: {}", std::strerror(errno)));
  if (n == 0) {
    eof_ = true;
    return FillResult::kEof;
  }
  end_ += static_cast<size_t>(n);
  return FillResult::kData;
}

}  // namespace flow::rt
