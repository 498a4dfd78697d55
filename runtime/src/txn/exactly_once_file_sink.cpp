#include "flow/runtime/txn/exactly_once_file_sink.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "flow/runtime/checkpoint/checkpoint_storage.h"  // checkpoint_fs
#include "flow/runtime/checkpoint/fault_injection.h"

namespace flow::rt {
namespace {

constexpr std::string_view kInProgress = ".inprogress";
constexpr std::string_view kPending = ".pending-";

std::string InProgressName(const std::string& final_name) {
  return "." + final_name + std::string(kInProgress);
}
std::string PendingName(const std::string& final_name, int64_t checkpoint_id) {
  return fmt::format(".{}{}{}", final_name, kPending, checkpoint_id);
}

Status Errno(std::string_view what, const std::string& path) {
  return Status::IoError(
      fmt::format("exactly-once file sink: {} '{}': {}", what, path, std::strerror(errno)));
}

bool ParseU64(std::string_view s, uint64_t* out) {
  if (s.empty() || s.size() > 19) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  *out = v;
  return true;
}

// A directory entry that belongs to this sink, decoded from its name.
struct PartName {
  enum class Kind { kFinal, kInProgress, kPending } kind = Kind::kFinal;
  std::string final_name;
  uint32_t subtask = 0;
  uint64_t part = 0;
  int64_t checkpoint_id = 0;  // kPending only
};

bool ParseFinal(std::string_view name, const ExactlyOnceFileSinkOptions& o, PartName* out) {
  std::string head = o.prefix + "-";
  if (name.size() < head.size() + o.suffix.size() || name.substr(0, head.size()) != head ||
      name.substr(name.size() - o.suffix.size()) != o.suffix) {
    return false;
  }
  std::string_view mid = name.substr(head.size(), name.size() - head.size() - o.suffix.size());
  size_t dash = mid.find('-');
  uint64_t subtask = 0;
  if (dash == std::string_view::npos || !ParseU64(mid.substr(0, dash), &subtask) ||
      !ParseU64(mid.substr(dash + 1), &out->part) || subtask > UINT32_MAX) {
    return false;
  }
  out->subtask = static_cast<uint32_t>(subtask);
  out->final_name = std::string(name);
  return true;
}

bool ParsePartName(std::string_view name, const ExactlyOnceFileSinkOptions& o, PartName* out) {
  if (name.empty() || name[0] != '.') {
    out->kind = PartName::Kind::kFinal;
    return ParseFinal(name, o, out);
  }
  name.remove_prefix(1);
  if (name.size() > kInProgress.size() &&
      name.substr(name.size() - kInProgress.size()) == kInProgress) {
    out->kind = PartName::Kind::kInProgress;
    return ParseFinal(name.substr(0, name.size() - kInProgress.size()), o, out);
  }
  size_t at = name.rfind(kPending);
  uint64_t id = 0;
  if (at == std::string_view::npos || !ParseU64(name.substr(at + kPending.size()), &id))
    return false;
  out->kind = PartName::Kind::kPending;
  out->checkpoint_id = static_cast<int64_t>(id);
  return ParseFinal(name.substr(0, at), o, out);
}

}  // namespace

ExactlyOnceFileSink::~ExactlyOnceFileSink() {
  if (fd_ >= 0) ::close(fd_);
}

std::string ExactlyOnceFileSink::FinalName(uint32_t subtask, uint64_t part) const {
  return fmt::format("{}-{}-{}{}", options_.prefix, subtask, part, options_.suffix);
}

Status ExactlyOnceFileSink::Open(uint32_t subtask, uint32_t parallelism) {
  if (opened_) return Status::Internal("exactly-once file sink: opened twice");
  if (options_.directory.empty()) {
    return Status::InvalidArgument("exactly-once file sink: `directory` is empty");
  }
  if (options_.prefix.empty() || options_.prefix[0] == '.' ||
      options_.prefix.find('/') != std::string::npos ||
      options_.suffix.find('/') != std::string::npos) {
    return Status::InvalidArgument(fmt::format(
        "exactly-once file sink: prefix `{}` / suffix `{}` must be non-empty, not start with '.' "
        "and contain no '/'",
        options_.prefix, options_.suffix));
  }
  if (parallelism == 0 || subtask >= parallelism) {
    return Status::InvalidArgument(
        fmt::format("exactly-once file sink: subtask {} out of range for parallelism {}", subtask,
                    parallelism));
  }
  if (options_.roll_bytes == 0) {
    return Status::InvalidArgument("exactly-once file sink: `roll_bytes` must be > 0");
  }
  std::error_code ec;
  std::filesystem::create_directories(options_.directory, ec);
  if (ec) {
    return Status::IoError(fmt::format("exactly-once file sink: cannot create directory '{}': {}",
                                       options_.directory, ec.message()));
  }
  subtask_ = subtask;
  parallelism_ = parallelism;
  opened_ = true;
  return Status::Ok();
}

Status ExactlyOnceFileSink::CommitFile(const std::string& final_name, int64_t checkpoint_id) {
  std::string from = Path(PendingName(final_name, checkpoint_id));
  std::string to = Path(final_name);
  if (::rename(from.c_str(), to.c_str()) == 0) return Status::Ok();
  // Committed before (e.g. by a commit that crashed before its bookkeeping): fine.
  if (errno == ENOENT && checkpoint_fs::Exists(to)) return Status::Ok();
  if (errno == ENOENT) {
    return Status::Corruption(fmt::format(
        "exactly-once file sink: pending file '{}' of checkpoint {} is missing and '{}' was never "
        "committed: its records are lost",
        from, checkpoint_id, to));
  }
  return Errno("cannot commit (rename) to", to);
}

Status ExactlyOnceFileSink::Recover(int64_t restored_checkpoint_id) {
  if (!opened_) return Status::Internal("exactly-once file sink: Recover before Open");
  if (recovered_) return Status::Internal("exactly-once file sink: Recover called twice");
  DIR* dir = ::opendir(options_.directory.c_str());
  if (dir == nullptr) return Errno("cannot list directory", options_.directory);
  std::vector<PartName> entries;
  while (dirent* e = ::readdir(dir)) {
    PartName p;
    if (ParsePartName(e->d_name, options_, &p)) entries.push_back(std::move(p));
  }
  ::closedir(dir);
  uint64_t next_part = 0;
  for (const PartName& p : entries) {
    if (p.subtask == subtask_) next_part = std::max(next_part, p.part + 1);
    if (p.subtask % parallelism_ != subtask_ || p.kind == PartName::Kind::kFinal) continue;
    std::string path = p.kind == PartName::Kind::kInProgress
                           ? Path(InProgressName(p.final_name))
                           : Path(PendingName(p.final_name, p.checkpoint_id));
    // The name's checkpoint id decides: pre-committed for a checkpoint <= R means complete (or
    // subsumed by R); anything later belongs to an epoch the restore drops.
    const bool commit =
        p.kind == PartName::Kind::kPending && p.checkpoint_id <= restored_checkpoint_id;
    if (commit) {
      FLOW_RETURN_IF_ERROR(CommitFile(p.final_name, p.checkpoint_id));
    } else if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      return Errno("cannot delete orphan", path);
    }
  }
  FLOW_RETURN_IF_ERROR(checkpoint_fs::SyncDir(options_.directory));
  next_part_ = next_part;
  last_precommit_ = restored_checkpoint_id;
  recovered_ = true;
  return Status::Ok();
}

