// Durable file writes for checkpoints: every write is followed by fsync, renames by an fsync of
// the directory, so a crash leaves either the old or the new file, never a torn one that looks
// complete.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "checkpoint_fs_internal.h"
#include "flow/runtime/checkpoint/checkpoint_storage.h"
#include "flow/runtime/checkpoint/fault_injection.h"

namespace flow::rt::checkpoint_fs {

namespace {
Status Errno(const char* what, const std::string& path) {
  return Status::IoError(std::string(what) + " '" + path + "': " + std::strerror(errno));
}

Status WriteAll(int fd, const std::string& path, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("cannot write", path);
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}
}  // namespace

Status WriteFileDurably(const std::string& path, std::string_view bytes,
                        bool snapshot_fault_point) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("cannot create", path);
  size_t half = snapshot_fault_point ? bytes.size() / 2 : bytes.size();
  Status s = WriteAll(fd, path, bytes.substr(0, half));
  if (s.ok() && snapshot_fault_point) {
    FaultPoint("during-snapshot-write");
    s = WriteAll(fd, path, bytes.substr(half));
  }
  if (s.ok() && ::fsync(fd) != 0) s = Errno("cannot fsync", path);
  if (::close(fd) != 0 && s.ok()) s = Errno("cannot close", path);
  return s;
}

Status WriteFileDurably(const std::string& path, std::string_view bytes) {
  return WriteFileDurably(path, bytes, false);
}

Status WriteFileAtomically(const std::string& path, std::string_view bytes) {
  std::string tmp = path + ".tmp";
  FLOW_RETURN_IF_ERROR(WriteFileDurably(tmp, bytes));
  if (::rename(tmp.c_str(), path.c_str()) != 0) return Errno("cannot rename into", path);
  return SyncDir(std::filesystem::path(path).parent_path().string());
}

Result<std::string> ReadFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status::NotFound("missing file '" + path + "'");
    return Errno("cannot open", path);
  }
  std::string out;
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      Status s = Errno("cannot read", path);
      ::close(fd);
      return s;
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

Status SyncDir(const std::string& dir) {
  std::string d = dir.empty() ? "." : dir;
  int fd = ::open(d.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Errno("cannot open directory", d);
  Status s;
  if (::fsync(fd) != 0) s = Errno("cannot fsync directory", d);
  ::close(fd);
  return s;
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace flow::rt::checkpoint_fs
