#include "driver/frontend.h"

#include <pthread.h>

#include <sys/stat.h>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace flow::driver {
namespace {

void* Trampoline(void* arg) {
  (*static_cast<const std::function<void()>*>(arg))();
  return nullptr;
}

// Reads a whole file; on failure returns false with a reason like "No such file or directory".
bool ReadFile(const std::string& path, std::string* out, std::string* reason) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    *reason = std::strerror(errno);
    return false;
  }
  if (S_ISDIR(st.st_mode)) {
    *reason = "it is a directory";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *reason = std::strerror(errno);
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) {
    *reason = "read failed";
    return false;
  }
  *out = ss.str();
  if (out->size() > (size_t{1} << 31)) {
    *reason = "larger than 2 GiB";
    return false;
  }
  return true;
}

}  // namespace

void RunWithLargeStack(const std::function<void()>& fn, size_t stack_bytes) {
  pthread_attr_t attr;
  pthread_t thread;
  if (pthread_attr_init(&attr) == 0) {
    bool ok =
        pthread_attr_setstacksize(&attr, stack_bytes) == 0 &&
        pthread_create(&thread, &attr, &Trampoline, const_cast<std::function<void()>*>(&fn)) == 0;
    pthread_attr_destroy(&attr);
    if (ok) {
      pthread_join(thread, nullptr);
      return;
    }
  }
  fn();
}

std::unique_ptr<sema::CheckedProgram> CheckText(const std::string& name, std::string text,
                                                diag::SourceManager& sm,
                                                diag::DiagnosticEngine& diags,
                                                const FrontendOptions& options) {
  uint32_t file = sm.AddFile(name, std::move(text));
  std::unique_ptr<sema::CheckedProgram> result;
  RunWithLargeStack([&] {
    size_t errors_before = diags.error_count();
    ast::Program program = parse::Parse(sm, file, diags, options.limits);
    if (diags.error_count() != errors_before) return;
    result = sema::Check(std::move(program), sm, diags);
  });
  return result;
}

std::unique_ptr<sema::CheckedProgram> CheckFile(const std::string& path, diag::SourceManager& sm,
                                                diag::DiagnosticEngine& diags,
                                                const FrontendOptions& options) {
  std::string text, reason;
  if (!ReadFile(path, &text, &reason)) {
    uint32_t file = sm.AddFile(path, "");
    diag::SourceRange r;
    r.file = file;
    diags.Report(diag::Kind::kIoError, r, "cannot read `" + path + "`: " + reason);
    return nullptr;
  }
  return CheckText(path, std::move(text), sm, diags, options);
}

}  // namespace flow::driver
