#pragma once
// The state of a plan's stateful operators, as the runtime names it and as its snapshots depend
// on it: the "label: value" parts of flow/runtime/checkpoint/state_schema.h. Codegen declares
// them in the job (Job::SetStateSchema), so a savepoint restores into a changed script by
// operator name; `flowc compare-state` compares two scripts with the same parts and rule.
//
// An operator's identity is its runtime name, "<stream>.<what>": the stream it belongs to (an
// unnamed pipeline is `sinkN`, by position) and what it is (source, window, session, aggregate,
// join; numbered from the second of a kind in a stream). Renaming a stream makes its operators
// new ones.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "plan/plan.h"

namespace flow::plan {

struct OperatorState {
  std::string name;                // the runtime operator name, e.g. "clicks.window"
  std::vector<std::string> parts;  // e.g. "key: string", "aggregate n: count() -> int"
};

// Every stateful operator of the plan (sources, windows, running aggregates, joins), in plan
// order.
std::vector<OperatorState> StateOperators(const Plan& plan);

// The runtime name of node `n`'s operator for `what` ("window", "join", ...): what codegen
// passes to the job graph. A stream's second node of a kind gets a number: "s.window2".
std::string OperatorName(const Node& n, std::string_view what);

// The tag an aggregate named `name` is stored under in its accumulator (exec/tagged.h): 32-bit
// FNV-1a of the name.
uint32_t AggregateTag(std::string_view name);

}  // namespace flow::plan
