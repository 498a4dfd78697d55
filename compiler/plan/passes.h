#pragma once
// Named plan passes, run in order; each is followed by Verify. A pass can be switched off by name
// (`flowc build --no-pass chain`). Passes, in the order they run:
//   fold-constants  evaluate constant subexpressions of where/select/explode steps at compile time
//                   with the runtime's semantics; drop `where true`, warn on `where false`
//   push-filters    move `where` steps earlier: through select (rewriting field references),
//                   explode, key by and union, up to the source
//   chain           fuse consecutive stateless nodes (where/select/explode) into one chain node
//   project         decode only the source fields the job reads
//   prune-join      drop records a window join's max/min side can never match (prune_join.cpp)
// Passes leave node kinds they do not know alone (barriers). Operators a pass builds (a folded
// select, a rewritten where) are owned by Plan::pass_ops; the original AST is never modified.

#include <set>
#include <string>
#include <vector>

#include "diag/diagnostic.h"
#include "diag/kinds.h"
#include "plan/plan.h"

namespace flow::plan {

struct PassContext {
  // Where a pass reports what it found worth telling the user (e.g. a `where` that is always
  // false: a warning kind of diag/kinds.h); null: not reported.
  diag::DiagnosticEngine* diags = nullptr;
  void Warn(diag::Kind kind, diag::SourceRange range, std::string message) {
    if (diags != nullptr) diags->Report(kind, range, std::move(message));
  }
};

struct PassInfo {
  const char* name;
  const char* summary;
  void (*run)(Plan& plan, PassContext& cx);
};

const std::vector<PassInfo>& AllPasses();

// Runs every pass not in `disabled`, verifying after lowering and after each pass. Returns "" or
// an internal error: "plan verification failed after pass `chain`: ...". The passes' warnings go
// to `diags` when it is not null.
std::string RunPasses(Plan& plan, const std::set<std::string>& disabled,
                      diag::DiagnosticEngine* diags = nullptr);

// The passes. Exposed for tests.
void FoldConstants(Plan& plan, PassContext& cx);
void PushFilters(Plan& plan, PassContext& cx);
void FuseChains(Plan& plan);
void ProjectSources(Plan& plan);
void PruneJoins(Plan& plan);

// ---- Helpers shared by the passes ----

// A deep copy of a checked expression (types and name resolution included).
ast::ExprPtr CloneExpr(const ast::Expr& e);
// Flow source text for an expression (fully parenthesised where precedence could matter).
std::string ExprText(const ast::Expr& e);
// For a step operator a pass built (owned by plan.pass_ops): its text, e.g.
// "where (price * 0.9) > 10 [push-filters]"; "" for operators of the script.
std::string PassBuiltStepText(const Plan& plan, const ast::Op& op);
// True when evaluating `e` can neither fail at run time (integer `/` or `%` by a divisor that is
// not a non-zero literal) nor call an `extern fn` (which may have side effects): such an
// expression may be evaluated for more or fewer records without changing what the job does.
bool IsSafeToMove(const ast::Expr& e);
// Gives nodes new ids in a topological order (inputs before readers), dropping removed nodes.
void Renumber(Plan& plan);

}  // namespace flow::plan
