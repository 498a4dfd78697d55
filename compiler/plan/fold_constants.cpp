// The `fold-constants` pass: subexpressions of where/select/explode steps whose operands are all
// literals are evaluated at build time, through the runtime's own operator, cast and function
// definitions (plan/fold_eval.h), so the literal is what the job would compute. What the runtime
// would report as an error (integer `/` or `%` by zero) is left in place so the job still fails
// with its line. Params are not constants (`--set` changes them). A folded step is a copy owned by
// plan.pass_ops; the script's AST is not changed. `where true` steps are dropped; `where false`
// stays (the stream is empty) with a warning.

#include <optional>
#include <string>
#include <variant>

#include "flow/runtime/exec/ops.h"
#include "plan/fold_eval.h"
#include "plan/passes.h"
#include "stdlib/registry/registry.h"

namespace flow::plan {
namespace {

using fold::Constant;
using types::Kind;

std::optional<Constant> ValueOf(const ast::Expr* e) {
  const auto* l = ast::As<ast::LiteralExpr>(e);
  if (l == nullptr) return std::nullopt;
  switch (l->literal) {
    case ast::LiteralKind::kInt:
    case ast::LiteralKind::kDuration:
    case ast::LiteralKind::kTimestamp:
      return Constant(std::in_place_type<int64_t>, l->int_value);
    case ast::LiteralKind::kFloat:
      return Constant(std::in_place_type<double>, l->float_value);
    case ast::LiteralKind::kBool:
      return Constant(std::in_place_type<bool>, l->bool_value);
    case ast::LiteralKind::kString:
      return Constant(std::in_place_type<std::string>, l->string_value);
    case ast::LiteralKind::kNull:
      return Constant();
  }
  return std::nullopt;
}

Constant Bool(bool b) {
  return Constant(std::in_place_type<bool>, b);
}
// True when `v` is the bool `b` (not null, not another type).
bool IsBool(const std::optional<Constant>& v, bool b) {
  const bool* x = v ? std::get_if<bool>(&*v) : nullptr;
  return x != nullptr && *x == b;
}

// The literal for `v` as an expression of type `type`, or null when the value's representation is
// not the one generated code would use for that type (then nothing is folded).
ast::ExprPtr MakeLiteral(const Constant& v, const types::Type& type, diag::SourceRange range) {
  auto l = std::make_unique<ast::LiteralExpr>();
  l->range = range;
  if (fold::IsNull(v)) {
    l->literal = ast::LiteralKind::kNull;
    l->type = type;
    return l;
  }
  l->type = type.AsNonNullable();
  switch (type.kind()) {
    case Kind::kInt:
    case Kind::kTimestamp:
    case Kind::kDuration:
      if (!std::holds_alternative<int64_t>(v)) return nullptr;
      l->literal = type.kind() == Kind::kInt         ? ast::LiteralKind::kInt
                   : type.kind() == Kind::kTimestamp ? ast::LiteralKind::kTimestamp
                                                     : ast::LiteralKind::kDuration;
      l->int_value = std::get<int64_t>(v);
      return l;
    case Kind::kFloat:
      if (!std::holds_alternative<double>(v)) return nullptr;
      l->literal = ast::LiteralKind::kFloat;
      l->float_value = std::get<double>(v);
      return l;
    case Kind::kBool:
      if (!std::holds_alternative<bool>(v)) return nullptr;
      l->literal = ast::LiteralKind::kBool;
      l->bool_value = std::get<bool>(v);
      return l;
    case Kind::kString:
      if (!std::holds_alternative<std::string>(v)) return nullptr;
      l->literal = ast::LiteralKind::kString;
      l->string_value = std::get<std::string>(v);
      return l;
    default:
      return nullptr;
  }
}

class Folder {
 public:
  bool changed() const { return changed_; }

  // A folded copy of `e` (always a copy; `changed()` tells whether anything was folded).
  ast::ExprPtr Fold(const ast::Expr& e) {
    ast::ExprPtr c = CloneExpr(e);
    return FoldInPlace(std::move(c));
  }

