// `flowc lsp`: the language server over stdin/stdout (compiler/lsp/, docs/editors.md).
#include <string>
#include <vector>

#include "driver/commands.h"
#include "lsp/server.h"

namespace flow::driver {
namespace {

constexpr std::string_view kHelp =
    "Usage: flowc lsp [--stdio]\n"
    "\n"
    "Runs the Flow language server: JSON-RPC 2.0 with Content-Length framing on stdin and\n"
    "stdout (the Language Server Protocol), logs on stderr. Editors start it; see\n"
    "docs/editors.md. Features: diagnostics (as `flowc check`), hover, go to definition,\n"
    "references, highlights, completion, signature help, formatting (as `flowc fmt`),\n"
    "document symbols.\n"
    "\n"
    "Options:\n"
    "  --stdio   accepted for clients that pass it; stdio is the only transport\n"
    "\n"
    "Exit codes: 0 after `shutdown` then `exit`, 1 when the client exits (or closes stdin)\n"
    "without `shutdown`, 2 usage error.\n";

int Run(const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (a != "--stdio") return UsageError("unknown option `" + a + "` for `lsp`", "lsp");
  }
  return lsp::RunStdioServer();
}

}  // namespace

const Command kLspCommand = {"lsp", "run the language server for editors (stdio)", kHelp, &Run};

}  // namespace flow::driver
