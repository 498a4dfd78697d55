#pragma once
// A test-only S-expression dump of a parsed program: every node and value, no source positions.
// Two programs mean the same when their dumps are equal, so the formatter's output can be checked
// against its input without trusting the formatter's own code.

#include <string>

#include "ast/decl.h"

namespace flow::format::testing {

std::string DumpProgram(const ast::Program& program);

}  // namespace flow::format::testing
