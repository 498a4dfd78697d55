#include "codegen/expr_emitter.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>

#include "ast/decl.h"
#include "codegen/escape.h"
#include "plan/fold_eval.h"
#include "stdlib/registry/registry.h"

namespace flow::codegen {
namespace {

bool IsNullType(const ast::Expr& e) {
  return e.type.kind() == types::Kind::kNull;
}

// How generated code spells a cast kind (plan::fold::CastKindOf maps the Flow kinds to them).
const char* CastKindName(exec::CastKind k) {
  switch (k) {
    case exec::CastKind::kBool:
      return "::flow::exec::CastKind::kBool";
    case exec::CastKind::kInt:
      return "::flow::exec::CastKind::kInt";
    case exec::CastKind::kFloat:
      return "::flow::exec::CastKind::kFloat";
    case exec::CastKind::kString:
      return "::flow::exec::CastKind::kString";
    case exec::CastKind::kBytes:
      return "::flow::exec::CastKind::kBytes";
    case exec::CastKind::kTimestamp:
      return "::flow::exec::CastKind::kTimestamp";
    case exec::CastKind::kDuration:
      return "::flow::exec::CastKind::kDuration";
    case exec::CastKind::kOther:
      break;
  }
  return nullptr;
}

}  // namespace

std::string ExprEmitter::Fail(const std::string& what, const ast::Expr& e) {
  if (error_.empty()) {
    error_ = what;
    error_range_ = e.range;
  }
  return "0";
}

std::string ExprEmitter::TypedNull(const types::Type& type) const {
  types::Type t = type.kind() == types::Kind::kNull ? types::Type::Bool() : type;
  return records_.Cpp(t.AsNullable()) + "()";
}

// A literal `null` argument: lift.h needs a typed empty optional to call the implementation's
// overload (`starts_with(s, null)`, `greatest(a, null)`), so the parameter's type, or the type
// bound to T (`T` or a constrained `T:comparable`), names it. A parameter of another pattern
// (`any`, `numeric`, `list<T>`) gets the untyped std::nullopt its implementation takes.
std::string ExprEmitter::NullArgument(const stdlib::FunctionSpec& fn, size_t index,
                                      const types::Type& bound_t) const {
  if (fn.params.empty()) return "std::nullopt";
  const std::string& pattern = fn.params[std::min(index, fn.params.size() - 1)].type;
  types::Type t = types::ParsePrimitive(pattern);
  const bool is_t = pattern == "T" || pattern.starts_with("T:");
  if (is_t && bound_t.kind() != types::Kind::kError) t = bound_t;
  if (t.kind() == types::Kind::kError) return "std::nullopt";
  return TypedNull(t);
}

std::string ExprEmitter::EmitAs(const ast::Expr& e, const types::Type& type) {
  return "::flow::exec::ops::As<" + records_.Cpp(type) + ">(" + Emit(e) + ")";
}

std::string ExprEmitter::Literal(const ast::LiteralExpr& e) {
  switch (e.literal) {
    case ast::LiteralKind::kInt:
    case ast::LiteralKind::kDuration:
    case ast::LiteralKind::kTimestamp:
      if (e.int_value == INT64_MIN) return "int64_t{INT64_MIN}";
      return "int64_t{" + std::to_string(e.int_value) + "}";
    case ast::LiteralKind::kFloat: {
      if (std::isnan(e.float_value)) return "std::numeric_limits<double>::quiet_NaN()";
      if (std::isinf(e.float_value))
        return e.float_value > 0 ? "std::numeric_limits<double>::infinity()"
                                 : "-std::numeric_limits<double>::infinity()";
      char buf[64];
      std::snprintf(buf, sizeof buf, "%a", e.float_value);  // hex float: exact
      return std::string("double{") + buf + "}";
    }
    case ast::LiteralKind::kString:
      return CppStringObject(e.string_value);
    case ast::LiteralKind::kBool:
      return e.bool_value ? "true" : "false";
    case ast::LiteralKind::kNull:
      return TypedNull(e.type);
  }
  return "0";
}

std::string ExprEmitter::Emit(const ast::Expr& e) {
  using ast::ExprKind;
  switch (e.kind) {
    case ExprKind::kError:
      return Fail("an expression with errors", e);
    case ExprKind::kLiteral:
      return Literal(*ast::As<ast::LiteralExpr>(&e));
    case ExprKind::kName: {
      const auto* n = ast::As<ast::NameExpr>(&e);
      switch (n->target) {
        case ast::NameTarget::kParam:
          return scope_.params + "." + MangleIdent(n->name);
        case ast::NameTarget::kJoinSide:
          if (n->join_side >= 0 && static_cast<size_t>(n->join_side) < scope_.sides.size())
            return scope_.sides[static_cast<size_t>(n->join_side)];
          return scope_.record;
        case ast::NameTarget::kField:
          if (n->join_side >= 0 && static_cast<size_t>(n->join_side) < scope_.sides.size()) {
            return scope_.sides[static_cast<size_t>(n->join_side)] + "." + MangleIdent(n->name);
          }
          return scope_.record + "." + MangleIdent(n->name);
        case ast::NameTarget::kWindowField:
          return scope_.record + "." + MangleIdent(n->name);
        default:
          return Fail("this kind of name (`" + CommentText(n->name) + "`)", e);
      }
    }
    case ExprKind::kField: {
      const auto* f = ast::As<ast::FieldExpr>(&e);
      if (f->base->type.kind() != types::Kind::kRecord) return Fail("a qualified name", e);
      std::string member = MangleIdent(f->field.name);
      if (f->base->type.nullable()) {
        return "::flow::exec::ops::Lift([](const auto& b) { return b." + member + "; }, " +
               Emit(*f->base) + ")";
      }
      return "(" + Emit(*f->base) + ")." + member;
    }
    case ExprKind::kIndex: {
      const auto* x = ast::As<ast::IndexExpr>(&e);
      return "::flow::exec::ops::Index(" + Emit(*x->base) + ", " + Emit(*x->index) + ")";
    }
    case ExprKind::kUnary: {
      const auto* u = ast::As<ast::UnaryExpr>(&e);
      if (IsNullType(*u->operand)) return TypedNull(e.type);
      return std::string(u->op == ast::UnaryOp::kNeg ? "::flow::exec::ops::Neg("
                                                     : "::flow::exec::ops::Not(") +
             Emit(*u->operand) + ")";
    }
    case ExprKind::kBinary:
      return Binary(*ast::As<ast::BinaryExpr>(&e));
    case ExprKind::kIn: {
      const auto* x = ast::As<ast::InExpr>(&e);
      if (IsNullType(*x->operand)) return TypedNull(e.type);
      std::string s = "::flow::exec::ops::In(" + Emit(*x->operand);
      for (const auto& item : x->items)
        s += ", " + (IsNullType(*item) ? TypedNull(x->operand->type) : Emit(*item));
      s += ")";
      return x->negated ? "::flow::exec::ops::Not(" + s + ")" : s;
    }
    case ExprKind::kIsNull: {
      const auto* x = ast::As<ast::IsNullExpr>(&e);
      std::string s = "::flow::exec::ops::IsNull(" + Emit(*x->operand) + ")";
      return x->negated ? "!" + s : s;
    }
    case ExprKind::kCall:
      return Call(*ast::As<ast::CallExpr>(&e));
    case ExprKind::kCast:
      return Cast(*ast::As<ast::CastExpr>(&e));
    case ExprKind::kCase:
      return Case(*ast::As<ast::CaseExpr>(&e));
    case ExprKind::kList: {
      const auto* l = ast::As<ast::ListExpr>(&e);
      const types::Type& elem = e.type.element();
      std::string s = "std::vector<" + records_.Cpp(elem) + ">{";
      for (size_t i = 0; i < l->items.size(); ++i)
        s += (i ? ", " : "") + EmitAs(*l->items[i], elem);
      return s + "}";
    }
  }
  return Fail("this expression", e);
}

std::string ExprEmitter::Binary(const ast::BinaryExpr& e) {
  using ast::BinaryOp;
  bool null_operand = IsNullType(*e.lhs) || IsNullType(*e.rhs);
  if (null_operand && e.op != BinaryOp::kAnd && e.op != BinaryOp::kOr) return TypedNull(e.type);
  std::string a = IsNullType(*e.lhs) ? TypedNull(types::Type::Bool()) : Emit(*e.lhs);
  std::string b = IsNullType(*e.rhs) ? TypedNull(types::Type::Bool()) : Emit(*e.rhs);
  std::string where = CppStringLiteral(scope_.flow_file + ":" + std::to_string(e.range.line) + ":" +
                                       std::to_string(e.range.col));
  const char* fn = nullptr;
  switch (e.op) {
    case BinaryOp::kMul:
      fn = "Mul";
      break;
    case BinaryOp::kDiv:
      return "::flow::exec::ops::Div(" + a + ", " + b + ", " + where + ")";
    case BinaryOp::kMod:
      return "::flow::exec::ops::Mod(" + a + ", " + b + ", " + where + ")";
    case BinaryOp::kAdd:
      fn = "Add";
      break;
    case BinaryOp::kSub:
      fn = "Sub";
      break;
    case BinaryOp::kEq:
      fn = "Eq";
      break;
    case BinaryOp::kNe:
      fn = "Ne";
      break;
    case BinaryOp::kLt:
      fn = "Lt";
      break;
    case BinaryOp::kLe:
      fn = "Le";
      break;
    case BinaryOp::kGt:
      fn = "Gt";
      break;
    case BinaryOp::kGe:
      fn = "Ge";
      break;
    case BinaryOp::kAnd:
      fn = "And";
      break;
    case BinaryOp::kOr:
      fn = "Or";
      break;
  }
  return std::string("::flow::exec::ops::") + fn + "(" + a + ", " + b + ")";
}

std::string ExprEmitter::Call(const ast::CallExpr& e) {
  if (e.aggregate) return Fail("an aggregate outside `aggregate`", e);
  if (e.extern_fn != nullptr) {
    // Not called when a null argument meets a non-nullable parameter: the result is null.
    const auto& params = e.extern_fn->param_types;
    std::string guard, call = "::" + e.extern_fn->name.name + "(";
    std::string lets;
    for (size_t i = 0; i < e.args.size() && i < params.size(); ++i) {
      std::string var = "a" + std::to_string(i);
      lets += "const auto& " + var + " = " + Emit(*e.args[i]) + "; ";
      if (e.args[i]->type.nullable() && !params[i].nullable()) {
        guard += "if (!::flow::exec::ops::Present(" + var + ")) return R(); ";
      }
      call += std::string(i ? ", " : "") + "::flow::exec::ops::As<" + records_.Cpp(params[i]) +
              ">(" + var + ")";
    }
    call += ")";
    std::string r = records_.Cpp(e.type);
    return "[&]() -> " + r + " { using R = " + r + "; " + lets + guard +
           "return ::flow::exec::ops::As<R>(" + call + "); }()";
  }
  if (e.builtin == nullptr) return Fail("an unresolved call", e);
  std::vector<types::Type> arg_types;
  for (const auto& a : e.args) arg_types.push_back(a->type);
  stdlib::CallResolution res = stdlib::ResolveCallDetailed(*e.builtin, arg_types, nullptr);
  std::vector<std::string> args;
  for (size_t i = 0; i < e.args.size(); ++i) {
    args.push_back(IsNullType(*e.args[i]) ? NullArgument(*e.builtin, i, res.bound_t)
                                          : Emit(*e.args[i]));
  }
  return stdlib::ExpandCpp(*e.builtin, args, arg_types, records_.Cpp(res.bound_t));
}

std::string ExprEmitter::Cast(const ast::CastExpr& e) {
  const types::Type& from = e.operand->type;
  if (from.kind() == types::Kind::kNull) return TypedNull(e.type);
  if (from.kind() == e.type.kind() && from.kind() != types::Kind::kBytes &&
      from.kind() != types::Kind::kString) {
    return Emit(*e.operand);
  }
  const char* f = CastKindName(plan::fold::CastKindOf(from.kind()));
  const char* t = CastKindName(plan::fold::CastKindOf(e.type.kind()));
  if (f == nullptr || t == nullptr) return Fail("this cast", e);
  return std::string("::flow::exec::Cast<") + f + ", " + t + ">(" + Emit(*e.operand) + ")";
}

std::string ExprEmitter::Case(const ast::CaseExpr& e) {
  std::string r =
      records_.Cpp(e.type.kind() == types::Kind::kNull ? types::Type::Bool().AsNullable() : e.type);
  std::string s = "[&]() -> " + r + " { ";
  for (const auto& w : e.whens) {
    std::string value = IsNullType(*w.value)
                            ? r + "()"
                            : "::flow::exec::ops::As<" + r + ">(" + Emit(*w.value) + ")";
    s += "if (::flow::exec::ops::IsTrue(" + Emit(*w.condition) + ")) return " + value + "; ";
  }
  if (e.else_value && !IsNullType(*e.else_value)) {
    s += "return ::flow::exec::ops::As<" + r + ">(" + Emit(*e.else_value) + "); }()";
  } else {
    s += "return " + r + "(); }()";
  }
  return s;
}

}  // namespace flow::codegen
