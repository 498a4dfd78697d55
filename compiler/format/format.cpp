#include "format/format.h"

#include "diag/diagnostic.h"
#include "diag/render.h"
#include "diag/source_manager.h"
#include "format/comments.h"
#include "format/layout.h"
#include "format/printer.h"
#include "frontend/frontend.h"
#include "parse/parser.h"

namespace flow::format {

FormatResult FormatSource(std::string_view path, std::string_view source,
                          const FormatOptions& options) {
  FormatResult result;
  diag::SourceManager sm;
  diag::DiagnosticEngine diags;
  uint32_t file = sm.AddFile(std::string(path), std::string(source));
  // The parser and the printer recurse over nesting; the large stack keeps legal deep nesting
  // from exhausting the caller's.
  frontend::RunWithLargeStack([&] {
    ast::Program program = parse::Parse(sm, file, diags);
    if (diags.has_errors()) return;
    const std::string& text = sm.text(file);
    Layout layout(text, ScanComments(text), options);
    Printer printer(text, layout);
    printer.Program(program);
    result.text = layout.Finish();
  });
  if (diags.has_errors()) {
    for (const diag::Diagnostic& d : diags.diagnostics())
      result.diagnostics += diag::RenderText(d, sm, /*color=*/false);
    result.error_count = diags.error_count();
    result.text.clear();
    return result;
  }
  result.ok = true;
  return result;
}

}  // namespace flow::format
