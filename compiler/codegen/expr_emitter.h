#pragma once
// Turns a checked expression into one C++ expression over the current record. Every operator goes
// through flow::exec::ops (null semantics, wrapping arithmetic, division-by-zero errors), built-in
// functions through their registry `cpp` template, extern functions by name at global scope.
// Unsupported constructs set `error` (first one wins) and emit a placeholder.

#include <string>
#include <vector>

#include "ast/expr.h"
#include "codegen/records.h"

namespace flow::stdlib {
struct FunctionSpec;
}

namespace flow::codegen {

struct ExprScope {
  std::string record;             // C++ expression of the current record, e.g. "r0"
  std::string params = "P";       // the params struct
  std::string event_time = "ts";  // for aggregates that need it
  std::string flow_file;          // for run-time error locations
  // After a join: C++ expressions of the left and right records (names sema resolved to a join
  // side read from them). Empty: `stream.field` of a single input reads `record`.
  std::vector<std::string> sides;
};

class ExprEmitter {
 public:
  ExprEmitter(const RecordTypes& records, ExprScope scope)
      : records_(records), scope_(std::move(scope)) {}

  // The expression, as C++ of whatever representation its operators give.
  std::string Emit(const ast::Expr& e);
  // The expression converted to the C++ type of `type` (ops::As).
  std::string EmitAs(const ast::Expr& e, const types::Type& type);

  const std::string& error() const { return error_; }
  const diag::SourceRange& error_range() const { return error_range_; }

 private:
  std::string Binary(const ast::BinaryExpr& e);
  std::string Call(const ast::CallExpr& e);
  std::string Cast(const ast::CastExpr& e);
  std::string Case(const ast::CaseExpr& e);
  std::string Literal(const ast::LiteralExpr& e);
  std::string Fail(const std::string& what, const ast::Expr& e);
  std::string TypedNull(const types::Type& type) const;
  std::string NullArgument(const stdlib::FunctionSpec& fn, size_t index,
                           const types::Type& bound_t) const;

  const RecordTypes& records_;
  ExprScope scope_;
  std::string error_;
  diag::SourceRange error_range_;
};

}  // namespace flow::codegen
