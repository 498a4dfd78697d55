#pragma once
// `key by ... | aggregate ...` without a window: each input record emits its key's updated result.

#include "ast/pipeline.h"
#include "plan/node.h"

namespace flow::plan {

struct RunningAggregateNode : Node {
  static constexpr NodeKind kKind = NodeKind::kRunningAggregate;
  RunningAggregateNode() : Node(kKind) {}
  std::string Describe() const override;

  const ast::KeyByOp* key = nullptr;  // null: one global key
  const ast::AggregateOp* aggregate = nullptr;
};

}  // namespace flow::plan
