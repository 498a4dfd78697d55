#include "ast/expr.h"

namespace flow::ast {

const char* Spelling(BinaryOp op) {
  switch (op) {
    case BinaryOp::kMul:
      return "*";
    case BinaryOp::kDiv:
      return "/";
    case BinaryOp::kMod:
      return "%";
    case BinaryOp::kAdd:
      return "+";
    case BinaryOp::kSub:
      return "-";
    case BinaryOp::kEq:
      return "==";
    case BinaryOp::kNe:
      return "!=";
    case BinaryOp::kLt:
      return "<";
    case BinaryOp::kLe:
      return "<=";
    case BinaryOp::kGt:
      return ">";
    case BinaryOp::kGe:
      return ">=";
    case BinaryOp::kAnd:
      return "and";
    case BinaryOp::kOr:
      return "or";
  }
  return "?";
}

void ForEachChild(Expr& e, const std::function<void(ExprPtr&)>& fn) {
  auto each = [&](ExprPtr& child) {
    if (child) fn(child);
  };
  switch (e.kind) {
    case ExprKind::kError:
    case ExprKind::kLiteral:
    case ExprKind::kName:
      return;
    case ExprKind::kField:
      return each(As<FieldExpr>(&e)->base);
    case ExprKind::kIndex:
      each(As<IndexExpr>(&e)->base);
      return each(As<IndexExpr>(&e)->index);
    case ExprKind::kUnary:
      return each(As<UnaryExpr>(&e)->operand);
    case ExprKind::kBinary:
      each(As<BinaryExpr>(&e)->lhs);
      return each(As<BinaryExpr>(&e)->rhs);
    case ExprKind::kIn:
      each(As<InExpr>(&e)->operand);
      for (ExprPtr& item : As<InExpr>(&e)->items) each(item);
      return;
    case ExprKind::kIsNull:
      return each(As<IsNullExpr>(&e)->operand);
    case ExprKind::kCall:
      for (ExprPtr& arg : As<CallExpr>(&e)->args) each(arg);
      return;
    case ExprKind::kCast:
      return each(As<CastExpr>(&e)->operand);
    case ExprKind::kCase:
      for (CaseExpr::When& w : As<CaseExpr>(&e)->whens) {
        each(w.condition);
        each(w.value);
      }
      return each(As<CaseExpr>(&e)->else_value);
    case ExprKind::kList:
      for (ExprPtr& item : As<ListExpr>(&e)->items) each(item);
      return;
  }
}

void ForEachChild(const Expr& e, const std::function<void(const Expr&)>& fn) {
  // The same children as the mutable walk; nothing is changed through it.
  ForEachChild(const_cast<Expr&>(e), [&](ExprPtr& child) { fn(*child); });
}

void ForEachSubexpression(const Expr& e, const std::function<void(const Expr&)>& fn) {
  fn(e);
  ForEachChild(e, [&](const Expr& child) { ForEachSubexpression(child, fn); });
}

unsigned JoinSidesRead(const Expr* e) {
  unsigned sides = 0;
  if (e == nullptr) return sides;
  ForEachSubexpression(*e, [&](const Expr& x) {
    const auto* n = As<NameExpr>(&x);
    if (n != nullptr && n->join_side >= 0) sides |= 1u << n->join_side;
  });
  return sides;
}

}  // namespace flow::ast
