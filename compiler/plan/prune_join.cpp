// The prune-join pass: a window join of a stream S with the maximum (or minimum) of S's own key
// over the same windows, `S | join (S | window W | aggregate max(x) as m) on S.x == m window W`
// (Nexmark q7), buffers every record of S until its window fires although only the records equal
// to the window's maximum can match. A PruneNode in front of the join's S side drops the others as
// they arrive (plan/prune_node.h). Applied only where that is exact:
//   - the join and the aggregate have the same plain tumbling event-time window: no zone, no
//     allowed lateness (a window emits one result), no processing time;
//   - the aggregate is global (not keyed) and reads the very node the join's other side reads;
//   - the join has one key pair: a field of S's record, and the aggregate's output `m` defined as
//     `max(field)` or `min(field)` of that same field;
//   - the key is a non-nullable int (the runtime's max and the filter's order agree).

#include <optional>
#include <string>

#include "plan/passes.h"
#include "plan/stages.h"

namespace flow::plan {
namespace {

// The field of a record that `e` reads on join side `side` (-1: a plain record, no join), when
// `e` is just that: `f`, or `a.f` with `a` the side's qualifier.
std::optional<std::string> FieldOf(const ast::Expr* e, int side) {
  if (const auto* n = ast::As<ast::NameExpr>(e); n != nullptr) {
    if (n->target == ast::NameTarget::kField && (side < 0 || n->join_side == side)) return n->name;
    return std::nullopt;
  }
  if (const auto* f = ast::As<ast::FieldExpr>(e); f != nullptr && side >= 0) {
    const auto* q = ast::As<ast::NameExpr>(f->base.get());
    if (q != nullptr && q->target == ast::NameTarget::kJoinSide && q->join_side == side) {
      return f->field.name;
    }
  }
  return std::nullopt;
}

bool SameDuration(const ast::DurationRef& a, const ast::DurationRef& b) {
  return a.is_param == b.is_param && (a.is_param ? a.param == b.param : a.millis == b.millis);
}

// `max(field)` -> true, `min(field)` -> false, with the field's name in `*field`.
std::optional<bool> ExtremeOf(const ast::Expr* e, std::string* field) {
  const auto* call = ast::As<ast::CallExpr>(e);
  if (call == nullptr || !call->aggregate || call->builtin == nullptr || call->args.size() != 1)
    return std::nullopt;
  const std::string& name = call->name.name;
  if (name != "max" && name != "min") return std::nullopt;
  std::optional<std::string> f = FieldOf(call->args[0].get(), -1);
  if (!f) return std::nullopt;
  *field = *f;
  return name == "max";
}

// The prune node for side `side` of `join`, when its other side is a matching extreme.
std::unique_ptr<PruneNode> PruneFor(const Plan& plan, const JoinNode& join, int side) {
  const int other = 1 - side;
  const auto* agg = As<WindowAggregateNode>(plan.Get(join.inputs[other]));
  if (agg == nullptr || agg->key != nullptr || agg->window == nullptr ||
      agg->window->late_sink != nullptr || agg->aggregate == nullptr || agg->inputs.size() != 1 ||
      agg->inputs[0] != join.inputs[side] || join.inputs[0] == join.inputs[1]) {
    return nullptr;
  }
  const ast::WindowSpec& w = *join.op->window;
  if (!PlainTumbling(w) || !PlainTumbling(agg->window->spec) ||
      !SameDuration(w.size, agg->window->spec.size)) {
    return nullptr;
  }
  const ast::Expr* key = side == 0 ? join.left_keys[0] : join.right_keys[0];
  const ast::Expr* extreme_key = side == 0 ? join.right_keys[0] : join.left_keys[0];
  std::optional<std::string> field = FieldOf(key, side);
  std::optional<std::string> result = FieldOf(extreme_key, other);
  if (!field || !result || key->type != types::Type::Int() ||
      extreme_key->type != types::Type::Int()) {
    return nullptr;
  }
  for (const ast::NamedExpr& item : agg->aggregate->items) {
    if (item.output_name != *result) continue;
    std::string of;
    std::optional<bool> max = ExtremeOf(item.expr.get(), &of);
    if (!max || of != *field) return nullptr;
    auto p = std::make_unique<PruneNode>();
    p->key = key;
    p->window = &w;
    p->max = *max;
    p->side = side;
    p->output = plan.Get(join.inputs[side])->output;
    p->range = join.range;
    p->stream = join.stream;
    p->inputs = {join.inputs[side]};
    return p;
  }
  return nullptr;
}

}  // namespace

void PruneJoins(Plan& plan) {
  bool added = false;
  const size_t count = plan.nodes.size();
  for (size_t i = 0; i < count; ++i) {
    auto* join = As<JoinNode>(plan.nodes[i].get());
    if (join == nullptr || join->op == nullptr || !join->op->window ||
        join->left_keys.size() != 1 || join->right_keys.size() != 1) {
      continue;
    }
    for (int side : {0, 1}) {
      std::unique_ptr<PruneNode> p = PruneFor(plan, *join, side);
      if (p == nullptr) continue;
      p->id = static_cast<int>(plan.nodes.size());
      join->inputs[static_cast<size_t>(side)] = p->id;
      plan.nodes.push_back(std::move(p));
      added = true;
      break;
    }
  }
  if (added) Renumber(plan);
}

bool PlainTumbling(const ast::WindowSpec& w) {
  return w.shape == ast::WindowShape::kTumbling && !w.slide && !w.zone && !w.lateness &&
         !w.processing_time;
}

std::string PruneNode::Describe() const {
  return std::string(max ? "below the running max of " : "above the running min of ") +
         KeyExprText(key) + " per window";
}

}  // namespace flow::plan
