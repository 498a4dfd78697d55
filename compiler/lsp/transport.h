#pragma once
// The LSP base protocol over a pair of file descriptors: each message is a header block
// ("Content-Length: N\r\n", optionally "Content-Type: ...\r\n", then "\r\n") followed by N bytes
// of JSON. Header names are matched case-insensitively; a bare "\n" line end is accepted too.
//
// Robustness: a header line longer than kMaxHeaderLine, a header block without Content-Length or
// with an unparsable one, and a body larger than kMaxMessageBytes are reported as kBadHeader /
// kTooLarge with a reason; the reader stays in step (an over-large body is read and discarded),
// so the caller can answer with a JSON-RPC error and go on. Threading: one reader and one writer
// thread at most; Write is serialised internally.

#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>

namespace flow::lsp {

inline constexpr size_t kMaxHeaderLine = 8 * 1024;
inline constexpr size_t kMaxMessageBytes = size_t{64} << 20;  // 64 MiB

enum class ReadStatus { kOk, kEof, kBadHeader, kTooLarge };

struct ReadResult {
  ReadStatus status = ReadStatus::kEof;
  std::string body;    // kOk: the message content
  std::string reason;  // kBadHeader / kTooLarge: what was wrong
};

class Transport {
 public:
  // `max_message`: the largest body accepted. Default: kMaxMessageBytes.
  Transport(int in_fd, int out_fd, size_t max_message = kMaxMessageBytes)
      : in_fd_(in_fd), out_fd_(out_fd), max_message_(max_message) {}

  // Blocks for the next message. kEof when the input ends (also in the middle of a message).
  ReadResult Read();
  // True when a Read would find input without waiting (buffered bytes, or the descriptor is
  // readable now, which includes end of input).
  bool HasPendingInput();
  // Frames and writes `body`; false when the output is closed.
  bool Write(std::string_view body);

 private:
  // Makes sure the buffer holds unread input; false at end of input.
  bool Fill();
  // Next byte of input, or -1 at end of input.
  int Get();
  bool ReadLine(std::string* line, bool* too_long);

  int in_fd_;
  int out_fd_;
  size_t max_message_;
  char buf_[64 * 1024];
  size_t buf_pos_ = 0;
  size_t buf_len_ = 0;
  std::mutex write_mu_;
};

// "Content-Length: N\r\n\r\n" + body.
std::string Frame(std::string_view body);

}  // namespace flow::lsp
