#pragma once
// flow::frontend: the one pipeline every command and the language server run on a script:
//   read -> parse -> check -> lower -> passes -> generate C++ (in memory)
// up to the stage the caller needs. Everything the script can be blamed for goes to one
// DiagnosticEngine with a location, so `flowc check` and the editor report what `flowc build`
// would. A stage runs only when the ones before it found no error (later stages assume a valid
// input; sema is skipped after syntax errors to avoid cascades).
//
// Threading: runs the phases on a private thread with a large stack (see RunWithLargeStack) so
// even legal deep nesting cannot exhaust the caller's stack; the call blocks until done.

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "codegen/codegen.h"
#include "diag/diagnostic.h"
#include "diag/source_manager.h"
#include "parse/parser.h"
#include "plan/plan.h"
#include "sema/checker.h"

namespace flow::frontend {

enum class Stage {
  kCheck,     // parse and check: the checked program
  kPlan,      // + lower and the plan passes: the optimized plan
  kGenerate,  // + code generation into memory: the C++ of the job
};

struct Options {
  parse::ParseLimits limits;
  Stage until = Stage::kGenerate;
  std::set<std::string> disabled_passes;  // plan pass names (plan::AllPasses)
  // For kGenerate. flow_file defaults to the script's path as given.
  codegen::GenerateOptions generate;
};

struct Compilation {
  std::unique_ptr<sema::CheckedProgram> program;  // null when unreadable or a syntax error
  std::unique_ptr<plan::Plan> plan;               // set from kPlan when nothing failed before
  std::string cpp;                                // set at kGenerate when nothing failed
  std::vector<codegen::CodePart> parts;           // the parts of `cpp` (codegen.h)
  // A bug of flowc, not of the script (a pass broke the plan's invariants): the message and the
  // plan as it was. Not a diagnostic; commands print it as an internal error.
  std::string internal_error;
  uint32_t file = 0;  // the script's SourceManager id
  // True when every requested stage ran and produced its result.
  bool ok(Stage until) const;
};

// Reads `path` into `sm` (reporting io-error on failure) and runs the pipeline.
Compilation CompileFile(const std::string& path, diag::SourceManager& sm,
                        diag::DiagnosticEngine& diags, const Options& options = {});
// Same, for text already in memory (the language server, tests, the fuzzer).
Compilation CompileText(const std::string& name, std::string text, diag::SourceManager& sm,
                        diag::DiagnosticEngine& diags, const Options& options = {});

// Parse and check only (Stage::kCheck): the checked program, or null.
std::unique_ptr<sema::CheckedProgram> CheckFile(const std::string& path, diag::SourceManager& sm,
                                                diag::DiagnosticEngine& diags);
std::unique_ptr<sema::CheckedProgram> CheckText(const std::string& name, std::string text,
                                                diag::SourceManager& sm,
                                                diag::DiagnosticEngine& diags);

// Runs `fn` on a new thread with a `stack_bytes` stack and waits for it. Falls back to calling
// `fn` directly if the thread cannot be created. Default: 256 MiB (reserved, touched lazily).
void RunWithLargeStack(const std::function<void()>& fn, size_t stack_bytes = size_t{256} << 20);

}  // namespace flow::frontend
