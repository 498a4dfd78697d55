#include "lsp/transport.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

namespace flow::lsp {

std::string Frame(std::string_view body) {
  std::string out = "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  out.append(body);
  return out;
}

bool Transport::Fill() {
  if (buf_pos_ < buf_len_) return true;
  ssize_t n;
  do {
    n = ::read(in_fd_, buf_, sizeof buf_);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) return false;
  buf_pos_ = 0;
  buf_len_ = static_cast<size_t>(n);
  return true;
}

int Transport::Get() {
  if (!Fill()) return -1;
  return static_cast<unsigned char>(buf_[buf_pos_++]);
}

// Reads up to "\n" (dropping a trailing "\r"). Returns false at end of input. A line longer than
// kMaxHeaderLine is consumed to its end and flagged.
bool Transport::ReadLine(std::string* line, bool* too_long) {
  line->clear();
  *too_long = false;
  while (true) {
    int c = Get();
    if (c < 0) return false;
    if (c == '\n') break;
    if (line->size() < kMaxHeaderLine) {
      line->push_back(static_cast<char>(c));
    } else {
      *too_long = true;
    }
  }
  if (!line->empty() && line->back() == '\r') line->pop_back();
  return true;
}

ReadResult Transport::Read() {
  ReadResult r;
  std::string line;
  bool have_length = false, bad = false;
  size_t length = 0;
  bool any_header = false;
  while (true) {
    bool too_long = false;
    if (!ReadLine(&line, &too_long)) {
      r.status = ReadStatus::kEof;
      return r;
    }
    if (line.empty() && !too_long) {
      if (!any_header) continue;  // stray blank lines between messages
      break;
    }
    any_header = true;
    if (too_long) {
      bad = true;
      r.reason = "header line longer than " + std::to_string(kMaxHeaderLine) + " bytes";
      continue;
    }
    size_t colon = line.find(':');
    if (colon == std::string::npos) {
      bad = true;
      r.reason = "header line without `:`";
      continue;
    }
    std::string name = line.substr(0, colon);
    for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (name != "content-length") continue;  // Content-Type and unknown headers are ignored
    std::string value = line.substr(colon + 1);
    size_t b = value.find_first_not_of(" \t");
    size_t e = value.find_last_not_of(" \t");
    value = b == std::string::npos ? "" : value.substr(b, e - b + 1);
    if (value.empty() || value.size() > 18 ||
        value.find_first_not_of("0123456789") != std::string::npos) {
      bad = true;
      r.reason = "invalid Content-Length `" + value.substr(0, 40) + "`";
      continue;
    }
    length = std::stoull(value);
    have_length = true;
  }
  if (!bad && !have_length) {
    bad = true;
    r.reason = "header block without Content-Length";
  }
  if (bad) {
    // Without a trustworthy length the body cannot be skipped; the next header search starts here.
    r.status = ReadStatus::kBadHeader;
    return r;
  }
  if (length > max_message_) {
    for (size_t i = 0; i < length; ++i) {
      if (Get() < 0) {
        r.status = ReadStatus::kEof;
        return r;
      }
    }
    r.status = ReadStatus::kTooLarge;
    r.reason = "message of " + std::to_string(length) + " bytes is larger than the limit of " +
               std::to_string(max_message_);
    return r;
  }
  r.body.reserve(length);
  while (r.body.size() < length) {
    if (!Fill()) {
      r.status = ReadStatus::kEof;
      return r;
    }
    size_t take = std::min(length - r.body.size(), buf_len_ - buf_pos_);
    r.body.append(buf_ + buf_pos_, take);
    buf_pos_ += take;
  }
  r.status = ReadStatus::kOk;
  return r;
}

bool Transport::HasPendingInput() {
  if (buf_pos_ < buf_len_) return true;
  struct pollfd p = {in_fd_, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0;
}

bool Transport::Write(std::string_view body) {
  std::string framed = Frame(body);
  std::lock_guard<std::mutex> lock(write_mu_);
  size_t done = 0;
  while (done < framed.size()) {
    ssize_t n = ::write(out_fd_, framed.data() + done, framed.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace flow::lsp
