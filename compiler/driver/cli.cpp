#include "driver/cli.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "diag/kinds.h"
#include "diag/render.h"
#include "diag/suggest.h"
#include "driver/commands.h"
#include "flow/version.h"

namespace flow::driver {
namespace {

const std::vector<const Command*>& Commands() {
  static const std::vector<const Command*> commands = {
      &kCheckCommand,   &kBuildCommand,        &kRunCommand, &kEmitCppCommand,
      &kExplainCommand, &kCompareStateCommand, &kFmtCommand, &kLspCommand};
  return commands;
}

const Command* FindCommand(std::string_view name) {
  for (const Command* c : Commands()) {
    if (c->name == name) return c;
  }
  return nullptr;
}

void PrintHelp() {
  std::printf("flowc %s - the Flow streaming dataflow compiler\n\n", kVersion);
  std::printf("Usage: flowc <command> [options] [files]\n\nCommands:\n");
  for (const Command* c : Commands())
    std::printf("  %-10s %.*s\n", std::string(c->name).c_str(), static_cast<int>(c->summary.size()),
                c->summary.data());
  std::printf("  %-10s %s\n", "help", "show help for a command: flowc help <command>");
  std::printf("  %-10s %s\n", "", "list every diagnostic kind: flowc help diagnostics");
  std::printf("\nOptions:\n  --help, -h   show this help\n  --version    print the version\n");
  std::printf("\nExit codes: 0 ok, 1 the script has errors, 2 usage error.\n");
}

int UnknownCommand(const std::string& name) {
  std::vector<std::string> names;
  for (const Command* c : Commands()) names.emplace_back(c->name);
  names.emplace_back("help");
  std::string message = "unknown command `" + name + "`";
  if (auto best = diag::ClosestMatch(name, names)) message += "; did you mean `" + *best + "`?";
  return UsageError(message);
}

}  // namespace

bool AutoColor() {
  const char* no_color = std::getenv("NO_COLOR");
  return isatty(STDERR_FILENO) && (no_color == nullptr || *no_color == '\0');
}

void PrintDiagnostics(const diag::DiagnosticEngine& diags, const diag::SourceManager& sm) {
  const bool color = AutoColor();
  for (const diag::Diagnostic& d : diags.diagnostics())
    std::fputs(diag::RenderText(d, sm, color).c_str(), stderr);
}

void PrintInternalError(const std::string& message) {
  std::fprintf(stderr, "flowc: internal error: %s\n", message.c_str());
}

int UsageError(const std::string& message, std::string_view command) {
  std::fprintf(stderr, "flowc: error: %s\n", message.c_str());
  if (command.empty()) {
    std::fprintf(stderr, "run `flowc --help` for usage\n");
  } else {
    std::fprintf(stderr, "run `flowc help %.*s` for usage\n", static_cast<int>(command.size()),
                 command.data());
  }
  return 2;
}

int RunCli(int argc, char** argv) {
  std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + (argc > 0 ? argc : 0));
  if (args.empty()) {
    PrintHelp();
    return 2;
  }
  const std::string& first = args[0];
  if (first == "--help" || first == "-h") {
    PrintHelp();
    return 0;
  }
  if (first == "--version") {
    std::printf("flowc %s\n", kVersion);
    return 0;
  }
  if (first == "help") {
    if (args.size() == 1) {
      PrintHelp();
      return 0;
    }
    if (args[1] == "diagnostics") {
      for (const diag::KindInfo& k : diag::AllKinds()) {
        std::printf("%-26s %-7s %.*s\n", std::string(k.id).c_str(),
                    k.severity == diag::Severity::kWarning ? "warning" : "error",
                    static_cast<int>(k.summary.size()), k.summary.data());
      }
      return 0;
    }
    const Command* c = FindCommand(args[1]);
    if (c == nullptr) return UnknownCommand(args[1]);
    std::printf("%.*s", static_cast<int>(c->help.size()), c->help.data());
    return 0;
  }
  if (!first.empty() && first[0] == '-') return UsageError("unknown option `" + first + "`");
  const Command* c = FindCommand(first);
  if (c == nullptr) return UnknownCommand(first);
  std::vector<std::string> rest(args.begin() + 1, args.end());
  for (const std::string& a : rest) {
    if (c->args_after_file && (a == "--" || a.empty() || a[0] != '-')) break;
    if (a == "--help" || a == "-h") {
      std::printf("%.*s", static_cast<int>(c->help.size()), c->help.data());
      return 0;
    }
  }
  return c->run(rest);
}

}  // namespace flow::driver
