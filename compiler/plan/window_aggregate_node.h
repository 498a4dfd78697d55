#pragma once
// `key by ... | window tumbling|sliding ... | aggregate ...`: one result per key and window when
// the window fires. Input: a KeyByNode, or any node for a global (unkeyed) aggregate.

#include "ast/pipeline.h"
#include "plan/node.h"

namespace flow::plan {

struct WindowAggregateNode : Node {
  static constexpr NodeKind kKind = NodeKind::kWindowAggregate;
  WindowAggregateNode() : Node(kKind) {}
  std::string Describe() const override;

  const ast::KeyByOp* key = nullptr;  // null: one global key
  const ast::WindowOp* window = nullptr;
  const ast::AggregateOp* aggregate = nullptr;
};

// "tumbling", "sliding" or "session".
std::string WindowShapeName(const ast::WindowSpec& spec);

}  // namespace flow::plan
