#pragma once
// The hash exchange before a keyed operator: records keep their type; the next edge routes each
// record to the subtask owning its key group.

#include "ast/pipeline.h"
#include "plan/node.h"

namespace flow::plan {

struct KeyByNode : Node {
  static constexpr NodeKind kKind = NodeKind::kKeyBy;
  KeyByNode() : Node(kKind) {}
  std::string Describe() const override;

  const ast::KeyByOp* op = nullptr;
};

}  // namespace flow::plan
