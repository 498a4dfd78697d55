// The `fold-constants` pass: subexpressions of where/select/explode steps whose operands are all
// literals are evaluated here with exactly the semantics of flow::exec::ops and exec/cast.h
// (wrapping integer arithmetic, null propagation, three-valued and/or, numbers of different types
// compared as doubles, NaN). What the runtime would report as an error (integer `/` or `%` by
// zero) is left in place so the job still fails with its line. Params are not constants (`--set`
// changes them). A folded step is a copy owned by plan.pass_ops; the script's AST is not changed.
// `where true` steps are dropped; `where false` stays (the stream is empty) with a warning.

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string_view>

#include "plan/passes.h"
#include "stdlib/registry/registry.h"

namespace flow::plan {
namespace {

using types::Kind;

// A constant as the runtime holds it: int64 (int, timestamp, duration), double, bool, string.
struct Value {
  enum class Rep { kNull, kInt, kFloat, kBool, kString } rep = Rep::kNull;
  int64_t i = 0;
  double f = 0;
  bool b = false;
  std::string s;

  static Value Null() { return {}; }
  static Value Int(int64_t v) {
    Value x;
    x.rep = Rep::kInt;
    x.i = v;
    return x;
  }
  static Value Float(double v) {
    Value x;
    x.rep = Rep::kFloat;
    x.f = v;
    return x;
  }
  static Value Bool(bool v) {
    Value x;
    x.rep = Rep::kBool;
    x.b = v;
    return x;
  }
  static Value Str(std::string v) {
    Value x;
    x.rep = Rep::kString;
    x.s = std::move(v);
    return x;
  }
  bool null() const { return rep == Rep::kNull; }
  bool numeric() const { return rep == Rep::kInt || rep == Rep::kFloat; }
  double AsDouble() const { return rep == Rep::kInt ? static_cast<double>(i) : f; }
};

std::optional<Value> ValueOf(const ast::Expr* e) {
  const auto* l = ast::As<ast::LiteralExpr>(e);
  if (l == nullptr) return std::nullopt;
  switch (l->literal) {
    case ast::LiteralKind::kInt:
    case ast::LiteralKind::kDuration:
    case ast::LiteralKind::kTimestamp:
      return Value::Int(l->int_value);
    case ast::LiteralKind::kFloat:
      return Value::Float(l->float_value);
    case ast::LiteralKind::kBool:
      return Value::Bool(l->bool_value);
    case ast::LiteralKind::kString:
      return Value::Str(l->string_value);
    case ast::LiteralKind::kNull:
      return Value::Null();
  }
  return std::nullopt;
}

// The literal for `v` as an expression of type `type`, or null when the value's representation is
// not the one generated code would use for that type (then nothing is folded).
ast::ExprPtr MakeLiteral(const Value& v, const types::Type& type, diag::SourceRange range) {
  auto l = std::make_unique<ast::LiteralExpr>();
  l->range = range;
  if (v.null()) {
    l->literal = ast::LiteralKind::kNull;
    l->type = type;
    return l;
  }
  l->type = type.AsNonNullable();
  switch (type.kind()) {
    case Kind::kInt:
    case Kind::kTimestamp:
    case Kind::kDuration:
      if (v.rep != Value::Rep::kInt) return nullptr;
      l->literal = type.kind() == Kind::kInt         ? ast::LiteralKind::kInt
                   : type.kind() == Kind::kTimestamp ? ast::LiteralKind::kTimestamp
                                                     : ast::LiteralKind::kDuration;
      l->int_value = v.i;
      return l;
    case Kind::kFloat:
      if (v.rep != Value::Rep::kFloat) return nullptr;
      l->literal = ast::LiteralKind::kFloat;
      l->float_value = v.f;
      return l;
    case Kind::kBool:
      if (v.rep != Value::Rep::kBool) return nullptr;
      l->literal = ast::LiteralKind::kBool;
      l->bool_value = v.b;
      return l;
    case Kind::kString:
      if (v.rep != Value::Rep::kString) return nullptr;
      l->literal = ast::LiteralKind::kString;
      l->string_value = v.s;
      return l;
    default:
      return nullptr;
  }
}

int64_t Wrap(uint64_t v) {
  return static_cast<int64_t>(v);
}

// ops::detail::Compare / Equal: mixed numbers as doubles, otherwise the type's own operators
// (so NaN compares "equal" in Compare but not in Equal, as at run time).
int Compare(const Value& x, const Value& y) {
  if (x.numeric() && y.numeric() && x.rep != y.rep) {
    double a = x.AsDouble(), b = y.AsDouble();
    return a < b ? -1 : (b < a ? 1 : 0);
  }
  switch (x.rep) {
    case Value::Rep::kInt:
      return x.i < y.i ? -1 : (y.i < x.i ? 1 : 0);
    case Value::Rep::kFloat:
      return x.f < y.f ? -1 : (y.f < x.f ? 1 : 0);
    case Value::Rep::kBool:
      return x.b < y.b ? -1 : (y.b < x.b ? 1 : 0);
    case Value::Rep::kString:
      return x.s < y.s ? -1 : (y.s < x.s ? 1 : 0);
    case Value::Rep::kNull:
      return 0;
  }
  return 0;
}
bool Equal(const Value& x, const Value& y) {
  if (x.numeric() && y.numeric() && x.rep != y.rep) return x.AsDouble() == y.AsDouble();
  switch (x.rep) {
    case Value::Rep::kInt:
      return x.i == y.i;
    case Value::Rep::kFloat:
      return x.f == y.f;
    case Value::Rep::kBool:
      return x.b == y.b;
    case Value::Rep::kString:
      return x.s == y.s;
    case Value::Rep::kNull:
      return false;
  }
  return false;
}
bool SameRep(const Value& x, const Value& y) {
  return x.rep == y.rep || (x.numeric() && y.numeric());
}

// ops::Add/Sub/Mul/Div/Mod/comparisons on non-null values; nullopt = do not fold.
std::optional<Value> Binary(ast::BinaryOp op, const Value& x, const Value& y) {
  using ast::BinaryOp;
  const bool ints = x.rep == Value::Rep::kInt && y.rep == Value::Rep::kInt;
  const bool nums = x.numeric() && y.numeric();
  switch (op) {
    case BinaryOp::kAdd:
      if (x.rep == Value::Rep::kString && y.rep == Value::Rep::kString)
        return Value::Str(x.s + y.s);
      if (ints) return Value::Int(Wrap(static_cast<uint64_t>(x.i) + static_cast<uint64_t>(y.i)));
      if (nums) return Value::Float(x.AsDouble() + y.AsDouble());
      return std::nullopt;
    case BinaryOp::kSub:
      if (ints) return Value::Int(Wrap(static_cast<uint64_t>(x.i) - static_cast<uint64_t>(y.i)));
      if (nums) return Value::Float(x.AsDouble() - y.AsDouble());
      return std::nullopt;
    case BinaryOp::kMul:
      if (ints) return Value::Int(Wrap(static_cast<uint64_t>(x.i) * static_cast<uint64_t>(y.i)));
      if (nums) return Value::Float(x.AsDouble() * y.AsDouble());
      return std::nullopt;
    case BinaryOp::kDiv:
      if (ints) {
        if (y.i == 0) return std::nullopt;  // the run-time error stays
        if (x.i == std::numeric_limits<int64_t>::min() && y.i == -1) return x;
        return Value::Int(x.i / y.i);
      }
      if (nums) return Value::Float(x.AsDouble() / y.AsDouble());
      return std::nullopt;
    case BinaryOp::kMod:
      if (ints) {
        if (y.i == 0) return std::nullopt;
        if (y.i == -1) return Value::Int(0);
        return Value::Int(x.i % y.i);
      }
      if (nums) return Value::Float(std::fmod(x.AsDouble(), y.AsDouble()));
      return std::nullopt;
    case BinaryOp::kEq:
      return SameRep(x, y) ? std::optional(Value::Bool(Equal(x, y))) : std::nullopt;
    case BinaryOp::kNe:
      return SameRep(x, y) ? std::optional(Value::Bool(!Equal(x, y))) : std::nullopt;
    case BinaryOp::kLt:
      return SameRep(x, y) ? std::optional(Value::Bool(Compare(x, y) < 0)) : std::nullopt;
    case BinaryOp::kLe:
      return SameRep(x, y) ? std::optional(Value::Bool(Compare(x, y) <= 0)) : std::nullopt;
    case BinaryOp::kGt:
      return SameRep(x, y) ? std::optional(Value::Bool(Compare(x, y) > 0)) : std::nullopt;
    case BinaryOp::kGe:
      return SameRep(x, y) ? std::optional(Value::Bool(Compare(x, y) >= 0)) : std::nullopt;
    case BinaryOp::kAnd:
    case BinaryOp::kOr:
      return std::nullopt;  // handled with nulls by the caller
  }
  return std::nullopt;
}

// exec::Cast<From, To> for the conversions that need no run-time library (timestamps as text,
// floats as text and durations from text are left alone).
std::optional<Value> Cast(const Value& v, Kind from, Kind to) {
  if (v.null()) return Value::Null();
  auto is_int_like = [](Kind k) {
    return k == Kind::kInt || k == Kind::kTimestamp || k == Kind::kDuration;
  };
  if (to == Kind::kString) {
    if (from == Kind::kString) return v;
    if (from == Kind::kBool) return Value::Str(v.b ? "true" : "false");
    if (from == Kind::kInt || from == Kind::kDuration) return Value::Str(std::to_string(v.i));
    return std::nullopt;
  }
  if (from == Kind::kString) {
    const std::string& s = v.s;
    if (to == Kind::kInt) {
      int64_t r = 0;
      auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), r);
      if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return Value::Null();
      return Value::Int(r);
    }
    if (to == Kind::kFloat) {
      if (s.empty() || s.find('\0') != std::string::npos) return std::nullopt;
      char* end = nullptr;
      double r = std::strtod(s.c_str(), &end);
      if (end != s.c_str() + s.size()) return Value::Null();
      return Value::Float(r);
    }
    if (to == Kind::kBool) {
      std::string low;
      for (char c : s) low.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
      if (low == "true" || s == "1") return Value::Bool(true);
      if (low == "false" || s == "0") return Value::Bool(false);
      return Value::Null();
    }
    return std::nullopt;
  }
  if (from == Kind::kFloat && to != Kind::kFloat) {
    if (!(v.f > -9223372036854775808.0 && v.f < 9223372036854775808.0)) return Value::Null();
    int64_t t = static_cast<int64_t>(v.f);
    if (to == Kind::kBool) return Value::Bool(t != 0);
    if (is_int_like(to)) return Value::Int(t);
    return std::nullopt;
  }
  if (to == Kind::kFloat) {
    if (from == Kind::kFloat) return v;
    if (is_int_like(from)) return Value::Float(static_cast<double>(v.i));
    if (from == Kind::kBool) return Value::Float(v.b ? 1.0 : 0.0);
    return std::nullopt;
  }
  if (to == Kind::kBool) {
    if (from == Kind::kBool) return v;
    if (is_int_like(from)) return Value::Bool(v.i != 0);
    return std::nullopt;
  }
  if (is_int_like(to)) {
    if (is_int_like(from)) return v;
    if (from == Kind::kBool) return Value::Int(v.b ? 1 : 0);
  }
  return std::nullopt;
}

