#pragma once
// FileSource: a bounded, line-oriented source over one file, every regular file of a directory,
// or the files matching a glob. Each line is one record (payload without the line end; "\r\n"
// and "\n" both end a line; a last line without '\n' counts). RawRecord::offset is the 1-based
// line number within its file; there is no key and no timestamp.
//
// Splits: the matched files are sorted by path; file i belongs to subtask i % parallelism.
// A directory contributes its regular files (not recursively), skipping names that start with
// '.' or '_' (hidden and in-progress files). A subtask with no files ends at once.
// Position (SnapshotPosition): the subtask's current file (index and path), the byte offset of
// the next unread line and its line number. RestorePosition must follow Open with the same
// parallelism and subtask; it continues exactly after the last record returned before the
// snapshot. Restoring when the file list changed so that the path no longer has the same index is
// kNotFound; another parallelism or subtask is kInvalidArgument.
// Rescaling (RestoreRescaled): file i's state (done, read up to a byte offset, not started) comes
// from its old owner (i % old parallelism) and the file goes to its new owner (i % parallelism),
// so every file is resumed exactly once. A subtask may then hold several partly read files; its
// position (version 2) also lists the later files that are done or partly read.
// Poll reads local files blocking and ignores timeout_ms; payloads stay valid until the next Poll.
// Errors: a path that matches nothing is kNotFound naming the path; a line longer than
// max_line_bytes is kInvalidArgument "file <path> line <n>: line longer than <max> bytes"; read
// failures are kIoError naming the file.
// Locate(record) names the file and line; it is valid for records of the last Poll.
// Threading: one instance per subtask, used by one thread at a time.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "flow/runtime/connectors/connector.h"

namespace flow::rt {

struct FileSourceOptions {
  // A file, a directory, or a glob pattern ("data/*.jsonl"). Required.
  std::string path{};
  // Longest accepted line in bytes, without its line end. Default: 16 MiB.
  size_t max_line_bytes = size_t{16} << 20;
  // Bytes read per read(2). Default: 1 MiB.
  size_t read_chunk_bytes = size_t{1} << 20;
  // Skip lines that are empty (after removing "\r"). Default: true.
  bool skip_empty_lines = true;
  // CSV: a line break inside double quotes does not end the record, so a record may span lines
  // (RawRecord::offset is its first line). Default: false.
  bool quoted_newlines = false;
  // Number of lines at the start of every file that are not records (e.g. a CSV header).
  // Default: 0. The skipped lines of the current file are available from header_lines().
  uint32_t header_lines = 0;
  // With header_lines = 0: after RestorePosition into the middle of a file, return that file's
  // line 1 once more (offset 1) before continuing, so a format that takes its header from line 1
  // of each file (CsvDecoder::ConsumeHeader) sees it again. Default: false.
  bool replay_first_line_on_restore = false;
};

class LineReader;

class FileSource final : public RawSource {
 public:
  explicit FileSource(FileSourceOptions options);
  ~FileSource() override;

  // Keeps the instance name: instances of a job (--instance) cannot share this input.
  void Bind(const ConnectorContext& context) override { instance_ = context.instance; }
  Status Open(uint32_t subtask, uint32_t parallelism) override;
  Result<PollResult> Poll(std::vector<RawRecord>* out, size_t max_records, int timeout_ms) override;
  std::string Locate(const RawRecord& record) const override;
  Status SnapshotPosition(BinaryWriter* out) const override;
  Status RestorePosition(BinaryReader* in) override;
  Status RestoreRescaled(const std::vector<OldSourcePosition>& old,
                         uint32_t old_parallelism) override;
  Status Close() override;

  // All files matched by the path (sorted), and those assigned to this subtask. After Open.
  const std::vector<std::string>& all_files() const { return files_; }
  std::vector<std::string> assigned_files() const;
  // The header lines skipped at the start of the file currently being read.
  const std::vector<std::string>& header_lines() const { return header_; }

  // Lists the files `path` names, sorted (the split rule above). kNotFound when none.
  [[nodiscard]] static Result<std::vector<std::string>> ListFiles(const std::string& path);

 private:
  Status OpenFile(size_t index, uint64_t offset, int64_t next_line);
  void CloseFile();
  size_t NextAssigned(size_t index) const;

  // Where a file resumes after a rescaled restore (absent: from its start).
  struct Resume {
    bool done = false;
    uint64_t offset = 0;
    int64_t next_line = 1;
  };
  struct DecodedPosition {
    uint32_t subtask = 0;
    uint32_t parallelism = 1;
    bool done = false;
    uint64_t current = 0;
    uint64_t offset = 0;
    int64_t next_line = 1;
    std::map<size_t, Resume> later;
  };
  Result<DecodedPosition> DecodePosition(BinaryReader* in) const;
  bool IsResumedDone(size_t index) const;
  Status OpenAssigned(size_t index);

  FileSourceOptions options_;
  uint32_t subtask_ = 0;
  uint32_t parallelism_ = 1;
  std::vector<std::string> files_;
  size_t current_ = 0;  // index into files_; files_.size() when done
  int fd_ = -1;
  std::unique_ptr<LineReader> reader_;
  std::vector<std::string> header_;
  std::string replay_line_;  // line 1 to return first after a restore (replay option)
  bool replay_pending_ = false;
  std::map<size_t, Resume> resume_;  // by file index; set by a restore
  bool opened_ = false;
  std::string instance_;
};

}  // namespace flow::rt
