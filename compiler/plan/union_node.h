#pragma once
// `a | union b, c`: merges inputs of one record type.

#include "plan/node.h"

namespace flow::plan {

struct UnionNode : Node {
  static constexpr NodeKind kKind = NodeKind::kUnion;
  UnionNode() : Node(kKind) {}
  std::string Describe() const override;
};

}  // namespace flow::plan
