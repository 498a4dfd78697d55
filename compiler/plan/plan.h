#pragma once
// The plan of one job and the functions around it:
//   Lower(program)   checked program -> plan (unsupported constructs become diagnostics)
//   Verify(plan)     invariants every pass must keep; a failure is a compiler bug
//   RunPasses(...)   the named optimisation passes (passes.h)
// Threading: a Plan is used by one thread. It points into `program`, which must outlive it.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "diag/diagnostic.h"
#include "plan/chain_node.h"
#include "plan/join_node.h"
#include "plan/key_by_node.h"
#include "plan/node.h"
#include "plan/prune_node.h"
#include "plan/running_aggregate_node.h"
#include "plan/sink_node.h"
#include "plan/source_node.h"
#include "plan/union_node.h"
#include "plan/window_aggregate_node.h"
#include "sema/checker.h"

namespace flow::plan {

struct Plan {
  const sema::CheckedProgram* program = nullptr;
  // Indexed by id; a pass that removes a node leaves nullptr (ids stay stable unless a pass that
  // adds nodes renumbers them, see Renumber in passes.h).
  std::vector<std::unique_ptr<Node>> nodes;
  // Operators built by passes (folded or rewritten steps); nodes may point at them.
  std::vector<std::unique_ptr<ast::Op>> pass_ops;

  template <class T>
  T* Add(std::unique_ptr<T> node) {
    node->id = static_cast<int>(nodes.size());
    T* raw = node.get();
    nodes.push_back(std::move(node));
    return raw;
  }
  Node* Get(int id) const {
    return id >= 0 && id < static_cast<int>(nodes.size()) ? nodes[id].get() : nullptr;
  }
  // Ids of the live nodes that read node `id`.
  std::vector<int> Consumers(int id) const;
  // Live nodes with inputs before consumers (ids are created in that order and passes keep it).
  std::vector<const Node*> Ordered() const;
  // One line per node: "#3 chain [per_minute] where, select -> {user: string} (line 12)".
  std::string ToString() const;
};

// Lowers a program that sema accepted without errors. A construct flowc build does not support
// yet is reported to `diags` (kUnsupported, at the construct) and the result is null.
std::unique_ptr<Plan> Lower(const sema::CheckedProgram& program, diag::DiagnosticEngine& diags);

// Empty when the plan is well formed, else a description of the first broken invariant.
std::string Verify(const Plan& plan);

}  // namespace flow::plan
