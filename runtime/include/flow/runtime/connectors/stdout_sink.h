#pragma once
// StdoutSink: writes each payload followed by '\n' to standard output (or another descriptor).
// Keys and timestamps are not printed. Output is buffered per instance and written in whole lines
// under a process-wide lock, so the lines of parallel subtasks never interleave mid-line.
// Flush writes the buffer out (no fsync: stdout may be a pipe or terminal).
// Errors: kIoError when writing fails, also when the reader of a pipe went away (SIGPIPE is
// blocked on the writing thread during the write, so it does not kill the process).
// Threading: one instance per subtask; instances may run on different threads.

#include <string>

#include "flow/runtime/connectors/connector.h"

namespace flow::rt {

struct StdoutSinkOptions {
  // The descriptor to write; not closed by the sink. Default: 1 (standard output).
  int fd = 1;
  // Buffered bytes that trigger a write. Default: 64 KiB.
  size_t buffer_bytes = 64 * 1024;
};

class StdoutSink final : public RawSink {
 public:
  explicit StdoutSink(StdoutSinkOptions options = {}) : options_(options) {}

  Status Open(uint32_t subtask, uint32_t parallelism) override { return Status::Ok(); }
  Status Write(std::string_view key, std::string_view payload, TimestampMs timestamp) override;
  Status Flush() override;
  Status Close() override { return Flush(); }

 private:
  StdoutSinkOptions options_;
  std::string buf_;
};

}  // namespace flow::rt
