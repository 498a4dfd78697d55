#include "flow/runtime/connectors/file_source.h"

#include <fcntl.h>
#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "line_reader.h"

namespace flow::rt {
namespace {

constexpr uint8_t kPositionVersion = 1;
// Version 1 plus the state of later files (after a restore at another parallelism).
constexpr uint8_t kPositionVersionRescaled = 2;

bool HasGlobChars(const std::string& s) {
  return s.find_first_of("*?[") != std::string::npos;
}

bool IsRegularFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool IsHiddenName(const std::string& name) {
  return !name.empty() && (name[0] == '.' || name[0] == '_');
}

}  // namespace

FileSource::FileSource(FileSourceOptions options) : options_(std::move(options)) {}

FileSource::~FileSource() {
  CloseFile();
}

Result<std::vector<std::string>> FileSource::ListFiles(const std::string& path) {
  if (path.empty()) return Status::InvalidArgument("file source: `path` is empty");
  std::vector<std::string> files;
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISREG(st.st_mode)) {
      files.push_back(path);
    } else if (S_ISDIR(st.st_mode)) {
      std::error_code ec;
      for (const auto& entry : std::filesystem::directory_iterator(path, ec)) {
        std::string name = entry.path().filename().string();
        std::string full = entry.path().string();
        if (!IsHiddenName(name) && IsRegularFile(full)) files.push_back(full);
      }
      if (ec) {
        return Status::IoError(
            fmt::format("file source: cannot list directory '{}': {}", path, ec.message()));
      }
      if (files.empty()) {
        return Status::NotFound(fmt::format("file source: directory '{}' has no files", path));
      }
    } else {
      return Status::InvalidArgument(
          fmt::format("file source: '{}' is neither a file nor a directory", path));
    }
  } else if (HasGlobChars(path)) {
    glob_t g{};
    int rc = ::glob(path.c_str(), 0, nullptr, &g);
    if (rc == 0) {
      for (size_t i = 0; i < g.gl_pathc; ++i) {
        if (IsRegularFile(g.gl_pathv[i])) files.emplace_back(g.gl_pathv[i]);
      }
    }
    ::globfree(&g);
    if (files.empty()) {
      return Status::NotFound(fmt::format("file source: no files match '{}'", path));
    }
  } else {
    return Status::NotFound(fmt::format("file source: '{}' does not exist", path));
  }
  std::sort(files.begin(), files.end());
  return files;
}

Status FileSource::Open(uint32_t subtask, uint32_t parallelism) {
  if (!instance_.empty()) {
    return UnsharedSourceError("file source", instance_);
  }
  if (parallelism == 0 || subtask >= parallelism) {
    return Status::InvalidArgument(
        fmt::format("file source: subtask {} of parallelism {}", subtask, parallelism));
  }
  if (options_.max_line_bytes == 0 || options_.read_chunk_bytes == 0) {
    return Status::InvalidArgument("file source: max_line_bytes and read_chunk_bytes must be > 0");
  }
  subtask_ = subtask;
  parallelism_ = parallelism;
  Result<std::vector<std::string>> files = ListFiles(options_.path);
  if (!files.ok()) return files.status();
  files_ = std::move(files).value();
  reader_ = std::make_unique<LineReader>(options_.max_line_bytes, options_.read_chunk_bytes,
                                         options_.quoted_newlines);
  opened_ = true;
  size_t first = NextAssigned(0);
  if (first < files_.size()) return OpenFile(first, 0, 1);
  current_ = files_.size();
  return Status::Ok();
}

size_t FileSource::NextAssigned(size_t index) const {
  while (index < files_.size() && (index % parallelism_ != subtask_ || IsResumedDone(index)))
    ++index;
  return index;
}

bool FileSource::IsResumedDone(size_t index) const {
  auto it = resume_.find(index);
  return it != resume_.end() && it->second.done;
}

Status FileSource::OpenAssigned(size_t index) {
  auto it = resume_.find(index);
  if (it != resume_.end()) return OpenFile(index, it->second.offset, it->second.next_line);
  return OpenFile(index, 0, 1);
}

std::vector<std::string> FileSource::assigned_files() const {
  std::vector<std::string> out;
  for (size_t i = NextAssigned(0); i < files_.size(); i = NextAssigned(i + 1)) {
    out.push_back(files_[i]);
  }
  return out;
}

