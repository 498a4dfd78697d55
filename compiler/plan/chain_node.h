#pragma once
// Stateless steps (where / select / explode) applied record by record. Lowering makes one node per
// step; the `chain` pass fuses runs of them into one node, which codegen turns into one function.

#include <string>
#include <vector>

#include "ast/pipeline.h"
#include "plan/node.h"

namespace flow::plan {

struct ChainStep {
  const ast::Op* op = nullptr;  // WhereOp, SelectOp or ExplodeOp
  types::Type input;
  types::Type output;
};

struct ChainNode : Node {
  static constexpr NodeKind kKind = NodeKind::kChain;
  ChainNode() : Node(kKind) {}
  std::string Describe() const override;

  std::vector<ChainStep> steps;
};

}  // namespace flow::plan
