#include "fd_write.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include <fmt/format.h>

namespace flow::rt {
namespace {

// Blocks SIGPIPE on this thread while writing, so a closed pipe (e.g. `job | head`) is an EPIPE
// error instead of killing the process; a SIGPIPE raised by our write is consumed afterwards.
class SigpipeGuard {
 public:
  SigpipeGuard() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~SigpipeGuard() {
    if (raised_ && !was_pending_) {
      timespec zero{0, 0};
      while (sigtimedwait(&pipe_, nullptr, &zero) < 0 && errno == EINTR) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  void NoteEpipe() { raised_ = true; }

 private:
  sigset_t pipe_;
  sigset_t old_;
  bool was_pending_ = false;
  bool raised_ = false;
};

}  // namespace

Status WriteAll(int fd, std::string_view data, std::string_view what) {
  SigpipeGuard guard;
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      if (err == EPIPE) guard.NoteEpipe();
      return Status::IoError(fmt::format("cannot write {}: {}", what, std::strerror(err)));
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

}  // namespace flow::rt
