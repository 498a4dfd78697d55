#pragma once
// The whole front end for one file: read, parse, check. Shared by `flowc check` and later by
// build/emit-cpp/fmt/lsp. Diagnostics go to `diags`; the result is null only when the file could
// not be read or did not parse (sema is skipped after syntax errors to avoid cascades).
//
// Threading: runs the phases on a private thread with a large stack (see RunWithLargeStack) so even
// legal deep nesting cannot exhaust the caller's stack; the call blocks until done.

#include <functional>
#include <memory>
#include <string>

#include "diag/diagnostic.h"
#include "diag/source_manager.h"
#include "parse/parser.h"
#include "sema/checker.h"

namespace flow::driver {

struct FrontendOptions {
  parse::ParseLimits limits;
};

// Reads `path` into `sm` (reporting io-error on failure) and runs parse + sema.
std::unique_ptr<sema::CheckedProgram> CheckFile(const std::string& path, diag::SourceManager& sm,
                                                diag::DiagnosticEngine& diags,
                                                const FrontendOptions& options = {});
// Same, for text already in memory (used by tests and the fuzzer).
std::unique_ptr<sema::CheckedProgram> CheckText(const std::string& name, std::string text,
                                                diag::SourceManager& sm,
                                                diag::DiagnosticEngine& diags,
                                                const FrontendOptions& options = {});

// Runs `fn` on a new thread with a `stack_bytes` stack and waits for it. Falls back to calling
// `fn` directly if the thread cannot be created. Default: 256 MiB (reserved, touched lazily).
void RunWithLargeStack(const std::function<void()>& fn, size_t stack_bytes = size_t{256} << 20);

}  // namespace flow::driver
