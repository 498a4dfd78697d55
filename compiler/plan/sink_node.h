#pragma once
// `| into <connector> format <format>`: the end of a sink pipeline.

#include "ast/pipeline.h"
#include "plan/node.h"

namespace flow::plan {

struct SinkNode : Node {
  static constexpr NodeKind kKind = NodeKind::kSink;
  SinkNode() : Node(kKind) {}
  std::string Describe() const override;

  const ast::IntoOp* into = nullptr;
};

}  // namespace flow::plan
