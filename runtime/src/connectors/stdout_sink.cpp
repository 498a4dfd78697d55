#include "flow/runtime/connectors/stdout_sink.h"

#include <mutex>

#include "fd_write.h"

namespace flow::rt {
namespace {

// Serializes writes of all instances, so each buffer of whole lines lands contiguously.
std::mutex& OutputMutex() {
  static std::mutex mu;
  return mu;
}

}  // namespace

Status StdoutSink::Write(std::string_view key, std::string_view payload, TimestampMs timestamp) {
  buf_.append(payload);
  buf_.push_back('\n');
  if (buf_.size() >= options_.buffer_bytes) return Flush();
  return Status::Ok();
}

Status StdoutSink::Flush() {
  if (buf_.empty()) return Status::Ok();
  Status s;
  {
    std::lock_guard<std::mutex> lock(OutputMutex());
    s = WriteAll(options_.fd, buf_, "standard output");
  }
  buf_.clear();
  return s;
}

}  // namespace flow::rt