 private:
  ast::ExprPtr Folded(ast::ExprPtr replacement) {
    changed_ = true;
    return replacement;
  }
  // The literal for `v` in place of `e`, or `e` itself when `v` cannot be written as its type.
  ast::ExprPtr Literal(const Constant& v, ast::ExprPtr e) {
    ast::ExprPtr l = MakeLiteral(v, e->type, e->range);
    return l ? Folded(std::move(l)) : std::move(e);
  }
  ast::ExprPtr FoldInPlace(ast::ExprPtr e) {
    switch (e->kind) {
      case ast::ExprKind::kField:
      case ast::ExprKind::kIndex:
      case ast::ExprKind::kList:
        // Nothing folds at this level; its operands may.
        ast::ForEachChild(*e, [&](ast::ExprPtr& c) { c = FoldInPlace(std::move(c)); });
        return e;
      case ast::ExprKind::kUnary:
        return Unary(std::move(e));
      case ast::ExprKind::kBinary:
        return BinaryExpr(std::move(e));
      case ast::ExprKind::kIn:
        return In(std::move(e));
      case ast::ExprKind::kIsNull: {
        auto* x = ast::As<ast::IsNullExpr>(e.get());
        x->operand = FoldInPlace(std::move(x->operand));
        std::optional<Constant> v = ValueOf(x->operand.get());
        if (!v) return e;
        bool r = fold::IsNull(*v) != x->negated;
        return Literal(Bool(r), std::move(e));
      }
      case ast::ExprKind::kCall: {
        auto* x = ast::As<ast::CallExpr>(e.get());
        if (x->aggregate) return e;
        std::vector<Constant> args;
        bool constant = x->builtin != nullptr && x->extern_fn == nullptr && !x->star;
        for (auto& a : x->args) {
          a = FoldInPlace(std::move(a));
          std::optional<Constant> v = ValueOf(a.get());
          if (v) args.push_back(*v);
          constant = constant && v.has_value();
        }
        if (!constant) return e;
        std::optional<Constant> r = fold::Call(x->builtin->name, args);
        return r ? Literal(*r, std::move(e)) : std::move(e);
      }
      case ast::ExprKind::kCast: {
        auto* x = ast::As<ast::CastExpr>(e.get());
        x->operand = FoldInPlace(std::move(x->operand));
        std::optional<Constant> v = ValueOf(x->operand.get());
        if (!v) return e;
        Kind from = x->operand->type.kind();
        if (from == Kind::kNull) return Literal(Constant(), std::move(e));
        std::optional<Constant> r = fold::Cast(*v, from, e->type.kind());
        return r ? Literal(*r, std::move(e)) : std::move(e);
      }
      case ast::ExprKind::kCase:
        return Case(std::move(e));
      case ast::ExprKind::kError:
      case ast::ExprKind::kLiteral:
      case ast::ExprKind::kName:
        return e;
    }
    return e;
  }

  ast::ExprPtr Unary(ast::ExprPtr e) {
    auto* u = ast::As<ast::UnaryExpr>(e.get());
    u->operand = FoldInPlace(std::move(u->operand));
    std::optional<Constant> v = ValueOf(u->operand.get());
    if (!v) return e;
    std::optional<Constant> r = fold::Unary(u->op, *v);
    return r ? Literal(*r, std::move(e)) : std::move(e);
  }

  ast::ExprPtr BinaryExpr(ast::ExprPtr e) {
    auto* b = ast::As<ast::BinaryExpr>(e.get());
    b->lhs = FoldInPlace(std::move(b->lhs));
    b->rhs = FoldInPlace(std::move(b->rhs));
    std::optional<Constant> x = ValueOf(b->lhs.get());
    std::optional<Constant> y = ValueOf(b->rhs.get());
    if (b->op == ast::BinaryOp::kAnd || b->op == ast::BinaryOp::kOr)
      return Logic(std::move(e), x, y);
    if (!x || !y) return e;
    std::optional<Constant> r = fold::Binary(b->op, *x, *y);
    return r ? Literal(*r, std::move(e)) : std::move(e);
  }

