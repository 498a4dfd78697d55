// Types of expressions. Every path sets e.type; after reporting, the type is Error.
#include "diag/suggest.h"
#include "sema/checker_impl.h"
#include "stdlib/registry/registry.h"

namespace flow::sema {
namespace {

using types::Kind;
using types::Type;

bool Is(const Type& t, Kind k) {
  return t.kind() == k;
}

Type WithNull(Type t, bool nullable) {
  return nullable && !t.is_error() ? t.AsNullable() : t;
}

bool Orderable(const Type& t) {
  Kind k = t.kind();
  return k == Kind::kInt || k == Kind::kFloat || k == Kind::kString || k == Kind::kTimestamp ||
         k == Kind::kDuration || k == Kind::kBool || k == Kind::kBytes;
}

bool IsWindowField(const std::string& n) {
  return n == "window_start" || n == "window_end";
}

}  // namespace

void Checker::RequireBool(const Type& t, const diag::SourceRange& at, const char* what) {
  if (t.is_error() || Is(t, Kind::kBool)) return;
  diags_.Report(diag::Kind::kConditionNotBool, at,
                std::string(what) + " must be bool, found " + t.ToString());
}

Type Checker::CheckExpr(ast::Expr& e, const ExprContext& cx) {
  Type t = Type::Error();
  switch (e.kind) {
    case ast::ExprKind::kError:
      break;
    case ast::ExprKind::kLiteral: {
      auto& l = static_cast<ast::LiteralExpr&>(e);
      switch (l.literal) {
        case ast::LiteralKind::kInt:
          t = Type::Int();
          break;
        case ast::LiteralKind::kFloat:
          t = Type::Float();
          break;
        case ast::LiteralKind::kString:
          t = Type::String();
          break;
        case ast::LiteralKind::kBool:
          t = Type::Bool();
          break;
        case ast::LiteralKind::kNull:
          t = Type::Null();
          break;
        case ast::LiteralKind::kDuration:
          t = Type::Duration();
          break;
        case ast::LiteralKind::kTimestamp:
          t = Type::Timestamp();
          break;
      }
      break;
    }
    case ast::ExprKind::kName:
      t = CheckName(static_cast<ast::NameExpr&>(e), cx);
      break;
    case ast::ExprKind::kField:
      t = CheckField(static_cast<ast::FieldExpr&>(e), cx);
      break;
    case ast::ExprKind::kIndex: {
      auto& x = static_cast<ast::IndexExpr&>(e);
      Type base = CheckExpr(*x.base, cx);
      Type index = CheckExpr(*x.index, cx);
      if (!base.is_error() && !Is(base, Kind::kList)) {
        diags_.Report(diag::Kind::kInvalidOperands, x.base->range,
                      "only lists can be indexed, found " + base.ToString());
      } else if (!index.is_error() && !Is(index, Kind::kInt)) {
        diags_.Report(diag::Kind::kTypeMismatch, x.index->range,
                      "a list index must be int, found " + index.ToString());
      } else if (!base.is_error()) {
        t = base.element().AsNullable();  // out of range gives null
      }
      break;
    }
    case ast::ExprKind::kUnary: {
      auto& u = static_cast<ast::UnaryExpr&>(e);
      Type o = CheckExpr(*u.operand, cx);
      if (o.is_error()) break;
      if (u.op == ast::UnaryOp::kNot) {
        if (Is(o, Kind::kBool))
          t = o;
        else
          diags_.Report(diag::Kind::kInvalidOperands, u.operand->range,
                        "`not` needs a bool, found " + o.ToString());
      } else if (o.is_numeric() || Is(o, Kind::kDuration)) {
        t = o;
      } else {
        diags_.Report(diag::Kind::kInvalidOperands, u.operand->range,
                      "unary `-` needs a number or duration, found " + o.ToString());
      }
      break;
    }
    case ast::ExprKind::kBinary:
      t = CheckBinary(static_cast<ast::BinaryExpr&>(e), cx);
      break;
    case ast::ExprKind::kIn: {
      auto& x = static_cast<ast::InExpr&>(e);
      Type o = CheckExpr(*x.operand, cx);
      bool nullable = o.nullable();
      for (ast::ExprPtr& item : x.items) {
        Type it = CheckExpr(*item, cx);
        if (o.is_error() || it.is_error()) continue;
        if (types::CommonType(o, it).is_error()) {
          diags_
              .Report(diag::Kind::kTypeMismatch, item->range,
                      "`in` list item has type " + it.ToString() +
                          ", which cannot be compared with " + o.ToString())
              .AddNote(x.operand->range, "compared with this " + o.ToString());
        }
      }
      t = WithNull(Type::Bool(), nullable);
      break;
    }
    case ast::ExprKind::kIsNull: {
      auto& x = static_cast<ast::IsNullExpr&>(e);
      CheckExpr(*x.operand, cx);
      t = Type::Bool();
      break;
    }
    case ast::ExprKind::kCall:
      t = CheckCall(static_cast<ast::CallExpr&>(e), cx);
      break;
    case ast::ExprKind::kCast:
      t = CheckCast(static_cast<ast::CastExpr&>(e), cx);
      break;
    case ast::ExprKind::kCase:
      t = CheckCase(static_cast<ast::CaseExpr&>(e), cx);
      break;
    case ast::ExprKind::kList: {
      auto& x = static_cast<ast::ListExpr&>(e);
      Type element = Type::Error();
      bool first = true, broken = false;
      for (ast::ExprPtr& item : x.items) {
        Type it = CheckExpr(*item, cx);
        if (it.is_error()) {
          broken = true;
          continue;
        }
        if (first) {
          element = it;
          first = false;
          continue;
        }
        Type c = types::CommonType(element, it);
        if (c.is_error()) {
          diags_.Report(diag::Kind::kTypeMismatch, item->range,
                        "list items must have one type; this is " + it.ToString() +
                            ", earlier items are " + element.ToString());
          broken = true;
        } else {
          element = c;
        }
      }
      if (x.items.empty()) {
        diags_.Report(diag::Kind::kTypeMismatch, e.range,
                      "the element type of an empty list `[]` cannot be inferred");
      } else if (!broken && !Is(element, Kind::kNull)) {
        t = Type::List(element);
      }
      break;
    }
  }
  e.type = t;
  return t;
}

Type Checker::CheckName(ast::NameExpr& e, const ExprContext& cx) {
  const std::string& n = e.name;
  if (cx.enum_values && cx.enum_values->count(n)) return Type::String();
  if (cx.state) {
    const FlowState& st = *cx.state;
    if (st.window_fields &&
        IsWindowField(n)) {  // a window join's own window wins over input fields
      e.target = ast::NameTarget::kWindowField;
      return Type::Timestamp();
    }
    const Side* found = nullptr;
    int found_side = -1;
    const types::Field* field = nullptr;
    for (size_t i = 0; i < st.sides.size(); ++i) {
      const Side& s = st.sides[i];
      const types::Field* f = s.record.FindField(n);
      if (f == nullptr) continue;
      if (found) {
        diags_
            .Report(diag::Kind::kAmbiguousName, e.range,
                    "`" + n + "` is a field of both `" + found->name + "` and `" + s.name + "`")
            .Help("qualify it: `" + found->name + "." + n + "` or `" + s.name + "." + n + "`");
        return Type::Error();
      }
      found = &s;
      found_side = static_cast<int>(i);
      field = f;
    }
    if (field) {
      e.target = ast::NameTarget::kField;
      e.join_side = st.sides.size() > 1 ? found_side : -1;
      if (cx.aggregates_allowed && !cx.in_aggregate) {
        bool is_key = false;
        for (const std::string& k : st.keys) is_key |= k == n;
        if (!is_key) {
          diags_
              .Report(diag::Kind::kFieldNotAggregated, e.range,
                      "field `" + n + "` is neither a key nor inside an aggregate function")
              .Help(st.keys.empty()
                        ? "wrap it in an aggregate, e.g. `last(" + n + ")`, or add `key by " + n +
                              "` before the window"
                        : "wrap it in an aggregate, e.g. `last(" + n + ")`, or add it to `key by`");
          return Type::Error();
        }
      }
      return field->type;
    }
    if (IsWindowField(n)) {
      if (st.window_fields) {
        e.target = ast::NameTarget::kWindowField;
        return Type::Timestamp();
      }
      diags_
          .Report(diag::Kind::kWindowFieldUnavailable, e.range,
                  "`" + n + "` exists only after a windowed `aggregate` or a window join")
          .Help(
              "add `| window tumbling 1m | aggregate ...` before this operator, or select it right "
              "after the aggregate");
      return Type::Error();
    }
    for (size_t i = 0; i < st.sides.size(); ++i) {
      if (!st.sides[i].name.empty() && st.sides[i].name == n) {
        diags_.Report(
            diag::Kind::kInvalidOperands, e.range,
            "`" + n + "` is a stream; name one of its fields, e.g. `" + n + "." +
                (FieldNames(st.sides[i].record).empty() ? std::string("field")
                                                        : FieldNames(st.sides[i].record)[0]) +
                "`");
        return Type::Error();
      }
    }
  }
  auto p = out_.params.find(n);
  if (p != out_.params.end()) {
    e.target = ast::NameTarget::kParam;
    return p->second->resolved;
  }
  if (cx.state && cx.state->broken) return Type::Error();
  if (cx.enum_values && cx.state == nullptr) return Type::Error();  // the caller names the choices
  std::vector<std::string> candidates;
  if (cx.state) {
    for (const Side& s : cx.state->sides) {
      for (const std::string& f : FieldNames(s.record)) candidates.push_back(f);
    }
  }
  for (auto& [name, _] : out_.params) candidates.push_back(name);
  if (cx.enum_values)
    candidates.insert(candidates.end(), cx.enum_values->begin(), cx.enum_values->end());
  if (cx.state == nullptr && !cx.enum_values) {
    auto& d = diags_.Report(diag::Kind::kNotConstant, e.range,
                            "`" + n + "` is not a param; " + std::string(cx.where) +
                                " only literals and params may be used");
    if (auto hint = DidYouMean(n, candidates)) d.Help(*hint);
    return Type::Error();
  }
  bool named = cx.state && cx.state->record.kind() == Kind::kRecord &&
               !cx.state->record.record_name().empty();
  auto& d = diags_.Report(
      diag::Kind::kUnknownField, e.range,
      named ? "no field or param `" + n + "` in `" + cx.state->record.record_name() + "`"
            : "no field or param named `" + n + "`");
  if (auto hint = DidYouMean(n, candidates)) {
    d.Help(*hint);
  } else if (cx.state && cx.state->record.kind() == Kind::kRecord) {
    std::string list;
    for (const std::string& f : FieldNames(cx.state->record))
      list += (list.empty() ? "`" : ", `") + f + "`";
    if (!list.empty()) d.Help("available fields: " + list);
  }
  if (cx.state && cx.state->record.kind() == Kind::kRecord) {
    auto schema = out_.schemas.find(cx.state->record.record_name());
    if (schema != out_.schemas.end())
      d.AddNote(schema->second->name.range, "schema `" + schema->first + "` declared here");
  }
  return Type::Error();
}

Type Checker::CheckField(ast::FieldExpr& e, const ExprContext& cx) {
  // `side.field` in joins (and `stream.field` for a named input).
  if (auto* base = ast::As<ast::NameExpr>(e.base.get()); base && cx.state) {
    for (size_t i = 0; i < cx.state->sides.size(); ++i) {
      const Side& s = cx.state->sides[i];
      if (s.name.empty() || s.name != base->name) continue;
      base->target = ast::NameTarget::kJoinSide;
      base->join_side = static_cast<int>(i);
      if (s.record.is_error()) return Type::Error();
      const types::Field* f = s.record.FindField(e.field.name);
      if (f == nullptr) {
        auto& d = diags_.Report(diag::Kind::kUnknownField, e.field.range,
                                "stream `" + s.name + "` has no field `" + e.field.name + "`");
        if (auto hint = DidYouMean(e.field.name, FieldNames(s.record))) d.Help(*hint);
        if (s.declared.valid()) d.AddNote(s.declared, "`" + s.name + "` defined here");
        return Type::Error();
      }
      if (cx.aggregates_allowed && !cx.in_aggregate) {
        bool is_key = false;
        for (const std::string& k : cx.state->keys) is_key |= k == e.field.name;
        if (!is_key) {
          diags_.Report(
              diag::Kind::kFieldNotAggregated, e.range,
              "field `" + e.field.name + "` is neither a key nor inside an aggregate function");
          return Type::Error();
        }
      }
      base->type = s.record;
      return f->type;
    }
  }
  Type base = CheckExpr(*e.base, cx);
  if (base.is_error()) return base;
  if (!Is(base, Kind::kRecord)) {
    diags_.Report(diag::Kind::kInvalidOperands, e.base->range,
                  "`.` needs a record or a stream name, found " + base.ToString());
    return Type::Error();
  }
  const types::Field* f = base.FindField(e.field.name);
  if (f == nullptr) {
    auto& d = diags_.Report(diag::Kind::kUnknownField, e.field.range,
                            "record " + base.ToString() + " has no field `" + e.field.name + "`");
    if (auto hint = DidYouMean(e.field.name, FieldNames(base))) d.Help(*hint);
    return Type::Error();
  }
  return WithNull(f->type, base.nullable());
}

Type Checker::CheckBinary(ast::BinaryExpr& e, const ExprContext& cx) {
  Type l = CheckExpr(*e.lhs, cx);
  Type r = CheckExpr(*e.rhs, cx);
  if (l.is_error() || r.is_error()) return Type::Error();
  bool nullable = l.nullable() || r.nullable();
  Type a = l.AsNonNullable(), b = r.AsNonNullable();
  std::string op = ast::Spelling(e.op);
  auto bad = [&](const std::string& extra) {
    auto& d =
        diags_.Report(diag::Kind::kInvalidOperands, e.op_range.valid() ? e.op_range : e.range,
                      "`" + op + "` cannot be applied to " + l.ToString() + " and " + r.ToString());
    d.AddNote(e.lhs->range, "this is " + l.ToString());
    d.AddNote(e.rhs->range, "this is " + r.ToString());
    if (!extra.empty()) d.Help(extra);
    return Type::Error();
  };
  switch (e.op) {
    case ast::BinaryOp::kAnd:
    case ast::BinaryOp::kOr:
      if (Is(a, Kind::kBool) && Is(b, Kind::kBool)) return WithNull(Type::Bool(), nullable);
      return bad("`" + op + "` combines two bool conditions");
    case ast::BinaryOp::kEq:
    case ast::BinaryOp::kNe:
    case ast::BinaryOp::kLt:
    case ast::BinaryOp::kLe:
    case ast::BinaryOp::kGt:
    case ast::BinaryOp::kGe: {
      if (Is(l, Kind::kNull) || Is(r, Kind::kNull)) {
        return bad(e.op == ast::BinaryOp::kNe ? "use `x is not null`"
                                              : "use `x is null` to test for null");
      }
      bool ordering = e.op != ast::BinaryOp::kEq && e.op != ast::BinaryOp::kNe;
      Type c = types::CommonType(a, b);
      if (c.is_error() || (ordering && !Orderable(c))) {
        return bad(Is(a, Kind::kString) != Is(b, Kind::kString)
                       ? "convert one side with `cast(x as ...)`"
                       : "");
      }
      return WithNull(Type::Bool(), nullable);
    }
    case ast::BinaryOp::kAdd:
    case ast::BinaryOp::kSub:
      if (Is(a, Kind::kTimestamp) && Is(b, Kind::kDuration))
        return WithNull(Type::Timestamp(), nullable);
      if (e.op == ast::BinaryOp::kAdd && Is(a, Kind::kDuration) && Is(b, Kind::kTimestamp))
        return WithNull(Type::Timestamp(), nullable);
      if (e.op == ast::BinaryOp::kSub && Is(a, Kind::kTimestamp) && Is(b, Kind::kTimestamp))
        return WithNull(Type::Duration(), nullable);
      if (Is(a, Kind::kDuration) && Is(b, Kind::kDuration))
        return WithNull(Type::Duration(), nullable);
      if (a.is_numeric() && b.is_numeric()) return WithNull(types::CommonType(a, b), nullable);
      return bad(Is(a, Kind::kString) && Is(b, Kind::kString) ? "join strings with `concat(a, b)`"
                                                              : "");
    case ast::BinaryOp::kMul:
      if ((Is(a, Kind::kDuration) && Is(b, Kind::kInt)) ||
          (Is(a, Kind::kInt) && Is(b, Kind::kDuration))) {
        return WithNull(Type::Duration(), nullable);
      }
      if (a.is_numeric() && b.is_numeric()) return WithNull(types::CommonType(a, b), nullable);
      return bad("");
    case ast::BinaryOp::kDiv:
      if (Is(a, Kind::kDuration) && Is(b, Kind::kInt)) return WithNull(Type::Duration(), nullable);
      if (a.is_numeric() && b.is_numeric()) return WithNull(types::CommonType(a, b), nullable);
      return bad("");
    case ast::BinaryOp::kMod:
      if (a.is_numeric() && b.is_numeric()) return WithNull(types::CommonType(a, b), nullable);
      return bad("");
  }
  return Type::Error();
}

Type Checker::CheckCall(ast::CallExpr& e, const ExprContext& cx) {
  const std::string& n = e.name.name;
  auto ext = out_.externs.find(n);
  const stdlib::FunctionSpec* fn = ext == out_.externs.end() ? stdlib::FindFunction(n) : nullptr;
  bool aggregate = fn && fn->kind == stdlib::FunctionKind::kAggregate;
  if (aggregate) {
    if (cx.in_aggregate) {
      diags_.Report(diag::Kind::kNestedAggregate, e.range,
                    "aggregate `" + n + "` cannot be used inside another aggregate");
      return Type::Error();
    }
    if (!cx.aggregates_allowed) {
      diags_
          .Report(diag::Kind::kAggregateNotAllowed, e.name.range,
                  "aggregate function `" + n + "` can only be used in `aggregate`")
          .Help("add `| aggregate " + n + "(...) as name` (after `key by` and/or `window`)");
      return Type::Error();
    }
  }
  ExprContext inner = cx;
  if (aggregate) inner.in_aggregate = true;
  std::vector<Type> args;
  bool arg_error = false;
  for (ast::ExprPtr& a : e.args) {
    args.push_back(CheckExpr(*a, inner));
    arg_error |= args.back().is_error();
  }
  if (e.star && !(fn && n == "count")) {
    diags_.Report(diag::Kind::kBadCall, e.range, "`*` is only allowed in `count(*)`");
    return Type::Error();
  }
  if (ext != out_.externs.end()) {
    const ast::ExternFnDecl& f = *ext->second;
    e.extern_fn = &f;
    if (args.size() != f.param_types.size()) {
      diags_
          .Report(diag::Kind::kBadCall, e.range,
                  "`" + n + "` takes " + std::to_string(f.param_types.size()) +
                      " argument(s), found " + std::to_string(args.size()))
          .AddNote(f.name.range, "`" + n + "` declared here");
      return Type::Error();
    }
    for (size_t i = 0; i < args.size(); ++i) {
      if (!types::IsAssignable(args[i], f.param_types[i])) {
        diags_
            .Report(diag::Kind::kBadCall, e.args[i]->range,
                    "argument " + std::to_string(i + 1) + " of `" + n + "` must be " +
                        f.param_types[i].ToString() + ", found " + args[i].ToString())
            .AddNote(f.params[i].type.range, "parameter declared here");
        return Type::Error();
      }
    }
    return f.return_type;
  }
  if (fn == nullptr) {
    std::vector<std::string> candidates;
    for (const stdlib::FunctionSpec& s : stdlib::AllFunctions()) candidates.push_back(s.name);
    for (auto& [name, _] : out_.externs) candidates.push_back(name);
    auto& d =
        diags_.Report(diag::Kind::kUnknownFunction, e.name.range, "unknown function `" + n + "`");
    if (auto hint = DidYouMean(n, candidates))
      d.Help(*hint);
    else
      d.Help("see docs/functions.md, or declare it with `extern fn " + n +
             "(...) -> T from \"header.h\"`");
    return Type::Error();
  }
  e.builtin = fn;
  e.aggregate = aggregate;
  if (arg_error) return Type::Error();
  std::string error;
  Type t = stdlib::ResolveCall(*fn, args, &error);
  if (t.is_error()) {
    diags_
        .Report(diag::Kind::kBadCall, e.range,
                error.empty() ? "invalid call of `" + n + "`" : error)
        .Help(fn->example.empty() ? "see docs/functions.md" : "example: `" + fn->example + "`");
    return t;
  }
  // Literal arguments that cannot work at run time (a bad regular expression, date_trunc unit or
  // time zone) are errors now rather than a documented fallback later.
  for (size_t i = 0; i < e.args.size(); ++i) {
    const auto* lit = ast::As<ast::LiteralExpr>(e.args[i].get());
    if (lit == nullptr || lit->literal != ast::LiteralKind::kString) continue;
    std::string problem = stdlib::CheckLiteralArgument(*fn, i, lit->string_value);
    if (!problem.empty()) {
      diags_.Report(diag::Kind::kBadCall, e.args[i]->range, problem)
          .Help(fn->example.empty() ? "see docs/functions.md" : "example: `" + fn->example + "`");
      return Type::Error();
    }
  }
  return t;
}

Type Checker::CheckCast(ast::CastExpr& e, const ExprContext& cx) {
  Type from = CheckExpr(*e.operand, cx);
  Type to = ResolveType(e.target, /*allow_records=*/false);
  if (from.is_error() || to.is_error()) return Type::Error();
  Kind f = from.kind(), t = to.kind();
  bool ok =
      f == t || f == Kind::kNull || t == Kind::kString || (from.is_numeric() && to.is_numeric()) ||
      (f == Kind::kString && t != Kind::kList) ||
      (f == Kind::kInt && (t == Kind::kTimestamp || t == Kind::kDuration || t == Kind::kBool)) ||
      ((f == Kind::kTimestamp || f == Kind::kDuration || f == Kind::kBool) && t == Kind::kInt);
  if (f == Kind::kList || t == Kind::kList) ok = from == to;
  if (f == Kind::kList && t == Kind::kString) ok = true;
  if (!ok) {
    diags_.Report(diag::Kind::kInvalidCast, e.range,
                  "cannot cast " + from.ToString() + " to " + to.ToString());
    return Type::Error();
  }
  return from.nullable() || f == Kind::kNull ? to.AsNullable() : to;
}

Type Checker::CheckCase(ast::CaseExpr& e, const ExprContext& cx) {
  Type result = Type::Null();
  bool first = true, broken = false;
  for (ast::CaseExpr::When& w : e.whens) {
    Type c = CheckExpr(*w.condition, cx);
    RequireBool(c, w.condition->range, "a `when` condition");
    Type v = CheckExpr(*w.value, cx);
    if (v.is_error()) {
      broken = true;
      continue;
    }
    if (first) {
      result = v;
      first = false;
      continue;
    }
    Type common = types::CommonType(result, v);
    if (common.is_error()) {
      diags_.Report(diag::Kind::kTypeMismatch, w.value->range,
                    "`case` branches must have one type; this is " + v.ToString() +
                        ", earlier branches are " + result.ToString());
      broken = true;
    } else {
      result = common;
    }
  }
  if (e.else_value) {
    Type v = CheckExpr(*e.else_value, cx);
    if (v.is_error()) {
      broken = true;
    } else {
      Type common = types::CommonType(result, v);
      if (common.is_error()) {
        diags_.Report(diag::Kind::kTypeMismatch, e.else_value->range,
                      "`else` has type " + v.ToString() + ", but the `then` branches are " +
                          result.ToString());
        broken = true;
      } else {
        result = common;
      }
    }
  } else {
    result = result.AsNullable();  // no else: null when nothing matches
  }
  if (broken) return Type::Error();
  return result;
}

}  // namespace flow::sema
