#pragma once
// flow::codegen: emits ONE C++ file for a job's plan. The file includes
// flow/runtime/exec/exec.h, defines a struct per record shape (namespace flowjob::rec), a decoder
// per source, a function per fused chain, key/accumulator/output functions per aggregate, an
// encoder per sink, the params, a Build(Job&) function and main() calling flow::rt::RunMain.
// `#line` directives map code that comes from the script to its .flow lines. See docs/codegen.md.
//
// Parts: the graph code of each plan node (its `Stream` calls, which instantiate the engine's
// drivers, channels and the node's operator) is a function `NodeN` guarded by
// `#if !defined(FLOW_SPLIT) || defined(FLOW_PART_N)`; Build and main by `FLOW_PART_MAIN`. Every
// other function is `inline`. Without FLOW_SPLIT the file is one translation unit; `flowc build`
// compiles it several times with -DFLOW_SPLIT and a share of the FLOW_PART_* macros each, in
// parallel, and links the objects (CompileJob).
//
// Threading: pure function of its inputs.

#include <string>
#include <vector>

#include "diag/diagnostic.h"
#include "plan/plan.h"

namespace flow::codegen {

struct GenerateOptions {
  std::string flow_file;   // the script path as shown in #line directives and errors
  std::string cpp_file;    // the generated file's name, for #line directives back to it
  std::string script_dir;  // extern fn headers are relative to it
};

// One part of the generated file: `macro` is defined to compile it; `weight` estimates its
// compile time (relative units) so parts can be packed into balanced translation units.
struct CodePart {
  std::string macro;  // "FLOW_PART_MAIN", "FLOW_PART_3", ...
  int weight = 1;
};

struct GenerateResult {
  std::string cpp;              // empty after an error
  std::vector<CodePart> parts;  // every part of `cpp`, FLOW_PART_MAIN first
};

// A construct code generation does not support yet ("a list<string> field (`tags`) in `format
// csv` is not supported by flowc build yet") is reported to `diags` (kUnsupported, at the
// construct; no location when unknown) and the result is empty.
GenerateResult Generate(const plan::Plan& plan, const GenerateOptions& options,
                        diag::DiagnosticEngine& diags);

// The CMakeLists.txt that builds `cpp_file` into `binary` against the runtime of this build
// (`flowc emit-cpp`).
std::string EmitCMakeLists(const std::string& cpp_file, const std::string& binary);

}  // namespace flow::codegen
