#pragma once
// A filter in front of one side of a window join, made by the prune-join pass (never by
// lowering): it drops the records whose join key is below the highest key already seen in their
// tumbling window (above the lowest, for a minimum), because the join's other side is that
// window's maximum (minimum) of the same key and can never equal them. The runtime operator
// (operators/running_extreme_filter.h) says why that is exact. Input and output: the same record.

#include <string>

#include "ast/expr.h"
#include "ast/pipeline.h"
#include "plan/node.h"

namespace flow::plan {

struct PruneNode : Node {
  static constexpr NodeKind kKind = NodeKind::kPrune;
  PruneNode() : Node(kKind) {}
  std::string Describe() const override;

  const ast::Expr* key = nullptr;           // the join key of this side (reads the record only)
  const ast::WindowSpec* window = nullptr;  // the join's tumbling event-time window
  bool max = true;                          // below the running maximum (else above the minimum)
  int side = 0;  // the join side it feeds (0 left, 1 right): the key's names are marked so
};

// A tumbling event-time window without slide, zone or lateness: the only window a prune node is
// exact for (the pass makes them for it, verify refuses any other).
bool PlainTumbling(const ast::WindowSpec& w);

}  // namespace flow::plan