Status ExactlyOnceFileSink::BeginTransaction() {
  if (!recovered_)
    return Status::Internal("exactly-once file sink: BeginTransaction before Recover");
  if (aborted_) return Status::Internal("exactly-once file sink: BeginTransaction after Abort");
  if (in_transaction_) return Status::Internal("exactly-once file sink: transaction already open");
  in_transaction_ = true;
  return Status::Ok();
}

Status ExactlyOnceFileSink::StartPart() {
  current_final_ = FinalName(subtask_, next_part_++);
  std::string path = Path(InProgressName(current_final_));
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) return Errno("cannot create", path);
  file_bytes_ = 0;
  return Status::Ok();
}

Status ExactlyOnceFileSink::WriteBuffer() {
  size_t done = 0;
  while (done < buf_.size()) {
    ssize_t n = ::write(fd_, buf_.data() + done, buf_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("cannot write", Path(InProgressName(current_final_)));
    done += static_cast<size_t>(n);
  }
  file_bytes_ += buf_.size();
  buf_.clear();
  return Status::Ok();
}

Status ExactlyOnceFileSink::FinishPart() {
  if (fd_ < 0) return Status::Ok();
  FLOW_RETURN_IF_ERROR(WriteBuffer());
  std::string path = Path(InProgressName(current_final_));
  if (::fsync(fd_) != 0) return Errno("cannot fsync", path);
  int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) return Errno("cannot close", path);
  epoch_files_.push_back(current_final_);
  return Status::Ok();
}