Status FileSource::OpenFile(size_t index, uint64_t offset, int64_t next_line) {
  CloseFile();
  current_ = index;
  const std::string& path = files_[index];
  int fd;
  do {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    if (errno == ENOENT) return Status::NotFound(fmt::format("file source: '{}' vanished", path));
    return Status::IoError(
        fmt::format("file source: cannot open '{}': {}", path, std::strerror(errno)));
  }
  fd_ = fd;
  header_.clear();
  replay_pending_ = false;
  bool replay =
      options_.replay_first_line_on_restore && options_.header_lines == 0 && next_line > 1;
  size_t lead_lines = options_.header_lines > 0 ? options_.header_lines : (replay ? 1 : 0);
  if (lead_lines > 0) {
    // Header lines are read again on restore, so header_lines() is right mid-file too.
    LineReader header_reader(options_.max_line_bytes, 64 * 1024, options_.quoted_newlines);
    header_reader.Reset(fd_, 0, 1);
    while (header_.size() < lead_lines) {
      std::string_view line;
      int64_t line_no;
      auto r = header_reader.NextLine(&line, &line_no);
      if (r == LineReader::LineResult::kLine) {
        header_.emplace_back(line);
      } else if (r == LineReader::LineResult::kNeedMore) {
        Result<LineReader::FillResult> f = header_reader.Fill(-1);
        if (!f.ok()) {
          return Status(f.status().code(), fmt::format("file {}: {}", path, f.status().message()));
        }
      } else if (r == LineReader::LineResult::kEnd) {
        break;
      } else {
        return Status::InvalidArgument(fmt::format("file {} line {}: line longer than {} bytes",
                                                   path, header_reader.next_line(),
                                                   options_.max_line_bytes));
      }
    }
    if (offset == 0 && options_.header_lines > 0) {
      offset = header_reader.position();
      next_line = header_reader.next_line();
    }
    if (replay) {
      replay_pending_ = !header_.empty() && !(header_[0].empty() && options_.skip_empty_lines);
      if (replay_pending_) replay_line_ = std::move(header_[0]);
      header_.clear();
    }
  }
  if (::lseek(fd_, static_cast<off_t>(offset), SEEK_SET) < 0) {
    return Status::IoError(
        fmt::format("file source: cannot seek '{}' to {}: {}", path, offset, std::strerror(errno)));
  }
  reader_->Reset(fd_, offset, next_line);
  return Status::Ok();
}

void FileSource::CloseFile() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Result<PollResult> FileSource::Poll(std::vector<RawRecord>* out, size_t max_records,
                                    int timeout_ms) {
  if (!opened_) return Status::Internal("file source: Poll before Open");
  size_t appended = 0;
  if (replay_pending_ && max_records > 0 && current_ < files_.size()) {
    replay_pending_ = false;
    RawRecord rec;
    rec.payload = replay_line_;
    rec.offset = 1;
    out->push_back(rec);
    ++appended;
  }
  while (appended < max_records && current_ < files_.size()) {
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
      return Status::InvalidArgument(fmt::format("file {} line {}: line longer than {} bytes",
                                                 files_[current_], reader_->next_line(),
                                                 options_.max_line_bytes));
    }
    // Reading more or switching files would invalidate the payloads returned in this call.
    if (appended > 0) break;
    if (r == LineReader::LineResult::kNeedMore) {
      Result<LineReader::FillResult> f = reader_->Fill(-1);
      if (!f.ok()) {
        return Status(f.status().code(),
                      fmt::format("file {}: {}", files_[current_], f.status().message()));
      }
      continue;
    }
    // kEnd: next assigned file, or done.
    size_t next = NextAssigned(current_ + 1);
    if (next >= files_.size()) {
      CloseFile();
      current_ = files_.size();
      break;
    }
    FLOW_RETURN_IF_ERROR(OpenAssigned(next));
  }
  if (appended > 0) return PollResult::kRecords;
  return current_ >= files_.size() ? PollResult::kEnd : PollResult::kRecords;
}

std::string FileSource::Locate(const RawRecord& record) const {
  std::string_view file =
      current_ < files_.size() ? std::string_view(files_[current_]) : std::string_view("<done>");
  return fmt::format("file {} line {}", file, record.offset);
}

Status FileSource::SnapshotPosition(BinaryWriter* out) const {
  if (!opened_) return Status::Internal("file source: SnapshotPosition before Open");
  // Version 1 unless a rescaled restore left state for files after the current one.
  bool later = !resume_.empty() && current_ < files_.size() && resume_.rbegin()->first > current_;
  const uint8_t version = later ? kPositionVersionRescaled : kPositionVersion;
  out->PutU8(version);
  out->PutU32(subtask_);
  out->PutU32(parallelism_);
  bool done = current_ >= files_.size();
  out->PutBool(done);
  if (done) return Status::Ok();
  out->PutU64(current_);
  out->PutString(files_[current_]);
  out->PutU64(reader_->position());
  out->PutI64(reader_->next_line());
  if (version == kPositionVersionRescaled) {
    // Files after the current one that a rescaled restore left done or partly read.
    uint32_t n = 0;
    for (const auto& [index, r] : resume_) n += index > current_ ? 1 : 0;
    out->PutU32(n);
    for (const auto& [index, r] : resume_) {
      if (index <= current_) continue;
      out->PutU64(index);
      out->PutString(files_[index]);
      out->PutBool(r.done);
      out->PutU64(r.offset);
      out->PutI64(r.next_line);
    }
  }
  return Status::Ok();
}

