// The `push-filters` pass: a node that is a single `where` step moves above the node it reads
// while that node is one of
//   select   the condition is rewritten through the projection (a field becomes the expression
//            that computes it), when every item can be evaluated anywhere (IsSafeToMove);
//   explode  when the condition does not read the exploded field and both the condition and the
//            list expression are safe (the condition then runs once per record, not per element);
//   key by   (the exchange happens later; records keep their type);
//   union    a copy of the filter goes on every input.
// The moved node must be the only reader of the node it passes. Anything else is a barrier:
// sources (the filter then runs right after decoding), windows, aggregates, joins, sinks, other
// `where`s, fused chains, extern fns, and node kinds this pass does not know.
//
// Results are unchanged: a safe expression cannot fail or call user code, so evaluating it for
// more or fewer records, or in another order, changes nothing but the work done.

#include <functional>
#include <map>

#include "plan/passes.h"

namespace flow::plan {
namespace {

const ast::WhereOp* SingleWhere(const Node* n) {
  const auto* c = As<ChainNode>(n);
  if (c == nullptr || c->steps.size() != 1 || c->inputs.size() != 1) return nullptr;
  return ast::As<ast::WhereOp>(c->steps[0].op);
}

const ChainStep* SingleStep(const Node* n, ast::OpKind kind) {
  const auto* c = As<ChainNode>(n);
  if (c == nullptr || c->steps.size() != 1 || c->inputs.size() != 1 || c->steps[0].op->kind != kind)
    return nullptr;
  return &c->steps[0];
}

bool IsField(const ast::NameExpr& n) {
  return n.target == ast::NameTarget::kField || n.target == ast::NameTarget::kWindowField;
}

// Calls fn for every name in the expression (fields, params, join qualifiers).
void ForEachName(const ast::Expr* e, const std::function<void(const ast::NameExpr&)>& fn) {
  if (e == nullptr) return;
  ast::ForEachSubexpression(*e, [&](const ast::Expr& x) {
    if (const auto* n = ast::As<ast::NameExpr>(&x)) fn(*n);
  });
}

// Calls fn for every record field the expression reads by name.
void ForEachField(const ast::Expr* e, const std::function<void(const ast::NameExpr&)>& fn) {
  ForEachName(e, [&](const ast::NameExpr& n) {
    if (IsField(n)) fn(n);
  });
}

// True when the expression reads a join pair by side (`a.user` right after a join).
bool ReadsJoinSide(const ast::Expr* e) {
  bool found = false;
  ForEachName(
      e, [&](const ast::NameExpr& n) { found = found || n.target == ast::NameTarget::kJoinSide; });
  return found;
}

// Replaces every field name in `e` by a copy of the expression `items` gives it (names not in
// `items` are kept: `select *` passes them through unchanged).
ast::ExprPtr Substitute(ast::ExprPtr e, const std::map<std::string, const ast::Expr*>& items) {
  if (auto* n = ast::As<ast::NameExpr>(e.get())) {
    if (!IsField(*n)) return e;
    auto it = items.find(n->name);
    return it == items.end() ? std::move(e) : CloneExpr(*it->second);
  }
  ast::ForEachChild(*e, [&](ast::ExprPtr& child) { child = Substitute(std::move(child), items); });
  return e;
}

class Pusher {
 public:
  explicit Pusher(Plan& plan) : plan_(plan) {}

  void Run() {
    // Each move takes a filter strictly closer to a source, so this ends.
    for (bool moved = true; moved;) {
      moved = false;
      for (size_t i = 0; i < plan_.nodes.size() && !moved; ++i) {
        auto* f = As<ChainNode>(plan_.nodes[i].get());
        if (f == nullptr || SingleWhere(f) == nullptr) continue;
        moved = TryMove(*f);
      }
      if (moved) Renumber(plan_);
    }
  }

 private:
  bool TryMove(ChainNode& f) {
    Node* p = plan_.Get(f.inputs[0]);
    if (p == nullptr || plan_.Consumers(p->id).size() != 1) return false;
    const ast::WhereOp* where = SingleWhere(&f);
    switch (p->kind) {
      case NodeKind::kKeyBy:
        return Swap(f, *p, where);
      case NodeKind::kUnion:
        return IntoUnion(f, *p);
      case NodeKind::kChain:
        if (const ChainStep* s = SingleStep(p, ast::OpKind::kSelect))
          return ThroughSelect(f, *p, *s, *where);
        if (const ChainStep* x = SingleStep(p, ast::OpKind::kExplode))
          return ThroughExplode(f, *p, *x, *where);
        return false;
      default:
        return false;  // sources, aggregates, joins, sinks and unknown kinds
    }
  }

