// `flowc check FILE...`: parse and type-check scripts without building them.
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "diag/render.h"
#include "driver/commands.h"
#include "frontend/frontend.h"

namespace flow::driver {
namespace {

constexpr std::string_view kHelp =
    "Usage: flowc check [options] FILE...\n"
    "\n"
    "Parses and type-checks each FILE independently and reports every problem found.\n"
    "\n"
    "Options:\n"
    "  --diagnostics-format text|json   text (default): `file:line:col: error: ...` with the "
    "source\n"
    "                                   line and a caret, on stderr. json: one JSON object per\n"
    "                                   diagnostic per line on stdout (see docs/compiler.md).\n"
    "  --color auto|always|never        colour text diagnostics (auto: when stderr is a terminal)\n"
    "  --max-errors N                   stop reporting after N errors per file (default 50)\n"
    "\n"
    "Exit codes: 0 no errors (warnings allowed), 1 errors found, 2 usage error.\n";

// Accepts `--name value` and `--name=value`; returns false (after a usage error) when the value is
// missing.
bool TakeValue(const std::vector<std::string>& args, size_t* i, const std::string& name,
               std::string* value) {
  const std::string& a = args[*i];
  if (a.size() > name.size() && a.compare(0, name.size(), name) == 0 && a[name.size()] == '=') {
    *value = a.substr(name.size() + 1);
    return true;
  }
  if (*i + 1 >= args.size()) return false;
  *value = args[++*i];
  return true;
}

bool Is(const std::string& arg, const std::string& name) {
  return arg == name || arg.rfind(name + "=", 0) == 0;
}

int Run(const std::vector<std::string>& args) {
  std::string format = "text", color = "auto";
  size_t max_errors = 50;
  std::vector<std::string> files;
  bool only_files = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (only_files || a.empty() || a[0] != '-' || a == "-") {
      files.push_back(a);
    } else if (a == "--") {
      only_files = true;
    } else if (Is(a, "--diagnostics-format")) {
      if (!TakeValue(args, &i, "--diagnostics-format", &format))
        return UsageError("`--diagnostics-format` needs a value: text or json", "check");
      if (format != "text" && format != "json")
        return UsageError("`--diagnostics-format` must be text or json, not `" + format + "`",
                          "check");
    } else if (Is(a, "--color")) {
      if (!TakeValue(args, &i, "--color", &color))
        return UsageError("`--color` needs a value: auto, always or never", "check");
      if (color != "auto" && color != "always" && color != "never")
        return UsageError("`--color` must be auto, always or never, not `" + color + "`", "check");
    } else if (Is(a, "--max-errors")) {
      std::string n;
      if (!TakeValue(args, &i, "--max-errors", &n) || n.empty() || n.size() > 6 ||
          n.find_first_not_of("0123456789") != std::string::npos || std::stoul(n) == 0) {
        return UsageError("`--max-errors` needs a positive number", "check");
      }
      max_errors = std::stoul(n);
    } else {
      return UsageError("unknown option `" + a + "` for `check`", "check");
    }
  }
  if (files.empty()) return UsageError("`check` needs at least one file", "check");
  bool use_color = color == "always" || (color == "auto" && AutoColor());
  size_t total_errors = 0, total_warnings = 0, failed_files = 0;
  for (const std::string& path : files) {
    diag::SourceManager sm;
    diag::DiagnosticEngine diags(max_errors);
    // Up to the generated C++ (in memory, no C++ compiler): every error `flowc build` can blame
    // on the script is reported here too.
    frontend::Compilation c = frontend::CompileFile(path, sm, diags);
    for (const diag::Diagnostic& d : diags.diagnostics()) {
      if (format == "json") {
        std::fputs(diag::RenderJson(d, sm).c_str(), stdout);
      } else {
        std::fputs(diag::RenderText(d, sm, use_color).c_str(), stderr);
      }
    }
    if (!c.internal_error.empty()) {
      PrintInternalError(c.internal_error);
      ++total_errors;
    }
    total_errors += diags.error_count();
    total_warnings += diags.warning_count();
    if (diags.has_errors() || !c.internal_error.empty()) ++failed_files;
  }
  if (format == "text" && (total_errors > 0 || total_warnings > 0)) {
    auto plural = [](size_t n, const char* word) {
      return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
    };
    std::string summary =
        "flowc: " + plural(total_errors, "error") + ", " + plural(total_warnings, "warning");
    if (files.size() > 1) summary += " in " + plural(files.size(), "file");
    std::fprintf(stderr, "%s\n", summary.c_str());
  }
  std::fflush(stdout);
  return total_errors > 0 ? 1 : 0;
}

}  // namespace

const Command kCheckCommand = {"check", "parse and type-check scripts, report problems", kHelp,
                               &Run};

}  // namespace flow::driver