  // Three-valued and/or (ops::And / ops::Or). Generated code evaluates both operands, so a
  // constant that decides the result (`false and x`) replaces the whole only when `x` cannot fail
  // or call an extern fn; `true and x` / `false or x` is x itself.
  ast::ExprPtr Logic(ast::ExprPtr e, const std::optional<Constant>& x,
                     const std::optional<Constant>& y) {
    auto* b = ast::As<ast::BinaryExpr>(e.get());
    const bool is_and = b->op == ast::BinaryOp::kAnd;
    auto decides = [&](const std::optional<Constant>& v) { return IsBool(v, !is_and); };
    auto neutral = [&](const std::optional<Constant>& v) { return IsBool(v, is_and); };
    if (x && y) {
      std::optional<Constant> r = fold::Binary(b->op, *x, *y);
      return r ? Literal(*r, std::move(e)) : std::move(e);
    }
    if (decides(x) && IsSafeToMove(*b->rhs)) return Literal(Bool(!is_and), std::move(e));
    if (decides(y) && IsSafeToMove(*b->lhs)) return Literal(Bool(!is_and), std::move(e));
    if (neutral(x)) {
      ast::ExprPtr keep = std::move(b->rhs);
      if (keep->type.kind() == e->type.kind()) return Folded(std::move(keep));
      b->rhs = std::move(keep);
    } else if (neutral(y)) {
      ast::ExprPtr keep = std::move(b->lhs);
      if (keep->type.kind() == e->type.kind()) return Folded(std::move(keep));
      b->lhs = std::move(keep);
    }
    return e;
  }

  ast::ExprPtr In(ast::ExprPtr e) {
    auto* x = ast::As<ast::InExpr>(e.get());
    x->operand = FoldInPlace(std::move(x->operand));
    bool constant = true;
    for (auto& i : x->items) {
      i = FoldInPlace(std::move(i));
      constant = constant && ValueOf(i.get()).has_value();
    }
    std::optional<Constant> v = ValueOf(x->operand.get());
    if (!v || !constant) return e;
    if (fold::IsNull(*v)) return Literal(Constant(), std::move(e));  // as ops::In
    // ops::In: true when some non-null item equals the operand (ops::Eq).
    bool found = false;
    for (const auto& i : x->items) {
      Constant item = *ValueOf(i.get());
      if (fold::IsNull(item)) continue;
      std::optional<Constant> eq = fold::Binary(ast::BinaryOp::kEq, *v, item);
      if (!eq || !std::holds_alternative<bool>(*eq)) return e;
      found = found || std::get<bool>(*eq);
    }
    return Literal(Bool(found != x->negated), std::move(e));
  }

  // Conditions are tested in order and only until one is true, so literal conditions can be
  // resolved from the front: a non-true one drops its branch, a true one ends the case.
  ast::ExprPtr Case(ast::ExprPtr e) {
    auto* c = ast::As<ast::CaseExpr>(e.get());
    for (auto& w : c->whens) {
      w.condition = FoldInPlace(std::move(w.condition));
      w.value = FoldInPlace(std::move(w.value));
    }
    if (c->else_value) c->else_value = FoldInPlace(std::move(c->else_value));
    size_t dropped = 0;
    while (dropped < c->whens.size()) {
      std::optional<Constant> v = ValueOf(c->whens[dropped].condition.get());
      if (!v) break;
      if (IsBool(v, true)) {
        return ChooseBranch(std::move(e), std::move(c->whens[dropped].value));
      }
      ++dropped;
    }
    if (dropped == c->whens.size()) {
      if (!c->else_value) return Literal(Constant(), std::move(e));
      return ChooseBranch(std::move(e), std::move(c->else_value));
    }
    if (dropped > 0) {
      c->whens.erase(c->whens.begin(), c->whens.begin() + static_cast<std::ptrdiff_t>(dropped));
      changed_ = true;
    }
    return e;
  }

