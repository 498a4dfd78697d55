#pragma once
// Evaluation of constant subexpressions for the fold-constants pass. Every operator, cast and
// built-in function is evaluated by calling the runtime's own definition (flow/runtime/exec/ops.h,
// flow/runtime/exec/cast.h, flow/stdlib/scalar.h) on the C++ values generated code would hold,
// so a folded literal is what the job would have computed: one definition of the language's
// semantics, not two that can drift.
//
// Each function returns nullopt when it does not fold: the operands' representations do not fit
// the operator, or the runtime would report an error (an integer division or remainder by zero),
// which must still happen at run time with the expression's line.

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ast/expr.h"
#include "flow/runtime/exec/cast.h"
#include "types/type.h"

namespace flow::plan::fold {

// A constant as generated code holds it: int64_t (int, timestamp, duration), double, bool,
// std::string; std::monostate is null.
using Constant = std::variant<std::monostate, int64_t, double, bool, std::string>;

inline bool IsNull(const Constant& c) {
  return std::holds_alternative<std::monostate>(c);
}

// `x op y`, `and`/`or` included (three-valued, as ops::And / ops::Or).
std::optional<Constant> Binary(ast::BinaryOp op, const Constant& x, const Constant& y);
// `-x`, `not x`.
std::optional<Constant> Unary(ast::UnaryOp op, const Constant& x);
// The runtime's cast kind of a Flow kind (kOther for lists, records and null): the one mapping,
// also what generated code names in exec::Cast<From, To>.
exec::CastKind CastKindOf(types::Kind k);
// `cast(x as to)` where x has the Flow kind `from` (int, timestamp and duration share int64_t).
std::optional<Constant> Cast(const Constant& x, types::Kind from, types::Kind to);
// A pure built-in string function by its Flow name; nullopt for every other function.
std::optional<Constant> Call(const std::string& name, const std::vector<Constant>& args);

}  // namespace flow::plan::fold
