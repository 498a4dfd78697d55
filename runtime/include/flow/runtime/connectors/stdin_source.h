#pragma once
// StdinSource: one record per line of standard input (or another readable descriptor), parallelism
// 1 only. Line rules as FileSource: "\n" or "\r\n" end a line, empty lines are skipped by default,
// lines longer than max_line_bytes are kInvalidArgument "stdin line <n>: ...".
// Poll waits at most timeout_ms for input and returns kIdle when none came; kEnd at end of input.
// Positions: stdin cannot be rewound. SnapshotPosition records the number of lines read;
// RestorePosition accepts only a position of zero lines (a fresh start) and otherwise returns
// kInvalidArgument, so a job reading stdin fails rather than silently skipping or repeating input.
// Threading: one instance, used by one thread at a time.

#include <memory>

#include "flow/runtime/connectors/connector.h"

namespace flow::rt {

struct StdinSourceOptions {
  // The descriptor to read; not closed by the source. Default: 0 (standard input).
  int fd = 0;
  // Default: 16 MiB.
  size_t max_line_bytes = size_t{16} << 20;
  // Default: true.
  bool skip_empty_lines = true;
  // As FileSourceOptions::quoted_newlines. Default: false.
  bool quoted_newlines = false;
};

class LineReader;

class StdinSource final : public RawSource {
 public:
  explicit StdinSource(StdinSourceOptions options = {});
  ~StdinSource() override;

  // Keeps the instance name: instances of a job (--instance) cannot share this input.
  void Bind(const ConnectorContext& context) override { instance_ = context.instance; }
  Status Open(uint32_t subtask, uint32_t parallelism) override;
  Result<PollResult> Poll(std::vector<RawRecord>* out, size_t max_records, int timeout_ms) override;
  std::string Locate(const RawRecord& record) const override;
  Status SnapshotPosition(BinaryWriter* out) const override;
  Status RestorePosition(BinaryReader* in) override;
  Status Close() override;

 private:
  StdinSourceOptions options_;
  std::unique_ptr<LineReader> reader_;
  std::string instance_;
};

}  // namespace flow::rt