  // The case becomes `value`: a literal is re-typed as the case (ops::As converts it the same
  // way), any other expression only when it has the case's kind of type.
  ast::ExprPtr ChooseBranch(ast::ExprPtr e, ast::ExprPtr value) {
    if (std::optional<Constant> v = ValueOf(value.get())) {
      Constant converted = *v;
      if (e->type.kind() == Kind::kFloat && std::holds_alternative<int64_t>(*v))
        converted = Constant(exec::ops::As<double>(std::get<int64_t>(*v)));
      if (ast::ExprPtr l = MakeLiteral(converted, e->type, e->range)) return Folded(std::move(l));
    } else if (value->type.kind() == e->type.kind()) {
      return Folded(std::move(value));
    }
    // Not replaceable: put the branch back unchanged (nothing was folded at this level).
    auto* c = ast::As<ast::CaseExpr>(e.get());
    for (auto& w : c->whens) {
      if (!w.value) w.value = std::move(value);
    }
    if (value) c->else_value = std::move(value);
    return e;
  }

  bool changed_ = false;
};

bool IsLiteralBool(const ast::Expr& e, bool value) {
  const auto* l = ast::As<ast::LiteralExpr>(&e);
  return l != nullptr && l->literal == ast::LiteralKind::kBool && l->bool_value == value;
}

// A folded copy of a step's operator, or null when nothing in it folds.
std::unique_ptr<ast::Op> FoldStep(const ast::Op& op) {
  Folder f;
  if (const auto* w = ast::As<ast::WhereOp>(&op)) {
    auto c = std::make_unique<ast::WhereOp>();
    c->range = w->range;
    c->keyword_range = w->keyword_range;
    c->output = w->output;
    c->condition = f.Fold(*w->condition);
    if (f.changed()) return c;
  } else if (const auto* s = ast::As<ast::SelectOp>(&op)) {
    auto c = std::make_unique<ast::SelectOp>();
    c->range = s->range;
    c->keyword_range = s->keyword_range;
    c->output = s->output;
    for (const ast::SelectItem& item : s->items) {
      ast::SelectItem copy;
      copy.star = item.star;
      copy.star_range = item.star_range;
      copy.item.alias = item.item.alias;
      copy.item.output_name = item.item.output_name;
      if (item.item.expr) copy.item.expr = f.Fold(*item.item.expr);
      c->items.push_back(std::move(copy));
    }
    if (f.changed()) return c;
  } else if (const auto* x = ast::As<ast::ExplodeOp>(&op)) {
    auto c = std::make_unique<ast::ExplodeOp>();
    c->range = x->range;
    c->keyword_range = x->keyword_range;
    c->output = x->output;
    c->alias = x->alias;
    c->list = f.Fold(*x->list);
    if (f.changed()) return c;
  }
  return nullptr;
}

}  // namespace

void FoldConstants(Plan& plan, PassContext& cx) {
  for (auto& slot : plan.nodes) {
    auto* chain = As<ChainNode>(slot.get());
    if (chain == nullptr) continue;
    std::vector<ChainStep> kept;
    for (ChainStep& step : chain->steps) {
      if (std::unique_ptr<ast::Op> folded = FoldStep(*step.op)) {
        step.op = folded.get();
        plan.pass_ops.push_back(std::move(folded));
      }
      if (const auto* w = ast::As<ast::WhereOp>(step.op)) {
        if (IsLiteralBool(*w->condition, true)) continue;  // keeps every record
        if (IsLiteralBool(*w->condition, false)) {
          cx.Warn(diag::Kind::kAlwaysFalse, w->range,
                  "this `where` condition is always false: no record passes it");
        }
      }
      kept.push_back(step);
    }
    chain->steps = std::move(kept);
    if (!chain->steps.empty()) continue;
    // Every step was `where true`: readers read the chain's input directly (same record type).
    for (int reader : plan.Consumers(chain->id)) {
      for (int& in : plan.Get(reader)->inputs) {
        if (in == chain->id) in = chain->inputs[0];
      }
    }
    slot.reset();
  }
}

}  // namespace flow::plan