Status ExactlyOnceFileSink::Write(std::string_view /*key*/, std::string_view payload,
                                  TimestampMs /*timestamp*/) {
  if (!in_transaction_)
    return Status::Internal("exactly-once file sink: Write outside a transaction");
  uint64_t line = payload.size() + 1;
  if (fd_ >= 0 && file_bytes_ + buf_.size() + line > options_.roll_bytes) {
    FLOW_RETURN_IF_ERROR(FinishPart());
  }
  if (fd_ < 0) FLOW_RETURN_IF_ERROR(StartPart());
  buf_.append(payload.data(), payload.size());
  buf_.push_back('\n');
  if (buf_.size() >= options_.buffer_bytes) return WriteBuffer();
  return Status::Ok();
}

Status ExactlyOnceFileSink::PreCommit(int64_t checkpoint_id) {
  if (!in_transaction_)
    return Status::Internal("exactly-once file sink: PreCommit outside a transaction");
  if (checkpoint_id <= last_precommit_) {
    return Status::Internal(fmt::format("exactly-once file sink: PreCommit({}) after PreCommit({})",
                                        checkpoint_id, last_precommit_));
  }
  FLOW_RETURN_IF_ERROR(FinishPart());
  for (const std::string& name : epoch_files_) {
    std::string from = Path(InProgressName(name));
    std::string to = Path(PendingName(name, checkpoint_id));
    if (::rename(from.c_str(), to.c_str()) != 0) return Errno("cannot rename to", to);
  }
  if (!epoch_files_.empty()) {
    // The pending names must survive a crash before the checkpoint's metadata is written.
    FLOW_RETURN_IF_ERROR(checkpoint_fs::SyncDir(options_.directory));
    pending_[checkpoint_id] = std::move(epoch_files_);
  }
  epoch_files_.clear();
  in_transaction_ = false;
  last_precommit_ = checkpoint_id;
  FaultPoint("after-precommit");
  return Status::Ok();
}

Status ExactlyOnceFileSink::Commit(int64_t checkpoint_id) {
  if (aborted_) return Status::Internal("exactly-once file sink: Commit after Abort");
  bool any = false;
  for (const auto& [id, names] : pending_) {
    if (id > checkpoint_id) break;
    for (const std::string& name : names) {
      FLOW_RETURN_IF_ERROR(CommitFile(name, id));
      if (!any) FaultPoint("during-commit");
      any = true;
    }
  }
  if (!any) return Status::Ok();
  FLOW_RETURN_IF_ERROR(checkpoint_fs::SyncDir(options_.directory));
  FaultPoint("after-commit-before-cleanup");
  pending_.erase(pending_.begin(), pending_.upper_bound(checkpoint_id));
  return Status::Ok();
}

Status ExactlyOnceFileSink::Abort(int64_t checkpoint_id) {
  aborted_ = true;
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
    epoch_files_.push_back(current_final_);
  }
  buf_.clear();
  Status first;
  auto remove = [&](const std::string& path) {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT && first.ok())
      first = Errno("cannot delete", path);
  };
  for (const std::string& name : epoch_files_) remove(Path(InProgressName(name)));
  epoch_files_.clear();
  for (const auto& [id, names] : pending_) {
    if (id > checkpoint_id) break;
    for (const std::string& name : names) remove(Path(PendingName(name, id)));
  }
  pending_.erase(pending_.begin(), pending_.upper_bound(checkpoint_id));
  in_transaction_ = false;
  return first;
}

Status ExactlyOnceFileSink::Close() {
  if (fd_ < 0) return Status::Ok();
  // The open epoch stays an orphan in-progress file: the next Recover deletes it.
  Status s = WriteBuffer();
  ::close(fd_);
  fd_ = -1;
  return s;
}

}  // namespace flow::rt
