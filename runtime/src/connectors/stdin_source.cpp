#include "flow/runtime/connectors/stdin_source.h"

#include <fmt/format.h>

#include "line_reader.h"

namespace flow::rt {

StdinSource::StdinSource(StdinSourceOptions options) : options_(options) {}

StdinSource::~StdinSource() = default;

Status StdinSource::Open(uint32_t subtask, uint32_t parallelism) {
  if (!instance_.empty()) {
    return UnsharedSourceError("stdin source", instance_);
  }
  if (parallelism != 1 || subtask != 0) {
    return Status::InvalidArgument(
        fmt::format("stdin source supports parallelism 1 only (got {})", parallelism));
  }
  if (options_.max_line_bytes == 0) {
    return Status::InvalidArgument("stdin source: max_line_bytes must be > 0");
  }
  reader_ =
      std::make_unique<LineReader>(options_.max_line_bytes, 64 * 1024, options_.quoted_newlines);
  reader_->Reset(options_.fd, 0, 1);
  return Status::Ok();
}

Result<PollResult> StdinSource::Poll(std::vector<RawRecord>* out, size_t max_records,
                                     int timeout_ms) {
  if (!reader_) return Status::Internal("stdin source: Poll before Open");
  size_t appended = 0;
  bool waited = false;
  while (appended < max_records) {
    std::string_view line;
    int64_t line_no;
    auto r = reader_->NextLine(&line, &line_no);
    if (r == LineReader::LineResult::kLine) {
      if (line.empty() && options_.skip_empty_lines) continue;
      RawRecord rec;
      rec.payload = line;
      rec.offset = line_no;
      out->push_back(rec);
      ++appended;
      continue;
    }
    if (r == LineReader::LineResult::kTooLong) {
      return Status::InvalidArgument(fmt::format("stdin line {}: line longer than {} bytes",
                                                 reader_->next_line(), options_.max_line_bytes));
    }
    if (r == LineReader::LineResult::kEnd)
      return appended > 0 ? PollResult::kRecords : PollResult::kEnd;
    // kNeedMore: reading invalidates the payloads already returned by this call.
    if (appended > 0) break;
    // Wait once per call (up to timeout_ms); afterwards only take what is already there.
    Result<LineReader::FillResult> f =
        reader_->Fill(waited ? 0 : (timeout_ms < 0 ? 0 : timeout_ms));
    waited = true;
    if (!f.ok()) return Status(f.status().code(), fmt::format("stdin: {}", f.status().message()));
    if (f.value() == LineReader::FillResult::kNotReady) return PollResult::kIdle;
  }
  return PollResult::kRecords;
}

std::string StdinSource::Locate(const RawRecord& record) const {
  return fmt::format("stdin line {}", record.offset);
}

Status StdinSource::SnapshotPosition(BinaryWriter* out) const {
  out->PutI64(reader_ ? reader_->next_line() - 1 : 0);
  return Status::Ok();
}

Status StdinSource::RestorePosition(BinaryReader* in) {
  int64_t lines = 0;
  FLOW_RETURN_IF_ERROR(in->GetI64(&lines));
  if (lines != 0) {
    return Status::InvalidArgument(fmt::format(
        "stdin source cannot restore a position ({} lines were already read); stdin cannot be "
        "rewound",
        lines));
  }
  return Status::Ok();
}

Status StdinSource::Close() {
  return Status::Ok();
}

}  // namespace flow::rt
