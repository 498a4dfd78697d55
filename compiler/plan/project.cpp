// The `project` pass: a source decodes only the fields some expression downstream reads, until the
// record is replaced (a select without `*`, an aggregate). A record that reaches a sink or a union
// unchanged needs every field.

#include <functional>

#include "plan/passes.h"

namespace flow::plan {
namespace {

void ForEachName(const ast::Expr* e, const std::function<void(const std::string&)>& fn) {
  if (e == nullptr) return;
  ast::ForEachSubexpression(*e, [&](const ast::Expr& x) {
    const auto* n = ast::As<ast::NameExpr>(&x);
    if (n != nullptr && n->target == ast::NameTarget::kField) fn(n->name);
  });
}

class Projector {
 public:
  Projector(const Plan& plan, SourceNode& source) : plan_(plan), source_(source) {}

  void Run() {
    used_.clear();
    all_ = false;
    if (source_.source->event_time) ForEachName(source_.source->event_time->expr.get(), Use());
    Follow(source_.id);
    if (all_) return;  // keep every field
    source_.decoded = used_;
  }

 private:
  std::function<void(const std::string&)> Use() {
    return [this](const std::string& name) {
      if (source_.output.FindField(name) != nullptr) used_.insert(name);
    };
  }

  // Records of the source's shape (possibly with fields added) flow out of node `id`.
  void Follow(int id) {
    for (int c : plan_.Consumers(id)) {
      if (all_) return;
      const Node* n = plan_.Get(c);
      switch (n->kind) {
        case NodeKind::kChain:
          if (Steps(*As<ChainNode>(n))) Follow(c);
          break;
        case NodeKind::kKeyBy:
          for (const auto& k : As<KeyByNode>(n)->op->keys) ForEachName(k.get(), Use());
          Follow(c);
          break;
        case NodeKind::kWindowAggregate:
          for (const auto& item : As<WindowAggregateNode>(n)->aggregate->items)
            ForEachName(item.expr.get(), Use());
          if (As<WindowAggregateNode>(n)->window->late_sink)
            all_ = true;  // late records reach a sink whole
          break;
        case NodeKind::kRunningAggregate:
          for (const auto& item : As<RunningAggregateNode>(n)->aggregate->items)
            ForEachName(item.expr.get(), Use());
          break;
        case NodeKind::kPrune:
          ForEachName(As<PruneNode>(n)->key, Use());
          Follow(c);
          break;
        case NodeKind::kUnion:
        case NodeKind::kJoin:  // both sides' records are kept whole in the join's state
        case NodeKind::kSink:
        case NodeKind::kSource:
          all_ = true;
          break;
      }
    }
  }

  // False when the chain replaced the record (the source's fields stop flowing).
  bool Steps(const ChainNode& c) {
    for (const ChainStep& step : c.steps) {
      if (const auto* w = ast::As<ast::WhereOp>(step.op)) {
        ForEachName(w->condition.get(), Use());
      } else if (const auto* x = ast::As<ast::ExplodeOp>(step.op)) {
        ForEachName(x->list.get(), Use());
      } else if (const auto* s = ast::As<ast::SelectOp>(step.op)) {
        bool star = false;
        for (const ast::SelectItem& item : s->items) {
          star = star || item.star;
          if (!item.star) ForEachName(item.item.expr.get(), Use());
        }
        if (star) {
          all_ = true;
          return false;
        }
        return false;
      }
    }
    return true;
  }

  const Plan& plan_;
  SourceNode& source_;
  std::set<std::string> used_;
  bool all_ = false;
};

}  // namespace

void ProjectSources(Plan& plan) {
  for (const auto& n : plan.nodes) {
    if (auto* s = As<SourceNode>(n.get())) Projector(plan, *s).Run();
  }
}

}  // namespace flow::plan
