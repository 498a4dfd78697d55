#pragma once
// FileSink: writes records as lines ("<payload>\n") into a directory, one series of part files
// per subtask: <directory>/<prefix>-<subtask>-<n><suffix>, e.g. "out/part-0-0.jsonl". A part file
// is created on the first record; when it would grow past roll_bytes the sink fsyncs and closes it
// and starts n+1. On Open, n starts after the highest existing part number of this subtask, so a
// restarted job never overwrites earlier output.
// Guarantees: records are buffered and written in whole lines only, so a reader never sees a
// partial line; after Flush (or Close) everything written is on disk (fsync of file and
// directory). At-least-once: after a failure, records since the last Flush may be written again.
// Errors: kIoError naming the path (directory cannot be created, disk full, ...);
// kInvalidArgument for bad options.
// Threading: one instance per subtask, used by one thread at a time; subtasks write distinct files.

#include <cstdint>
#include <string>

#include "flow/runtime/connectors/connector.h"

namespace flow::rt {

struct FileSinkOptions {
  // Output directory; created (with parents) when missing. Required.
  std::string directory{};
  // Default: "part".
  std::string prefix = "part";
  // Default: ".jsonl".
  std::string suffix = ".jsonl";
  // A part file is rolled before it would exceed this many bytes (a single larger record still
  // gets a file of its own). Default: 128 MiB.
  uint64_t roll_bytes = uint64_t{128} << 20;
  // Buffered bytes that trigger a write(2). Default: 1 MiB.
  size_t buffer_bytes = size_t{1} << 20;
};

class FileSink final : public RawSink {
 public:
  explicit FileSink(FileSinkOptions options) : options_(std::move(options)) {}
  ~FileSink() override;

  Status Open(uint32_t subtask, uint32_t parallelism) override;
  Status Write(std::string_view key, std::string_view payload, TimestampMs timestamp) override;
  Status Flush() override;
  Status Close() override;

  // Path of the part file being written, empty before the first record.
  const std::string& current_path() const { return path_; }

 private:
  Status StartPart();
  Status FinishPart();
  Status WriteBuffer();

  FileSinkOptions options_;
  uint32_t subtask_ = 0;
  uint64_t next_part_ = 0;
  int fd_ = -1;
  std::string path_;
  uint64_t file_bytes_ = 0;  // bytes already written to the current part
  std::string buf_;
  bool opened_ = false;
};

}  // namespace flow::rt
