#pragma once
// Shared by `flowc build`, `flowc run` and `flowc emit-cpp`: front end, lowering, passes and code
// generation for one script. Diagnostics and errors are printed to stderr.

#include <set>
#include <string>
#include <vector>

#include "codegen/codegen.h"
#include "codegen/compile.h"

namespace flow::driver {

struct GeneratedJob {
  int exit_code = 0;  // 0 when `cpp` is set; else 1 (script errors, unsupported) or 2
  std::string cpp;
  std::string flow_path;                 // absolute path of the script
  std::vector<codegen::CodePart> parts;  // the file's parts (codegen.h)
};

// `cpp_name` is the name the generated file will have (for #line directives).
GeneratedJob GenerateJob(const std::string& path, const std::set<std::string>& disabled_passes,
                         const std::string& cpp_name);

// After CompileJob failed on `cpp` (generated from `file`): writes the compiler's output to
// `cpp`.log and prints the first error (at its script line when the #line directives put it
// there) and both paths. Returns 1, the exit code.
int ReportCompileFailure(const std::string& file, const GeneratedJob& job,
                         const codegen::CompileResult& r, const std::string& cpp);

}  // namespace flow::driver
