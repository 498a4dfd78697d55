#pragma once
// A source: connector + format + schema, with optional event time. `decoded` lists the schema
// fields the job reads (all of them until the `project` pass narrows it).

#include <set>
#include <string>

#include "ast/pipeline.h"
#include "plan/node.h"

namespace flow::plan {

struct SourceNode : Node {
  static constexpr NodeKind kKind = NodeKind::kSource;
  SourceNode() : Node(kKind) {}
  std::string Describe() const override;

  const ast::Source* source = nullptr;
  std::set<std::string> decoded;  // field names of `output` the decoder fills
};

}  // namespace flow::plan
