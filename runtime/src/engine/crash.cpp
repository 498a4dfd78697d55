// A job that crashes says where: a fatal signal prints its name and the stack of the thread it
// hit to stderr before the default action (exit by the signal, a core where enabled). A crash is
// always a bug (ours or a library's); without this, a job dies with nothing in its log.

#include <execinfo.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "flow/runtime/engine/main.h"

namespace flow::rt {
namespace {

constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
constexpr int kMaxFrames = 64;

void WriteText(const char* text) {
  // write(2) only: the handler may run with the heap or stdio in any state.
  const size_t n = strlen(text);
  if (write(STDERR_FILENO, text, n) < 0) return;
}

extern "C" void OnFatalSignal(int sig) {
  WriteText("\nflow: fatal signal ");
  const char* name = sigabbrev_np(sig);
  WriteText(name != nullptr ? name : "?");
  WriteText(" (a bug: please report it with this stack); stack of the failing thread:\n");
  void* frames[kMaxFrames];
  const int n = backtrace(frames, kMaxFrames);
  backtrace_symbols_fd(frames, n, STDERR_FILENO);
  // SA_RESETHAND restored the default action: raising again ends the process by the signal.
  raise(sig);
}

}  // namespace

void InstallCrashHandlers() {
  // backtrace() loads libgcc on its first call, which allocates: done now, not in the handler.
  void* warm[1];
  (void)backtrace(warm, 1);
  struct sigaction sa {};
  sa.sa_handler = OnFatalSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND | SA_NODEFER;
  for (int sig : kFatalSignals) sigaction(sig, &sa, nullptr);
}

}  // namespace flow::rt
