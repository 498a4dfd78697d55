#pragma once
// Shared pieces of the syntax tree: locations, identifiers, type references.
// The AST is plain data owned through unique_ptr; sema annotates it in place (the `type` and
// resolution fields), which makes the checked program. No ANTLR types appear here.

#include <memory>
#include <string>

#include "diag/source_range.h"
#include "types/type.h"

namespace flow::ast {

using SourceRange = diag::SourceRange;

struct Ident {
  std::string name;
  SourceRange range;
};

// `int`, `list<string>`, `string?`, `Click`.
struct TypeRef {
  Ident name;
  std::unique_ptr<TypeRef> arg;  // the element of list<...>
  bool nullable = false;
  SourceRange range;
};

// A duration literal (`5s`) or the name of a duration param; sema checks the param.
struct DurationRef {
  bool is_param = false;
  int64_t millis = 0;  // for literals
  std::string param;   // for params
  SourceRange range;
};

// A window's time zone (`zone "Europe/Berlin"`): a string literal, or the name of a string param;
// sema checks both.
struct ZoneRef {
  bool is_param = false;
  std::string name;   // for literals: the zone's IANA name
  std::string param;  // for params
  SourceRange range;
};
// As plans show it: the zone's name, or the param's.
inline const std::string& ZoneText(const ZoneRef& z) {
  return z.is_param ? z.param : z.name;
}

}  // namespace flow::ast
