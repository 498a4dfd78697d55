#include "flow/runtime/connectors/file_sink.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "fd_write.h"

namespace flow::rt {
namespace {

Status SyncDirectory(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    return Status::IoError(
        fmt::format("file sink: cannot open directory '{}': {}", dir, std::strerror(errno)));
  }
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) {
    return Status::IoError(
        fmt::format("file sink: cannot fsync directory '{}': {}", dir, std::strerror(err)));
  }
  return Status::Ok();
}

}  // namespace

FileSink::~FileSink() {
  if (fd_ >= 0) ::close(fd_);
}

Status FileSink::Open(uint32_t subtask, uint32_t parallelism) {
  if (options_.directory.empty()) return Status::InvalidArgument("file sink: `directory` is empty");
  if (options_.roll_bytes == 0) return Status::InvalidArgument("file sink: roll_bytes must be > 0");
  subtask_ = subtask;
  std::error_code ec;
  std::filesystem::create_directories(options_.directory, ec);
  if (ec) {
    return Status::IoError(fmt::format("file sink: cannot create directory '{}': {}",
                                       options_.directory, ec.message()));
  }
  // Continue after the highest existing part of this subtask.
  std::string stem = fmt::format("{}-{}-", options_.prefix, subtask_);
  next_part_ = 0;
  for (const auto& entry : std::filesystem::directory_iterator(options_.directory, ec)) {
    std::string name = entry.path().filename().string();
    if (!name.starts_with(stem) || !name.ends_with(options_.suffix)) continue;
    std::string_view digits(name);
    digits = digits.substr(stem.size(), digits.size() - stem.size() - options_.suffix.size());
    uint64_t n = 0;
    auto [ptr, perr] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (perr == std::errc() && ptr == digits.data() + digits.size() && n + 1 > next_part_) {
      next_part_ = n + 1;
    }
  }
  if (ec) {
    return Status::IoError(
        fmt::format("file sink: cannot list directory '{}': {}", options_.directory, ec.message()));
  }
  opened_ = true;
  return Status::Ok();
}

Status FileSink::StartPart() {
  path_ = fmt::format("{}/{}-{}-{}{}", options_.directory, options_.prefix, subtask_, next_part_,
                      options_.suffix);
  ++next_part_;
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    return Status::IoError(
        fmt::format("file sink: cannot create '{}': {}", path_, std::strerror(errno)));
  }
  file_bytes_ = 0;
  return Status::Ok();
}

Status FileSink::WriteBuffer() {
  if (buf_.empty()) return Status::Ok();
  FLOW_RETURN_IF_ERROR(WriteAll(fd_, buf_, path_));
  file_bytes_ += buf_.size();
  buf_.clear();
  return Status::Ok();
}

Status FileSink::FinishPart() {
  FLOW_RETURN_IF_ERROR(WriteBuffer());
  if (::fsync(fd_) != 0) {
    return Status::IoError(
        fmt::format("file sink: cannot fsync '{}': {}", path_, std::strerror(errno)));
  }
  ::close(fd_);
  fd_ = -1;
  return SyncDirectory(options_.directory);
}

Status FileSink::Write(std::string_view key, std::string_view payload, TimestampMs timestamp) {
  if (!opened_) return Status::Internal("file sink: Write before Open");
  uint64_t record = payload.size() + 1;
  if (fd_ >= 0 && file_bytes_ + buf_.size() > 0 &&
      file_bytes_ + buf_.size() + record > options_.roll_bytes) {
    FLOW_RETURN_IF_ERROR(FinishPart());
  }
  if (fd_ < 0) FLOW_RETURN_IF_ERROR(StartPart());
  buf_.append(payload);
  buf_.push_back('\n');
  if (buf_.size() >= options_.buffer_bytes) return WriteBuffer();
  return Status::Ok();
}

Status FileSink::Flush() {
  if (fd_ < 0) return Status::Ok();
  FLOW_RETURN_IF_ERROR(WriteBuffer());
  if (::fsync(fd_) != 0) {
    return Status::IoError(
        fmt::format("file sink: cannot fsync '{}': {}", path_, std::strerror(errno)));
  }
  return SyncDirectory(options_.directory);
}

Status FileSink::Close() {
  if (fd_ < 0) return Status::Ok();
  return FinishPart();
}

}  // namespace flow::rt
