// `flowc compare-state OLD.flow NEW.flow`: what state of a job running OLD carries over when it
// is restored into NEW (docs/operations.md, "Upgrading a job"), before anything is deployed.
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "diag/render.h"
#include "driver/commands.h"
#include "driver/frontend.h"
#include "flow/runtime/checkpoint/state_schema.h"
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
  std::unique_ptr<sema::CheckedProgram> program;
  std::unique_ptr<plan::Plan> plan;
};

// Checks, lowers and optimizes `file` as `flowc build` does; prints diagnostics; false on errors.
bool PlanFile(const std::string& file, Planned* out) {
  diag::DiagnosticEngine diags;
  out->program = CheckFile(file, out->sm, diags);
  const bool color = isatty(STDERR_FILENO);
  for (const diag::Diagnostic& d : diags.diagnostics()) {
    std::fputs(diag::RenderText(d, out->sm, color).c_str(), stderr);
  }
  if (out->program == nullptr || diags.has_errors()) return false;
  plan::LowerResult lowered = plan::Lower(*out->program);
  if (!lowered.plan) {
    std::fprintf(stderr, "%s:%u:%u: error: %s\n", file.c_str(), lowered.range.line,
                 lowered.range.col, lowered.error.c_str());
    return false;
  }
  std::vector<plan::PassWarning> warnings;
  const std::string internal = plan::RunPasses(*lowered.plan, {}, &warnings);
  if (!internal.empty()) {
    std::fprintf(stderr, "flowc: internal error: %s\n", internal.c_str());
    return false;
  }
  out->plan = std::move(lowered.plan);
  return true;
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
  const std::vector<plan::OperatorState> was = plan::StateOperators(*old_script.plan);
  const std::vector<plan::OperatorState> now = plan::StateOperators(*new_script.plan);
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
