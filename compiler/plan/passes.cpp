#include "plan/passes.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <queue>
#include <utility>

namespace flow::plan {
namespace {

void RunFuseChains(Plan& plan, PassContext&) {
  FuseChains(plan);
}
void RunPruneJoins(Plan& plan, PassContext&) {
  PruneJoins(plan);
}

void RunProjectSources(Plan& plan, PassContext&) {
  ProjectSources(plan);
}

ast::ExprPtr CloneOrNull(const ast::ExprPtr& e) {
  return e ? CloneExpr(*e) : nullptr;
}

template <class T>
std::unique_ptr<T> Base(const T& from) {
  auto to = std::make_unique<T>();
  to->range = from.range;
  to->type = from.type;
  return to;
}

std::string LiteralText(const ast::LiteralExpr& l) {
  switch (l.literal) {
    case ast::LiteralKind::kInt:
      return std::to_string(l.int_value);
    case ast::LiteralKind::kDuration:
      return std::to_string(l.int_value) + "ms";
    case ast::LiteralKind::kTimestamp:
      return "timestamp(" + std::to_string(l.int_value) + "ms)";
    case ast::LiteralKind::kFloat: {
      if (std::isnan(l.float_value)) return "nan";
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.17g", l.float_value);
      std::string s = buf;
      if (s.find_first_of(".eni") == std::string::npos) s += ".0";
      return s;
    }
    case ast::LiteralKind::kBool:
      return l.bool_value ? "true" : "false";
    case ast::LiteralKind::kNull:
      return "null";
    case ast::LiteralKind::kString:
      return types::FlowStringLiteral(l.string_value);
  }
  return "?";
}

// Operands that are not a name, literal, call or field access get parentheses.
std::string Operand(const ast::Expr& e) {
  switch (e.kind) {
    case ast::ExprKind::kLiteral:
    case ast::ExprKind::kName:
    case ast::ExprKind::kField:
    case ast::ExprKind::kIndex:
    case ast::ExprKind::kCall:
    case ast::ExprKind::kCast:
    case ast::ExprKind::kList:
      return ExprText(e);
    default:
      return "(" + ExprText(e) + ")";
  }
}

}  // namespace

const std::vector<PassInfo>& AllPasses() {
  static const std::vector<PassInfo> passes = {
      {"fold-constants", "evaluate constant subexpressions at compile time", &FoldConstants},
      {"push-filters", "move `where` steps earlier (through select, explode, key by, union)",
       &PushFilters},
      {"chain", "fuse consecutive stateless operators into one function", &RunFuseChains},
      {"project", "decode only the source fields the job reads", &RunProjectSources},
      {"prune-join", "drop records a window join with their window's max or min cannot match",
       &RunPruneJoins},
  };
  return passes;
}

std::string RunPasses(Plan& plan, const std::set<std::string>& disabled,
                      diag::DiagnosticEngine* diags) {
  std::string error = Verify(plan);
  if (!error.empty()) return "plan verification failed after lowering: " + error;
  PassContext cx;
  cx.diags = diags;
  for (const PassInfo& pass : AllPasses()) {
    if (disabled.count(pass.name)) continue;
    pass.run(plan, cx);
    error = Verify(plan);
    if (!error.empty())
      return std::string("plan verification failed after pass `") + pass.name + "`: " + error;
  }
  std::map<std::pair<std::string, NodeKind>, int> seen;  // plan order: ids ascend
  for (const auto& n : plan.nodes) {
    if (n) n->ordinal = seen[{n->stream, n->kind}]++;
  }
  return "";
}

// A chain node whose only consumer is a chain node absorbs it: the consumer's steps are appended
// and the consumer's readers read the merged node instead.
void FuseChains(Plan& plan) {
  for (size_t i = 0; i < plan.nodes.size(); ++i) {
    auto* c = As<ChainNode>(plan.nodes[i].get());
    if (c == nullptr) continue;
    for (;;) {
      std::vector<int> consumers = plan.Consumers(c->id);
      if (consumers.size() != 1) break;
      auto* next = As<ChainNode>(plan.Get(consumers[0]));
      if (next == nullptr || next->inputs.size() != 1) break;
      c->steps.insert(c->steps.end(), next->steps.begin(), next->steps.end());
      c->output = next->output;
      c->range.end = next->range.end;
      for (int reader : plan.Consumers(next->id)) {
        for (int& in : plan.Get(reader)->inputs) {
          if (in == next->id) in = c->id;
        }
      }
      plan.nodes[static_cast<size_t>(next->id)].reset();
    }
  }
}

ast::ExprPtr CloneExpr(const ast::Expr& e) {
  switch (e.kind) {
    case ast::ExprKind::kError:
      return Base(*ast::As<ast::ErrorExpr>(&e));
    case ast::ExprKind::kLiteral: {
      const auto* l = ast::As<ast::LiteralExpr>(&e);
      auto c = Base(*l);
      c->literal = l->literal;
      c->int_value = l->int_value;
      c->float_value = l->float_value;
      c->bool_value = l->bool_value;
      c->string_value = l->string_value;
      return c;
    }
    case ast::ExprKind::kName: {
      const auto* n = ast::As<ast::NameExpr>(&e);
      auto c = Base(*n);
      c->name = n->name;
      c->target = n->target;
      c->join_side = n->join_side;
      return c;
    }
    case ast::ExprKind::kField: {
      const auto* f = ast::As<ast::FieldExpr>(&e);
      auto c = Base(*f);
      c->base = CloneOrNull(f->base);
      c->field = f->field;
      return c;
    }
    case ast::ExprKind::kIndex: {
      const auto* x = ast::As<ast::IndexExpr>(&e);
      auto c = Base(*x);
      c->base = CloneOrNull(x->base);
      c->index = CloneOrNull(x->index);
      return c;
    }
    case ast::ExprKind::kUnary: {
      const auto* u = ast::As<ast::UnaryExpr>(&e);
      auto c = Base(*u);
      c->op = u->op;
      c->operand = CloneOrNull(u->operand);
      return c;
    }
    case ast::ExprKind::kBinary: {
      const auto* b = ast::As<ast::BinaryExpr>(&e);
      auto c = Base(*b);
      c->op = b->op;
      c->op_range = b->op_range;
      c->lhs = CloneOrNull(b->lhs);
      c->rhs = CloneOrNull(b->rhs);
      return c;
    }
    case ast::ExprKind::kIn: {
      const auto* x = ast::As<ast::InExpr>(&e);
      auto c = Base(*x);
      c->negated = x->negated;
      c->operand = CloneOrNull(x->operand);
      for (const auto& i : x->items) c->items.push_back(CloneOrNull(i));
      return c;
    }
    case ast::ExprKind::kIsNull: {
      const auto* x = ast::As<ast::IsNullExpr>(&e);
      auto c = Base(*x);
      c->negated = x->negated;
      c->operand = CloneOrNull(x->operand);
      return c;
    }
    case ast::ExprKind::kCall: {
      const auto* x = ast::As<ast::CallExpr>(&e);
      auto c = Base(*x);
      c->name = x->name;
      for (const auto& a : x->args) c->args.push_back(CloneOrNull(a));
      c->star = x->star;
      c->builtin = x->builtin;
      c->extern_fn = x->extern_fn;
      c->aggregate = x->aggregate;
      return c;
    }
    case ast::ExprKind::kCast: {
      const auto* x = ast::As<ast::CastExpr>(&e);
      auto c = Base(*x);
      c->operand = CloneOrNull(x->operand);
      c->target.name = x->target.name;
      c->target.nullable = x->target.nullable;
      c->target.range = x->target.range;
      // Codegen reads the cast's `type`; the written element type is only kept for printing.
      const ast::TypeRef* from = &x->target;
      ast::TypeRef* to = &c->target;
      while (from->arg) {
        to->arg = std::make_unique<ast::TypeRef>();
        to->arg->name = from->arg->name;
        to->arg->nullable = from->arg->nullable;
        to->arg->range = from->arg->range;
        from = from->arg.get();
        to = to->arg.get();
      }
      return c;
    }
    case ast::ExprKind::kCase: {
      const auto* x = ast::As<ast::CaseExpr>(&e);
      auto c = Base(*x);
      for (const auto& w : x->whens)
        c->whens.push_back({CloneOrNull(w.condition), CloneOrNull(w.value)});
      c->else_value = CloneOrNull(x->else_value);
      return c;
    }
    case ast::ExprKind::kList: {
      const auto* x = ast::As<ast::ListExpr>(&e);
      auto c = Base(*x);
      for (const auto& i : x->items) c->items.push_back(CloneOrNull(i));
      return c;
    }
  }
  return std::make_unique<ast::ErrorExpr>();
}

std::string ExprText(const ast::Expr& e) {
  switch (e.kind) {
    case ast::ExprKind::kError:
      return "<error>";
    case ast::ExprKind::kLiteral:
      return LiteralText(*ast::As<ast::LiteralExpr>(&e));
    case ast::ExprKind::kName:
      return ast::As<ast::NameExpr>(&e)->name;
    case ast::ExprKind::kField: {
      const auto* f = ast::As<ast::FieldExpr>(&e);
      return Operand(*f->base) + "." + f->field.name;
    }
    case ast::ExprKind::kIndex: {
      const auto* x = ast::As<ast::IndexExpr>(&e);
      return Operand(*x->base) + "[" + ExprText(*x->index) + "]";
    }
    case ast::ExprKind::kUnary: {
      const auto* u = ast::As<ast::UnaryExpr>(&e);
      return std::string(u->op == ast::UnaryOp::kNeg ? "-" : "not ") + Operand(*u->operand);
    }
    case ast::ExprKind::kBinary: {
      const auto* b = ast::As<ast::BinaryExpr>(&e);
      return Operand(*b->lhs) + " " + ast::Spelling(b->op) + " " + Operand(*b->rhs);
    }
    case ast::ExprKind::kIn: {
      const auto* x = ast::As<ast::InExpr>(&e);
      std::string s = Operand(*x->operand) + (x->negated ? " not in (" : " in (");
      for (size_t i = 0; i < x->items.size(); ++i) s += (i ? ", " : "") + ExprText(*x->items[i]);
      return s + ")";
    }
    case ast::ExprKind::kIsNull: {
      const auto* x = ast::As<ast::IsNullExpr>(&e);
      return Operand(*x->operand) + (x->negated ? " is not null" : " is null");
    }
    case ast::ExprKind::kCall: {
      const auto* x = ast::As<ast::CallExpr>(&e);
      std::string s = x->name.name + "(" + (x->star ? "*" : "");
      for (size_t i = 0; i < x->args.size(); ++i) s += (i ? ", " : "") + ExprText(*x->args[i]);
      return s + ")";
    }
    case ast::ExprKind::kCast: {
      const auto* x = ast::As<ast::CastExpr>(&e);
      return "cast(" + ExprText(*x->operand) + " as " + e.type.AsNonNullable().ToString() + ")";
    }
    case ast::ExprKind::kCase: {
      const auto* x = ast::As<ast::CaseExpr>(&e);
      std::string s = "case";
      for (const auto& w : x->whens)
        s += " when " + ExprText(*w.condition) + " then " + ExprText(*w.value);
      if (x->else_value) s += " else " + ExprText(*x->else_value);
      return s + " end";
    }
    case ast::ExprKind::kList: {
      const auto* x = ast::As<ast::ListExpr>(&e);
      std::string s = "[";
      for (size_t i = 0; i < x->items.size(); ++i) s += (i ? ", " : "") + ExprText(*x->items[i]);
      return s + "]";
    }
  }
  return "?";
}

std::string PassBuiltStepText(const Plan& plan, const ast::Op& op) {
  bool built = false;
  for (const auto& p : plan.pass_ops) built = built || p.get() == &op;
  if (!built) return "";
  std::string s;
  if (const auto* w = ast::As<ast::WhereOp>(&op)) {
    s = "where " + ExprText(*w->condition);
  } else if (const auto* sel = ast::As<ast::SelectOp>(&op)) {
    s = "select ";
    for (size_t i = 0; i < sel->items.size(); ++i) {
      const ast::SelectItem& item = sel->items[i];
      s += i ? ", " : "";
      s += item.star ? "*" : ExprText(*item.item.expr) + " as " + item.item.output_name;
    }
  } else if (const auto* x = ast::As<ast::ExplodeOp>(&op)) {
    s = "explode " + ExprText(*x->list) + " as " + x->alias.name;
  } else {
    return "";
  }
  return s + " (rewritten by passes)";
}

bool IsSafeToMove(const ast::Expr& e) {
  bool safe = true;
  ast::ForEachSubexpression(e, [&](const ast::Expr& x) {
    if (x.kind == ast::ExprKind::kError) {
      safe = false;
    } else if (const auto* b = ast::As<ast::BinaryExpr>(&x)) {
      // Integer `/` and `%` fail on zero unless the divisor is a non-zero literal.
      if ((b->op == ast::BinaryOp::kDiv || b->op == ast::BinaryOp::kMod) &&
          x.type.kind() != types::Kind::kFloat) {
        const auto* d = ast::As<ast::LiteralExpr>(b->rhs.get());
        bool nonzero = d != nullptr && d->literal != ast::LiteralKind::kNull &&
                       d->literal != ast::LiteralKind::kFloat &&
                       d->literal != ast::LiteralKind::kString &&
                       d->literal != ast::LiteralKind::kBool && d->int_value != 0;
        if (!nonzero) safe = false;
      }
    } else if (const auto* c = ast::As<ast::CallExpr>(&x)) {
      if (c->extern_fn != nullptr || c->builtin == nullptr || c->aggregate) safe = false;
    }
  });
  return safe;
}

void Renumber(Plan& plan) {
  bool ordered = true;
  for (const auto& n : plan.nodes) {
    if (!n) continue;
    for (int in : n->inputs) ordered = ordered && in < n->id;
  }
  if (ordered) return;
  // Kahn's algorithm, smallest old id first, so an already ordered part keeps its order.
  const size_t count = plan.nodes.size();
  std::vector<int> pending(count, 0);
  std::vector<std::vector<int>> readers(count);
  for (const auto& n : plan.nodes) {
    if (!n) continue;
    pending[static_cast<size_t>(n->id)] = static_cast<int>(n->inputs.size());
    for (int in : n->inputs) readers[static_cast<size_t>(in)].push_back(n->id);
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (const auto& n : plan.nodes) {
    if (n && n->inputs.empty()) ready.push(n->id);
  }
  std::vector<int> new_id(count, -1);
  std::vector<std::unique_ptr<Node>> nodes;
  while (!ready.empty()) {
    int id = ready.top();
    ready.pop();
    new_id[static_cast<size_t>(id)] = static_cast<int>(nodes.size());
    nodes.push_back(std::move(plan.nodes[static_cast<size_t>(id)]));
    for (int r : readers[static_cast<size_t>(id)]) {
      if (--pending[static_cast<size_t>(r)] == 0) ready.push(r);
    }
  }
  for (auto& n : nodes) {
    n->id = new_id[static_cast<size_t>(n->id)];
    for (int& in : n->inputs) in = new_id[static_cast<size_t>(in)];
  }
  plan.nodes = std::move(nodes);
}

}  // namespace flow::plan
