#pragma once
// flow::stdlib: the one registry of Flow's scalar functions and aggregates. The type checker
// (resolving calls), the documentation generator (docs/functions.md) and the code generator (the
// C++ call template) all read it, so a function is declared exactly once, here.
//
// Include as `#include "stdlib/registry/registry.h"` (the project root is an include directory of
// the `flow_stdlib_registry` target); it links `flow_types` for `types/type.h`.
//
// Threading: the registry is built once, on first use (thread-safe static), and is immutable
// afterwards; every function here may be called from any thread.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "types/type.h"

namespace flow::stdlib {

enum class FunctionKind { kScalar, kAggregate };

struct ParamSpec {
  std::string name;
  std::string type;  // type pattern, see below
};

// Type patterns (strings):
//   concrete     "int", "float", "string", "bool", "bytes", "timestamp", "duration",
//                "list<string>", ...: the argument must be assignable (int -> float allowed).
//   "numeric"    int or float.
//   "any"        any type.
//   "comparable" numeric, string, timestamp, duration or bool.
//   "T"          binds to the first argument matched against "T"; later "T" arguments unify with
//                it through types::CommonType (int and float unify to float).
//   "list<T>"    a list; T binds to its element type.
//   "elem(T)"    (results only) the element type of T when T is a list.
// A result pattern may end in "?" (always nullable, e.g. "int?" for parse_int).
struct FunctionSpec {
  std::string name;  // lower-case as written in scripts, e.g. "upper", "count_distinct"
  FunctionKind kind;
  std::vector<ParamSpec> params;  // fixed parameters
  bool variadic = false;          // last param may repeat (e.g. coalesce, concat)
  size_t min_args = 0;            // for optional trailing params / variadic
  std::string returns;            // type pattern of the result
  std::string category;           // "string", "math", "time", "conditional", "aggregate", ...
  std::string summary;            // one sentence for docs and hover
  std::string example;            // a Flow expression using it, e.g. `upper(url)`
  // C++ call template for codegen: "::flow::fn::Upper({0})", args {0},{1}..., {args} for all
  // (comma-joined); for aggregates the accumulator class template, e.g. "::flow::agg::Sum<{T}>".
  std::string cpp;
  bool nullable_in_propagates =
      true;  // a null argument gives a null result (SQL semantics) unless false
  // Aggregates only: the accumulator's Add also takes the record's event time
  // (`acc.Add(value, event_time_ms)`), as first/last do.
  bool needs_event_time = false;
};

// Every function, in registry order (grouped by category).
const std::vector<FunctionSpec>& AllFunctions();

// The function called `name` (exact, lower-case), or nullptr if unknown.
const FunctionSpec* FindFunction(std::string_view name);

// Checks a call and computes its result type. On mismatch returns Type::Error() and sets *error to
// a user-facing message like "argument 2 of `substr` must be int, found string". Arguments that are
// already Type::Error() are accepted silently (no cascade). `error` may be null.
flow::types::Type ResolveCall(const FunctionSpec& fn, const std::vector<flow::types::Type>& args,
                              std::string* error);

// Names close to `name` (edit distance), best first, for "did you mean" hints. Empty if none.
std::vector<std::string> SuggestFunctions(std::string_view name);

// ---- Helpers for the checker and the code generator (beyond the core shape above). ----

// ResolveCall plus what the code generator needs: the type bound to the pattern variable T
// (non-nullable; Error when the function has no T or it could not be bound).
struct CallResolution {
  flow::types::Type result;
  flow::types::Type bound_t;
};
CallResolution ResolveCallDetailed(const FunctionSpec& fn,
                                   const std::vector<flow::types::Type>& args, std::string* error);

// Expands fn.cpp: {0},{1},... become arg_exprs[i]; {args} all of them comma-joined; {T} `t_cpp`,
// the C++ type of the bound T (types::CppType of CallResolution::bound_t); {tagN} a tag value
// naming the Flow type of argument N (e.g.
// `::flow::fn::tag::Timestamp{}`), so one C++ overload set can tell a timestamp from an int.
std::string ExpandCpp(const FunctionSpec& fn, const std::vector<std::string>& arg_exprs,
                      const std::vector<flow::types::Type>& arg_types, const std::string& t_cpp);

// For an argument written as a string literal: checks it can work at run time (a valid POSIX
// extended regular expression for regexp_*, a known unit for date_trunc). Returns "" when fine,
// else a user-facing message. Non-literal arguments are only checked at run time, where the
// documented fallback applies (see flow/stdlib/scalar.h).
std::string CheckLiteralArgument(const FunctionSpec& fn, size_t index, std::string_view literal);

// "substr(s: string, start: int[, len: int]) -> string", for docs and hover.
std::string Signature(const FunctionSpec& fn);

// Markdown for docs/functions.md: every function grouped by category.
std::string FunctionsMarkdown();

}  // namespace flow::stdlib
