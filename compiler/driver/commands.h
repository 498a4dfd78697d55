#pragma once
// The commands flowc knows. Each command is one file (<name>_command.cpp) that defines its
// Command; cli.cpp lists them.

#include <string>
#include <string_view>
#include <vector>

#include "diag/diagnostic.h"
#include "diag/source_manager.h"

namespace flow::driver {

struct Command {
  std::string_view name;
  std::string_view summary;  // one line for `flowc --help`
  std::string_view help;     // full text for `flowc help <name>`
  // Runs with the arguments after the command name; returns the exit code.
  int (*run)(const std::vector<std::string>& args);
  // The arguments after the first file belong to someone else (`flowc run FILE --help` asks the
  // job): only a --help before it shows this command's help.
  bool args_after_file = false;
};

extern const Command kCheckCommand;
extern const Command kBuildCommand;
extern const Command kRunCommand;
extern const Command kEmitCppCommand;
extern const Command kExplainCommand;
extern const Command kCompareStateCommand;
extern const Command kFmtCommand;
extern const Command kLspCommand;

// Prints "flowc: error: <message>" and a hint to stderr; returns 2.
int UsageError(const std::string& message, std::string_view command = {});

// Whether stderr gets colors when a command's color choice is automatic: a terminal, and
// NO_COLOR (no-color.org) unset or empty.
bool AutoColor();
// Every diagnostic as text on stderr (colored when AutoColor()).
void PrintDiagnostics(const diag::DiagnosticEngine& diags, const diag::SourceManager& sm);
// "flowc: internal error: ..." on stderr: a bug of flowc, not of the script.
void PrintInternalError(const std::string& message);

}  // namespace flow::driver
