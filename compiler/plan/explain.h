#pragma once
// Renders an (optimized) plan for `flowc explain`:
//   ExplainText  an indented DAG listing, inputs before consumers, one block per node: kind,
//                stream, .flow line, parallelism and input partitioning, output record type, and
//                for fused chains the steps with their own lines; then the plan as instances of
//                the job run it (stages.h): stages and repartition topics, or what is refused.
//   ExplainDot   the same as a Graphviz digraph; every label is a quoted, escaped string.
// Pure functions; `source` is the script's text (connector calls are quoted from it) and may be
// empty, in which case only connector names are shown.

#include <string>
#include <string_view>

#include "plan/plan.h"

namespace flow::plan {

std::string ExplainText(const Plan& plan, std::string_view source);
std::string ExplainDot(const Plan& plan, std::string_view source);

// `text` as the body of a DOT double-quoted string: backslashes and quotes escaped, line breaks
// become left-justified breaks (\l), other control characters become spaces. Exposed for tests.
std::string DotEscape(std::string_view text);

}  // namespace flow::plan
