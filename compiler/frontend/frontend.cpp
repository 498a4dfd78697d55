#include "frontend/frontend.h"

#include <pthread.h>

#include <sys/stat.h>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "plan/passes.h"

namespace flow::frontend {
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

// Lowering and the passes: what the language allows but flowc build cannot compile yet is an
// `unsupported` error at its construct; pass warnings keep their kinds.
void RunPlan(const Options& options, diag::DiagnosticEngine& diags, Compilation* c) {
  std::unique_ptr<plan::Plan> lowered = plan::Lower(*c->program, diags);
  if (!lowered) return;
  std::string internal = plan::RunPasses(*lowered, options.disabled_passes, &diags);
  if (!internal.empty()) {
    c->internal_error = internal + "\n" + lowered->ToString();
    return;
  }
  c->plan = std::move(lowered);
}

void Generate(const std::string& name, const Options& options, diag::DiagnosticEngine& diags,
              Compilation* c) {
  codegen::GenerateOptions generate = options.generate;
  if (generate.flow_file.empty()) generate.flow_file = name;
  codegen::GenerateResult generated = codegen::Generate(*c->plan, generate, diags);
  if (generated.cpp.empty()) return;
  c->cpp = std::move(generated.cpp);
  c->parts = std::move(generated.parts);
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

bool Compilation::ok(Stage until) const {
  if (program == nullptr || !internal_error.empty()) return false;
  if (until >= Stage::kPlan && plan == nullptr) return false;
  return until < Stage::kGenerate || !cpp.empty();
}

Compilation CompileText(const std::string& name, std::string text, diag::SourceManager& sm,
                        diag::DiagnosticEngine& diags, const Options& options) {
  Compilation c;
  c.file = sm.AddFile(name, std::move(text));
  RunWithLargeStack([&] {
    size_t errors_before = diags.error_count();
    ast::Program program = parse::Parse(sm, c.file, diags, options.limits);
    if (diags.error_count() != errors_before) return;
    c.program = sema::Check(std::move(program), sm, diags);
    if (c.program == nullptr || diags.error_count() != errors_before) return;
    if (options.until >= Stage::kPlan) RunPlan(options, diags, &c);
    if (c.plan != nullptr && options.until >= Stage::kGenerate) Generate(name, options, diags, &c);
  });
  return c;
}

Compilation CompileFile(const std::string& path, diag::SourceManager& sm,
                        diag::DiagnosticEngine& diags, const Options& options) {
  std::string text, reason;
  if (!ReadFile(path, &text, &reason)) {
    Compilation c;
    c.file = sm.AddFile(path, "");
    diag::SourceRange r;
    r.file = c.file;
    diags.Report(diag::Kind::kIoError, r, "cannot read `" + path + "`: " + reason);
    return c;
  }
  return CompileText(path, std::move(text), sm, diags, options);
}

std::unique_ptr<sema::CheckedProgram> CheckText(const std::string& name, std::string text,
                                                diag::SourceManager& sm,
                                                diag::DiagnosticEngine& diags) {
  Options options;
  options.until = Stage::kCheck;
  return CompileText(name, std::move(text), sm, diags, options).program;
}

std::unique_ptr<sema::CheckedProgram> CheckFile(const std::string& path, diag::SourceManager& sm,
                                                diag::DiagnosticEngine& diags) {
  Options options;
  options.until = Stage::kCheck;
  return CompileFile(path, sm, diags, options).program;
}

}  // namespace flow::frontend
