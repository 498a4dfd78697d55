// `flowc explain FILE [--format text|dot|svg] [--no-pass NAME]`: prints the optimized logical plan.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "driver/commands.h"
#include "frontend/frontend.h"
#include "plan/explain.h"
#include "plan/passes.h"

namespace flow::driver {
namespace {

constexpr std::string_view kHelp =
    "Usage: flowc explain FILE [--format text|dot|svg] [--no-pass NAME]\n"
    "\n"
    "Checks FILE, lowers it to the logical plan and runs the plan passes, then prints the plan:\n"
    "every node with its kind, stream, .flow line, parallelism, input partitioning, output record\n"
    "type, and the steps of fused chains; then how instances of the job (--instance) run it:\n"
    "its stages and the repartition topics between them, or what cannot run that way yet.\n"
    "\n"
    "Options:\n"
    "  --format text   an indented listing, inputs before the nodes that read them (default)\n"
    "  --format dot    a Graphviz digraph\n"
    "  --format svg    the digraph rendered by Graphviz `dot -Tsvg` (needs `dot` installed)\n"
    "  --no-pass NAME  switch off a plan pass (fold-constants, push-filters,\n"
    "                  chain, project, prune-join); repeatable\n"
    "\n"
    "Exit codes: 0 printed, 1 the script has errors or uses what flowc cannot build yet,\n"
    "2 usage error (or `dot` is not installed for --format svg).\n";

// True when `program` is an executable file in a PATH directory.
bool OnPath(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    if (dir.empty()) dir = ".";
    if (::access((dir + "/" + program).c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

// Pipes `dot_text` through `dot -Tsvg` to stdout; returns dot's exit status (1 when it failed).
int RenderSvg(const std::string& dot_text) {
  std::fflush(stdout);
  FILE* pipe = ::popen("dot -Tsvg", "w");
  if (pipe == nullptr) {
    std::fprintf(stderr, "flowc: error: cannot run `dot`\n");
    return 1;
  }
  std::fwrite(dot_text.data(), 1, dot_text.size(), pipe);
  int status = ::pclose(pipe);
  if (status != 0) {
    std::fprintf(stderr, "flowc: internal error: `dot -Tsvg` rejected the plan graph\n");
    return 1;
  }
  return 0;
}

int Run(const std::vector<std::string>& args) {
  std::string file, format = "text";
  std::set<std::string> disabled;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--format" || a.rfind("--format=", 0) == 0) {
      if (a == "--format") {
        if (i + 1 >= args.size()) return UsageError("`--format` needs text, dot or svg", "explain");
        format = args[++i];
      } else {
        format = a.substr(9);
      }
      if (format != "text" && format != "dot" && format != "svg")
        return UsageError("unknown format `" + format + "`; formats are text, dot and svg",
                          "explain");
    } else if (a == "--no-pass" || a.rfind("--no-pass=", 0) == 0) {
      std::string name;
      if (a == "--no-pass") {
        if (i + 1 >= args.size()) return UsageError("`--no-pass` needs a pass name", "explain");
        name = args[++i];
      } else {
        name = a.substr(10);
      }
      bool known = false;
      for (const plan::PassInfo& p : plan::AllPasses()) known = known || name == p.name;
      if (!known)
        return UsageError("unknown pass `" + name +
                              "`; passes are fold-constants, push-filters, chain and project",
                          "explain");
      disabled.insert(name);
    } else if (!a.empty() && a[0] == '-') {
      return UsageError("unknown option `" + a + "` for `explain`", "explain");
    } else if (file.empty()) {
      file = a;
    } else {
      return UsageError("`explain` takes one file", "explain");
    }
  }
  if (file.empty()) return UsageError("`explain` needs a file", "explain");
  // Checked before the work so a missing Graphviz is reported as such, not after the plan.
  if (format == "svg" && !OnPath("dot")) {
    std::fprintf(stderr,
                 "flowc: error: `--format svg` needs the Graphviz `dot` program, which is not "
                 "installed; install graphviz or use `--format dot`\n");
    return 2;
  }

  diag::SourceManager sm;
  diag::DiagnosticEngine diags;
  frontend::Options options;
  options.until = frontend::Stage::kPlan;
  options.disabled_passes = disabled;
  frontend::Compilation c = frontend::CompileFile(file, sm, diags, options);
  PrintDiagnostics(diags, sm);
  if (!c.internal_error.empty()) PrintInternalError(c.internal_error);
  if (!c.ok(frontend::Stage::kPlan)) return 1;
  const plan::Plan& plan = *c.plan;
  std::string_view source = sm.text(c.file);
  if (format == "text") {
    std::string passes;
    for (const plan::PassInfo& p : plan::AllPasses()) {
      if (!disabled.count(p.name)) passes.append(passes.empty() ? "" : ", ").append(p.name);
    }
    std::printf("plan of %s (passes: %s)\n%s", file.c_str(),
                passes.empty() ? "none" : passes.c_str(), plan::ExplainText(plan, source).c_str());
    return 0;
  }
  std::string dot = plan::ExplainDot(plan, source);
  if (format == "dot") {
    std::fputs(dot.c_str(), stdout);
    return 0;
  }
  return RenderSvg(dot);
}

}  // namespace

const Command kExplainCommand = {"explain", "print the optimized logical plan of a script", kHelp,
                                 &Run};

}  // namespace flow::driver
