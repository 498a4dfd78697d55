// `flowc compare-state OLD.flow NEW.flow`: what state of a job running OLD carries over when it
// is restored into NEW (docs/operations.md, "Upgrading a job"), before anything is deployed.

#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "driver/commands.h"
#include "flow/runtime/checkpoint/state_schema.h"
#include "frontend/frontend.h"
#include "plan/passes.h"
#include "plan/state_schema.h"

namespace flow::driver {
namespace {

constexpr std::string_view kHelp =
    "Usage: flowc compare-state OLD.flow NEW.flow\n"
    "\n"
    "Compares the state of the two scripts' stateful operators (sources, windows, aggregates,\n"
    "joins) the way a job built from NEW does when it restores a savepoint of OLD: by operator\n"
    "name (<stream>.<what>), then by what the state depends on. Prints one line per operator:\n"
    "\n"
    "  kept       restored as it is\n"
    "  migrated   restored; aggregates added (they start empty) or removed\n"
    "  new        starts empty\n"
    "  removed    its state is dropped: the restore needs --allow-dropped-state\n"
    "  changed    its state cannot carry over: the restore needs --allow-dropped-state, and\n"
    "             the operator then starts empty\n"
    "\n"
    "Exit codes: 0 NEW restores OLD's state without --allow-dropped-state, 1 it needs the flag\n"
    "(or a script has errors), 2 usage error.\n";

struct Planned {
  diag::SourceManager sm;
  frontend::Compilation compiled;  // its plan points into its program
};

// Checks, lowers and optimizes `file` as `flowc build` does; prints diagnostics; false on errors.
bool PlanFile(const std::string& file, Planned* out) {
  diag::DiagnosticEngine diags;
  frontend::Options options;
  options.until = frontend::Stage::kPlan;
  out->compiled = frontend::CompileFile(file, out->sm, diags, options);
  PrintDiagnostics(diags, out->sm);
  if (!out->compiled.internal_error.empty()) PrintInternalError(out->compiled.internal_error);
  return out->compiled.ok(frontend::Stage::kPlan);
}

const plan::OperatorState* Find(const std::vector<plan::OperatorState>& ops,
                                const std::string& name) {
  for (const plan::OperatorState& op : ops) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

int Run(const std::vector<std::string>& args) {
  std::vector<std::string> files;
  for (const std::string& a : args) {
    if (!a.empty() && a[0] == '-')
      return UsageError("unknown option `" + a + "` for `compare-state`", "compare-state");
    files.push_back(a);
  }
  if (files.size() != 2)
    return UsageError("`compare-state` needs two files: OLD.flow NEW.flow", "compare-state");
  Planned old_script, new_script;
  if (!PlanFile(files[0], &old_script) || !PlanFile(files[1], &new_script)) return 1;
  const std::vector<plan::OperatorState> was = plan::StateOperators(*old_script.compiled.plan);
  const std::vector<plan::OperatorState> now = plan::StateOperators(*new_script.compiled.plan);
  size_t width = 0;
  for (const auto* ops : {&was, &now}) {
    for (const plan::OperatorState& op : *ops) width = std::max(width, op.name.size());
  }
  bool needs_flag = false;
  auto line = [&](const std::string& name, const char* verdict, const std::string& why) {
    if (why.empty()) {
      std::printf("%-*s  %s\n", static_cast<int>(width), name.c_str(), verdict);
    } else {
      std::printf("%-*s  %-8s  %s\n", static_cast<int>(width), name.c_str(), verdict, why.c_str());
    }
  };
  for (const plan::OperatorState& op : was) {
    const plan::OperatorState* after = Find(now, op.name);
    if (after == nullptr) {
      needs_flag = true;
      line(op.name, "removed", "its state is dropped (needs --allow-dropped-state)");
      continue;
    }
    rt::StateSchemaDiff diff = rt::DiffStateSchema(op.parts, after->parts);
    std::string why;
    const std::vector<std::string>& notes = diff.compatible() ? diff.migrated : diff.changed;
    for (const std::string& n : notes) why += (why.empty() ? "" : "; ") + n;
    if (!diff.compatible()) {
      needs_flag = true;
      line(op.name, "changed", why + " (needs --allow-dropped-state; starts empty)");
    } else {
      line(op.name, diff.migrated.empty() ? "kept" : "migrated", why);
    }
  }
  for (const plan::OperatorState& op : now) {
    if (Find(was, op.name) == nullptr) line(op.name, "new", "starts empty");
  }
  return needs_flag ? 1 : 0;
}

}  // namespace

const Command kCompareStateCommand = {
    "compare-state", "show what state a savepoint of one script carries into another", kHelp, &Run};

}  // namespace flow::driver