// Built-in string functions that are pure and simple enough to evaluate here exactly as
// flow/stdlib/scalar.h does; a null argument gives null (they all propagate nulls).
std::optional<Value> Call(const std::string& name, const std::vector<Value>& args) {
  for (const Value& a : args) {
    if (a.null()) return Value::Null();
    if (a.rep != Value::Rep::kString) return std::nullopt;
  }
  auto space = [](char c) { return c == ' ' || (c >= '\t' && c <= '\r'); };
  if (args.size() == 1) {
    std::string s = args[0].s;
    if (name == "lower" || name == "upper") {
      for (char& c : s) {
        if (name == "lower" && c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        if (name == "upper" && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
      }
      return Value::Str(s);
    }
    if (name == "length") {
      int64_t n = 0;
      for (unsigned char c : s) n += (c & 0xC0) != 0x80 ? 1 : 0;
      return Value::Int(n);
    }
    if (name == "trim" || name == "ltrim" || name == "rtrim") {
      size_t b = 0, e = s.size();
      while (name != "rtrim" && b < e && space(s[b])) ++b;
      while (name != "ltrim" && e > b && space(s[e - 1])) --e;
      return Value::Str(s.substr(b, e - b));
    }
  }
  if (args.size() == 2) {
    std::string_view s = args[0].s, p = args[1].s;
    if (name == "starts_with") return Value::Bool(s.starts_with(p));
    if (name == "ends_with") return Value::Bool(s.ends_with(p));
    if (name == "contains") return Value::Bool(s.find(p) != std::string_view::npos);
  }
  if (name == "concat" && !args.empty()) {
    std::string out;
    for (const Value& a : args) out += a.s;
    return Value::Str(out);
  }
  return std::nullopt;
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
  ast::ExprPtr Literal(const Value& v, ast::ExprPtr e) {
    ast::ExprPtr l = MakeLiteral(v, e->type, e->range);
    return l ? Folded(std::move(l)) : std::move(e);
  }
  ast::ExprPtr FoldInPlace(ast::ExprPtr e) {
    switch (e->kind) {
      case ast::ExprKind::kField: {
        auto* f = ast::As<ast::FieldExpr>(e.get());
        f->base = FoldInPlace(std::move(f->base));
        return e;
      }
      case ast::ExprKind::kIndex: {
        auto* x = ast::As<ast::IndexExpr>(e.get());
        x->base = FoldInPlace(std::move(x->base));
        x->index = FoldInPlace(std::move(x->index));
        return e;
      }
      case ast::ExprKind::kUnary:
        return Unary(std::move(e));
      case ast::ExprKind::kBinary:
        return BinaryExpr(std::move(e));
      case ast::ExprKind::kIn:
        return In(std::move(e));
      case ast::ExprKind::kIsNull: {
        auto* x = ast::As<ast::IsNullExpr>(e.get());
        x->operand = FoldInPlace(std::move(x->operand));
        std::optional<Value> v = ValueOf(x->operand.get());
        if (!v) return e;
        bool r = v->null() != x->negated;
        return Literal(Value::Bool(r), std::move(e));
      }
      case ast::ExprKind::kCall: {
        auto* x = ast::As<ast::CallExpr>(e.get());
        if (x->aggregate) return e;
        std::vector<Value> args;
        bool constant = x->builtin != nullptr && x->extern_fn == nullptr && !x->star;
        for (auto& a : x->args) {
          a = FoldInPlace(std::move(a));
          std::optional<Value> v = ValueOf(a.get());
          if (v) args.push_back(*v);
          constant = constant && v.has_value();
        }
        if (!constant) return e;
        std::optional<Value> r = Call(x->builtin->name, args);
        return r ? Literal(*r, std::move(e)) : std::move(e);
      }
      case ast::ExprKind::kCast: {
        auto* x = ast::As<ast::CastExpr>(e.get());
        x->operand = FoldInPlace(std::move(x->operand));
        std::optional<Value> v = ValueOf(x->operand.get());
        if (!v) return e;
        Kind from = x->operand->type.kind();
        if (from == Kind::kNull) return Literal(Value::Null(), std::move(e));
        std::optional<Value> r = Cast(*v, from, e->type.kind());
        return r ? Literal(*r, std::move(e)) : std::move(e);
      }
      case ast::ExprKind::kCase:
        return Case(std::move(e));
      case ast::ExprKind::kList: {
        for (auto& i : ast::As<ast::ListExpr>(e.get())->items) i = FoldInPlace(std::move(i));
        return e;
      }
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
    std::optional<Value> v = ValueOf(u->operand.get());
    if (!v) return e;
    if (v->null()) return Literal(Value::Null(), std::move(e));
    if (u->op == ast::UnaryOp::kNot) {
      if (v->rep != Value::Rep::kBool) return e;
      return Literal(Value::Bool(!v->b), std::move(e));
    }
    if (v->rep == Value::Rep::kInt)
      return Literal(Value::Int(Wrap(0 - static_cast<uint64_t>(v->i))), std::move(e));
    if (v->rep == Value::Rep::kFloat) return Literal(Value::Float(-v->f), std::move(e));
    return e;
  }

  ast::ExprPtr BinaryExpr(ast::ExprPtr e) {
    auto* b = ast::As<ast::BinaryExpr>(e.get());
    b->lhs = FoldInPlace(std::move(b->lhs));
    b->rhs = FoldInPlace(std::move(b->rhs));
    std::optional<Value> x = ValueOf(b->lhs.get());
    std::optional<Value> y = ValueOf(b->rhs.get());
    if (b->op == ast::BinaryOp::kAnd || b->op == ast::BinaryOp::kOr)
      return Logic(std::move(e), x, y);
    if (!x || !y) return e;
    if (x->null() || y->null()) return Literal(Value::Null(), std::move(e));
    std::optional<Value> r = Binary(b->op, *x, *y);
    return r ? Literal(*r, std::move(e)) : std::move(e);
  }

  // Three-valued and/or (ops::And / ops::Or). Generated code evaluates both operands, so a
  // constant that decides the result (`false and x`) replaces the whole only when `x` cannot fail
  // or call an extern fn; `true and x` / `false or x` is x itself.
  ast::ExprPtr Logic(ast::ExprPtr e, const std::optional<Value>& x, const std::optional<Value>& y) {
    auto* b = ast::As<ast::BinaryExpr>(e.get());
    const bool is_and = b->op == ast::BinaryOp::kAnd;
    auto decides = [&](const std::optional<Value>& v) {
      return v && !v->null() && v->rep == Value::Rep::kBool && v->b != is_and;
    };
    auto neutral = [&](const std::optional<Value>& v) {
      return v && !v->null() && v->rep == Value::Rep::kBool && v->b == is_and;
    };
    if (x && y) {
      bool xp = !x->null(), yp = !y->null();
      if (decides(x) || decides(y)) return Literal(Value::Bool(!is_and), std::move(e));
      if (xp && yp) return Literal(Value::Bool(is_and), std::move(e));
      return Literal(Value::Null(), std::move(e));
    }
    if (decides(x) && IsSafeToMove(*b->rhs)) return Literal(Value::Bool(!is_and), std::move(e));
    if (decides(y) && IsSafeToMove(*b->lhs)) return Literal(Value::Bool(!is_and), std::move(e));
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
    std::optional<Value> v = ValueOf(x->operand.get());
    if (!v || !constant) return e;
    if (v->null()) return Literal(Value::Null(), std::move(e));
    bool found = false;
    for (const auto& i : x->items) {
      Value item = *ValueOf(i.get());
      if (item.null()) continue;
      if (!SameRep(*v, item)) return e;
      found = found || Equal(*v, item);
    }
    return Literal(Value::Bool(found != x->negated), std::move(e));
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
      std::optional<Value> v = ValueOf(c->whens[dropped].condition.get());
      if (!v) break;
      if (!v->null() && v->rep == Value::Rep::kBool && v->b) {
        return ChooseBranch(std::move(e), std::move(c->whens[dropped].value));
      }
      ++dropped;
    }
    if (dropped == c->whens.size()) {
      if (!c->else_value) return Literal(Value::Null(), std::move(e));
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
    if (std::optional<Value> v = ValueOf(value.get())) {
      Value converted = *v;
      if (e->type.kind() == Kind::kFloat && v->rep == Value::Rep::kInt)
        converted = Value::Float(static_cast<double>(v->i));
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
          cx.warnings.push_back({diag::Kind::kAlwaysFalse, w->range,
                                 "this `where` condition is always false: no record passes it"});
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
