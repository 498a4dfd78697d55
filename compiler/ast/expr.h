#pragma once
// Expression nodes. Every Expr carries its range and, after sema, its type (Error when a problem
// was reported). Downcast with `As<T>(expr)` after checking `kind`.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ast/common.h"

namespace flow::stdlib {
struct FunctionSpec;
}

namespace flow::ast {

struct ExternFnDecl;

enum class ExprKind {
  kError,
  kLiteral,
  kName,
  kField,
  kIndex,
  kUnary,
  kBinary,
  kIn,
  kIsNull,
  kCall,
  kCast,
  kCase,
  kList
};

struct Expr {
  explicit Expr(ExprKind k) : kind(k) {}
  virtual ~Expr() = default;
  ExprKind kind;
  SourceRange range;
  types::Type type;  // set by sema
};
using ExprPtr = std::unique_ptr<Expr>;

template <class T>
T* As(Expr* e) {
  return e && e->kind == T::kKind ? static_cast<T*>(e) : nullptr;
}
template <class T>
const T* As(const Expr* e) {
  return e && e->kind == T::kKind ? static_cast<const T*>(e) : nullptr;
}

// Stands in for an expression that could not be built (already reported).
struct ErrorExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kError;
  ErrorExpr() : Expr(kKind) {}
};

enum class LiteralKind { kInt, kFloat, kString, kBool, kNull, kDuration, kTimestamp };

struct LiteralExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kLiteral;
  LiteralExpr() : Expr(kKind) {}
  LiteralKind literal = LiteralKind::kNull;
  int64_t int_value = 0;  // ints; durations and timestamps in milliseconds
  double float_value = 0;
  bool bool_value = false;
  std::string string_value;  // unescaped
};

// What a bare name refers to, decided by sema.
enum class NameTarget { kUnresolved, kField, kParam, kJoinSide, kWindowField };

struct NameExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kName;
  NameExpr() : Expr(kKind) {}
  std::string name;
  NameTarget target = NameTarget::kUnresolved;
  int join_side = -1;  // 0 left, 1 right: the side a field or qualifier belongs to in a join
};

// `base.field`; in joins `a.user` is a FieldExpr whose base is the qualifier `a`.
struct FieldExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kField;
  FieldExpr() : Expr(kKind) {}
  ExprPtr base;
  Ident field;
};

struct IndexExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kIndex;
  IndexExpr() : Expr(kKind) {}
  ExprPtr base;
  ExprPtr index;
};

enum class UnaryOp { kNeg, kNot };

struct UnaryExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kUnary;
  UnaryExpr() : Expr(kKind) {}
  UnaryOp op = UnaryOp::kNeg;
  ExprPtr operand;
};

enum class BinaryOp { kMul, kDiv, kMod, kAdd, kSub, kEq, kNe, kLt, kLe, kGt, kGe, kAnd, kOr };
const char* Spelling(BinaryOp op);

struct BinaryExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kBinary;
  BinaryExpr() : Expr(kKind) {}
  BinaryOp op = BinaryOp::kAdd;
  SourceRange op_range;
  ExprPtr lhs;
  ExprPtr rhs;
};

// `x in (a, b)` / `x not in (...)`.
struct InExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kIn;
  InExpr() : Expr(kKind) {}
  bool negated = false;
  ExprPtr operand;
  std::vector<ExprPtr> items;
};

// `x is null` / `x is not null`.
struct IsNullExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kIsNull;
  IsNullExpr() : Expr(kKind) {}
  bool negated = false;
  ExprPtr operand;
};

struct CallExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kCall;
  CallExpr() : Expr(kKind) {}
  Ident name;
  std::vector<ExprPtr> args;
  bool star = false;  // count(*)
  // Set by sema: exactly one of these for a resolved call.
  const stdlib::FunctionSpec* builtin = nullptr;
  const ExternFnDecl* extern_fn = nullptr;
  bool aggregate = false;
};

struct CastExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kCast;
  CastExpr() : Expr(kKind) {}
  ExprPtr operand;
  TypeRef target;
};

struct CaseExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kCase;
  CaseExpr() : Expr(kKind) {}
  struct When {
    ExprPtr condition;
    ExprPtr value;
  };
  std::vector<When> whens;
  ExprPtr else_value;  // may be null: the result is then nullable
};

struct ListExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::kList;
  ListExpr() : Expr(kKind) {}
  std::vector<ExprPtr> items;
};

// The one walk over an expression's direct children, in source order (a case: each condition and
// its value, then the else). Null children are skipped. Code that only needs to reach every
// subexpression uses these, not a switch over ExprKind of its own. The mutable form may replace a
// child through its pointer.
void ForEachChild(Expr& e, const std::function<void(ExprPtr&)>& fn);
void ForEachChild(const Expr& e, const std::function<void(const Expr&)>& fn);
// `e` and every expression below it, parents first. Depth is bounded by the parser.
void ForEachSubexpression(const Expr& e, const std::function<void(const Expr&)>& fn);
// Which sides of a join the expression reads (sema marks the names): bit 0 the left, bit 1 the
// right; 0 for null.
unsigned JoinSidesRead(const Expr* e);

}  // namespace flow::ast