Result<FileSource::DecodedPosition> FileSource::DecodePosition(BinaryReader* in) const {
  DecodedPosition d;
  uint8_t version;
  FLOW_RETURN_IF_ERROR(in->GetU8(&version));
  if (version != kPositionVersion && version != kPositionVersionRescaled) {
    return Status::Corruption(fmt::format("file source position: unknown version {}", version));
  }
  FLOW_RETURN_IF_ERROR(in->GetU32(&d.subtask));
  FLOW_RETURN_IF_ERROR(in->GetU32(&d.parallelism));
  FLOW_RETURN_IF_ERROR(in->GetBool(&d.done));
  if (d.parallelism == 0 || d.subtask >= d.parallelism) {
    return Status::Corruption(fmt::format("file source position: subtask {} of parallelism {}",
                                          d.subtask, d.parallelism));
  }
  if (d.done) return d;
  auto check = [&](uint64_t index, const std::string& path) -> Status {
    if (index >= files_.size() || files_[index] != path) {
      return Status::NotFound(
          fmt::format("file source: restored file '{}' (index {}) is not in the current file list",
                      path, index));
    }
    if (index % d.parallelism != d.subtask) {
      return Status::Corruption("file source position: file not assigned to the subtask");
    }
    return Status::Ok();
  };
  std::string path;
  FLOW_RETURN_IF_ERROR(in->GetU64(&d.current));
  FLOW_RETURN_IF_ERROR(in->GetString(&path));
  FLOW_RETURN_IF_ERROR(in->GetU64(&d.offset));
  FLOW_RETURN_IF_ERROR(in->GetI64(&d.next_line));
  FLOW_RETURN_IF_ERROR(check(d.current, path));
  if (d.next_line < 1) return Status::Corruption("file source position: line number < 1");
  if (version == kPositionVersionRescaled) {
    uint32_t n;
    FLOW_RETURN_IF_ERROR(in->GetU32(&n));
    for (uint32_t i = 0; i < n; ++i) {
      uint64_t index;
      Resume r;
      FLOW_RETURN_IF_ERROR(in->GetU64(&index));
      FLOW_RETURN_IF_ERROR(in->GetString(&path));
      FLOW_RETURN_IF_ERROR(in->GetBool(&r.done));
      FLOW_RETURN_IF_ERROR(in->GetU64(&r.offset));
      FLOW_RETURN_IF_ERROR(in->GetI64(&r.next_line));
      FLOW_RETURN_IF_ERROR(check(index, path));
      if (index <= d.current || r.next_line < 1) {
        return Status::Corruption("file source position: bad entry for a later file");
      }
      d.later[index] = r;
    }
  }
  return d;
}

Status FileSource::RestorePosition(BinaryReader* in) {
  if (!opened_) return Status::Internal("file source: RestorePosition before Open");
  Result<DecodedPosition> d = DecodePosition(in);
  if (!d.ok()) return d.status();
  if (d->subtask != subtask_ || d->parallelism != parallelism_) {
    return Status::InvalidArgument(
        fmt::format("file source: position of subtask {}/{} cannot be restored into subtask {}/{}",
                    d->subtask, d->parallelism, subtask_, parallelism_));
  }
  if (d->done) {
    CloseFile();
    current_ = files_.size();
    return Status::Ok();
  }
  resume_ = std::move(d->later);
  return OpenFile(d->current, d->offset, d->next_line);
}

Status FileSource::RestoreRescaled(const std::vector<OldSourcePosition>& old,
                                   uint32_t old_parallelism) {
  if (!opened_) return Status::Internal("file source: RestoreRescaled before Open");
  if (old.size() != old_parallelism || old_parallelism == 0) {
    return Status::Internal("file source: RestoreRescaled needs one position per old subtask");
  }
  // Old subtask s owned files i with i % old_parallelism == s; each file's state comes from its
  // old owner, and the file goes to its new owner (i % parallelism_).
  std::vector<DecodedPosition> decoded(old_parallelism);
  for (uint32_t s = 0; s < old_parallelism; ++s) {
    if (old[s].finished) {
      decoded[s].subtask = s;
      decoded[s].parallelism = old_parallelism;
      decoded[s].done = true;
      continue;
    }
    BinaryReader reader(old[s].position);
    Result<DecodedPosition> d = DecodePosition(&reader);
    if (!d.ok()) return d.status();
    if (d->subtask != s || d->parallelism != old_parallelism) {
      return Status::Corruption(
          fmt::format("file source position of old subtask {} says subtask {}/{}", s, d->subtask,
                      d->parallelism));
    }
    decoded[s] = std::move(*d);
  }
  resume_.clear();
  for (size_t i = subtask_; i < files_.size(); i += parallelism_) {
    const DecodedPosition& d = decoded[i % old_parallelism];
    Resume r;
    if (d.done || i < d.current) {
      r.done = true;
    } else if (i == d.current) {
      r.offset = d.offset;
      r.next_line = d.next_line;
    } else if (auto it = d.later.find(i); it != d.later.end()) {
      r = it->second;
    } else {
      continue;  // not started
    }
    resume_[i] = r;
  }
  CloseFile();
  size_t first = NextAssigned(0);
  if (first < files_.size()) return OpenAssigned(first);
  current_ = files_.size();
  return Status::Ok();
}

Status FileSource::Close() {
  CloseFile();
  return Status::Ok();
}

}  // namespace flow::rt