  // f (reading p) now reads p's input and p reads f; f's condition becomes `where`.
  bool Swap(ChainNode& f, Node& p, const ast::WhereOp* where) {
    const types::Type& in = plan_.Get(p.inputs[0])->output;
    for (int reader : plan_.Consumers(f.id)) {
      for (int& i : plan_.Get(reader)->inputs) {
        if (i == f.id) i = p.id;
      }
    }
    f.inputs = p.inputs;
    p.inputs = {f.id};
    f.steps[0] = ChainStep{where, in, in};
    f.output = in;
    if (auto* pc = As<ChainNode>(&p)) pc->steps[0].input = in;
    return true;
  }

  bool ThroughSelect(ChainNode& f, Node& p, const ChainStep& step, const ast::WhereOp& where) {
    const auto* sel = ast::As<ast::SelectOp>(step.op);
    std::map<std::string, const ast::Expr*> items;
    for (const ast::SelectItem& item : sel->items) {
      if (item.star) continue;
      const types::Field* out = step.output.FindField(item.item.output_name);
      // The rewritten condition must see the value the select would have stored.
      if (out == nullptr || !item.item.expr || item.item.expr->type != out->type) return false;
      // Items over a join pair stay after the join's flatten rules (lower.cpp): not moved.
      if (!IsSafeToMove(*item.item.expr) || ReadsJoinSide(item.item.expr.get())) return false;
      items[item.item.output_name] = item.item.expr.get();
    }
    if (!IsSafeToMove(*where.condition)) return false;
    bool ok = true;
    ForEachField(where.condition.get(), [&](const ast::NameExpr& n) {
      if (items.count(n.name)) return;
      // Passed through by `*`: the input field must be the same.
      const types::Field* in = step.input.FindField(n.name);
      const types::Field* out = step.output.FindField(n.name);
      ok = ok && in != nullptr && out != nullptr && in->type == out->type;
    });
    if (!ok) return false;
    auto rewritten = std::make_unique<ast::WhereOp>();
    rewritten->range = where.range;
    rewritten->keyword_range = where.keyword_range;
    rewritten->output = step.input;
    rewritten->condition = Substitute(CloneExpr(*where.condition), items);
    const ast::WhereOp* op = rewritten.get();
    plan_.pass_ops.push_back(std::move(rewritten));
    return Swap(f, p, op);
  }

  bool ThroughExplode(ChainNode& f, Node& p, const ChainStep& step, const ast::WhereOp& where) {
    const auto* x = ast::As<ast::ExplodeOp>(step.op);
    if (!IsSafeToMove(*x->list) || !IsSafeToMove(*where.condition)) return false;
    bool ok = true;
    ForEachField(where.condition.get(), [&](const ast::NameExpr& n) {
      const types::Field* in = step.input.FindField(n.name);
      const types::Field* out = step.output.FindField(n.name);
      ok =
          ok && n.name != x->alias.name && in != nullptr && out != nullptr && in->type == out->type;
    });
    return ok && Swap(f, p, &where);
  }

  // A filter on each input of the union, then the union; the original filter node goes away.
  // Only when every input has the union's record type: an input with the same fields under
  // another record name is converted after it (code generation), and the filter's step is typed
  // for the union's record.
  bool IntoUnion(ChainNode& f, Node& u) {
    for (int in : u.inputs) {
      if (plan_.Get(in)->output != u.output) return false;
    }
    const int f_id = f.id;
    for (int& in : u.inputs) {
      auto copy = std::make_unique<ChainNode>();
      copy->stream = f.stream;
      copy->range = f.range;
      copy->output = f.output;
      copy->inputs = {in};
      copy->steps.push_back(f.steps[0]);
      in = plan_.Add(std::move(copy))->id;
    }
    for (int reader : plan_.Consumers(f_id)) {
      for (int& i : plan_.Get(reader)->inputs) {
        if (i == f_id) i = u.id;
      }
    }
    plan_.nodes[static_cast<size_t>(f_id)].reset();
    return true;
  }

  Plan& plan_;
};

}  // namespace

void PushFilters(Plan& plan, PassContext&) {
  Pusher(plan).Run();
}

}  // namespace flow::plan
