#pragma once
// Generated text that every emitter writes the same way: a duration or time-zone argument that a
// script gives literally or as a param (params are members of the generated struct `P`), and the
// comment that heads a plan node's functions.
// Threading: pure functions (NodeHeader writes only to the given Writer).

#include <string>

#include "ast/common.h"
#include "codegen/writer.h"
#include "plan/node.h"

namespace flow::codegen {

// A duration as a C++ int64_t expression of milliseconds.
std::string CppDuration(const ast::DurationRef& d);
// A window's zone as a C++ std::string expression.
std::string CppZone(const ast::ZoneRef& z);
// "// stream: what (file.flow line N)" after a blank line; `flow_file` is the script's path.
void NodeHeader(Writer& w, const plan::Node& n, const std::string& what,
                const std::string& flow_file);

}  // namespace flow::codegen
