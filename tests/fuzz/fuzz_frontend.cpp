// libFuzzer target over the whole front end: parse, check, and render every diagnostic as text
// and JSON. Runs the phases on the fuzzer's own thread (not the large-stack thread flowc uses), so
// it also proves the nesting limits alone keep recursion bounded.
#include <cstddef>
#include <cstdint>
#include <string>

#include "diag/render.h"
#include "parse/parser.h"
#include "sema/checker.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  flow::diag::SourceManager sm;
  flow::diag::DiagnosticEngine diags;
  uint32_t file = sm.AddFile("fuzz.flow", std::string(reinterpret_cast<const char*>(data), size));
  flow::ast::Program program = flow::parse::Parse(sm, file, diags);
  if (!diags.has_errors()) flow::sema::Check(std::move(program), sm, diags);
  size_t total = 0;
  for (const flow::diag::Diagnostic& d : diags.diagnostics()) {
    total += flow::diag::RenderText(d, sm, true).size();
    total += flow::diag::RenderJson(d, sm).size();
  }
  return total == static_cast<size_t>(-1) ? 1 : 0;  // keeps the rendering from being optimized out
}
