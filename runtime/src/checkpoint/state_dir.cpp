#include "flow/runtime/checkpoint/state_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string_view>

#include <fmt/format.h>

#include "flow/runtime/checkpoint/checkpoint_storage.h"

namespace flow::rt {
namespace {

namespace fs = std::filesystem;

constexpr const char* kLockFile = "_lock";
constexpr const char* kJobFile = "_job";
constexpr const char* kCommittedFile = "_committed";

std::string Join(const std::string& dir, const char* name) {
  return (fs::path(dir) / name).string();
}

// One line of text, trailing newline dropped; "" when the file does not exist.
Result<std::string> ReadRecord(const std::string& path) {
  if (!checkpoint_fs::Exists(path)) return std::string();
  auto text = checkpoint_fs::ReadFile(path);
  if (!text.ok()) return text.status();
  std::string s = std::move(text).value();
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

bool ParseId(std::string_view s, int64_t* out) {
  if (s.empty() || s.size() > 18) return false;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

}  // namespace

Result<std::unique_ptr<StateDirectory>> StateDirectory::Open(const std::string& dir) {
  if (dir.empty()) return Status::InvalidArgument("--state-dir: empty directory name");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::IoError("--state-dir: cannot create '" + dir + "': " + ec.message());
  const std::string lock_path = Join(dir, kLockFile);
  int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    return Status::IoError("--state-dir: cannot open '" + lock_path + "': " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    char pid[32] = {0};
    ssize_t n = ::pread(fd, pid, sizeof pid - 1, 0);
    ::close(fd);
    if (err != EWOULDBLOCK) {
      return Status::IoError("--state-dir: cannot lock '" + lock_path + "': " + std::strerror(err));
    }
    std::string who = n > 0 ? std::string(pid, static_cast<size_t>(n)) : std::string("?");
    while (!who.empty() && who.back() == '\n') who.pop_back();
    return Status(StatusCode::kFenced,
                  fmt::format("state directory '{}' is in use by another running instance of the "
                              "job (pid {}); stop that one first, or give this one its own "
                              "--state-dir",
                              dir, who));
  }
  // Our pid, for the message above; the lock, not the text, is what excludes.
  const std::string me = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 ||
      ::pwrite(fd, me.data(), me.size(), 0) != static_cast<ssize_t>(me.size())) {
    const int err = errno;
    ::close(fd);
    return Status::IoError("--state-dir: cannot write '" + lock_path + "': " + std::strerror(err));
  }
  std::unique_ptr<StateDirectory> d(new StateDirectory(dir, fd));
  auto job = ReadRecord(Join(dir, kJobFile));
  if (!job.ok()) return job.status();
  d->job_id_ = std::move(job).value();
  auto committed = ReadRecord(Join(dir, kCommittedFile));
  if (!committed.ok()) return committed.status();
  if (!committed->empty() && !ParseId(*committed, &d->committed_)) {
    return Status::Corruption("--state-dir: '" + Join(dir, kCommittedFile) + "' holds `" +
                              *committed + "`, not a checkpoint id");
  }
  return d;
}

StateDirectory::~StateDirectory() {
  if (lock_fd_ >= 0) ::close(lock_fd_);  // closing the last descriptor releases the flock
}

Status StateDirectory::Claim(const std::string& job_id) {
  if (job_id.empty()) return Status::Ok();
  if (job_id_.empty()) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir_, ec)) {
      if (ParseCheckpointDir(e.path().filename().string()) >= 0 &&
          fs::exists(e.path() / "_metadata", ec)) {
        claimed_unrecorded_checkpoints_ = true;
      }
    }
    job_id_ = job_id;
    claim_pending_ = true;
    return claimed_unrecorded_checkpoints_ ? Status::Ok() : ConfirmClaim();
  }
  if (job_id_ == job_id) return Status::Ok();
  return Status::InvalidArgument(fmt::format(
      "state directory '{}' belongs to job `{}`, but this is job `{}` (from --job-id, or compiled "
      "in from the script's name); nothing was changed. To go on with that job's state, run with "
      "--job-id {}; to start a new job, give it its own --state-dir",
      dir_, job_id_, job_id, job_id_));
}

Status StateDirectory::ConfirmClaim() {
  if (!claim_pending_) return Status::Ok();
  FLOW_RETURN_IF_ERROR(checkpoint_fs::WriteFileAtomically(Join(dir_, kJobFile), job_id_ + "\n"));
  claim_pending_ = false;
  return Status::Ok();
}

int64_t StateDirectory::committed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return committed_;
}

Status StateDirectory::RecordCommitted(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (id <= committed_) return Status::Ok();
  FLOW_RETURN_IF_ERROR(
      checkpoint_fs::WriteFileAtomically(Join(dir_, kCommittedFile), std::to_string(id) + "\n"));
  committed_ = id;
  return Status::Ok();
}

}  // namespace flow::rt
