#pragma once
// A source: connector + format + schema, with optional event time and error policy. `decoded`
// lists the schema fields the job reads (all of them until the `project` pass narrows it).

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

// The source's format name: the `format` clause, or "none" for the generators (datagen, nexmark).
std::string SourceFormat(const ast::Source& source);
// What of `source` flowc build cannot do yet (empty when all is supported); *where is set to it.
std::string UnsupportedSource(const ast::Source& source, diag::SourceRange* where);

}  // namespace flow::plan
