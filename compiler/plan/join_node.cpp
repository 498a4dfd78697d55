#include "plan/join_node.h"

namespace flow::plan {

types::Type JoinPairType(const types::Type& left, const types::Type& right) {
  return types::Type::Record(
      "", {types::Field{kJoinPairLeft, left}, types::Field{kJoinPairRight, right},
           types::Field{"window_start", types::Type::Timestamp()},
           types::Field{"window_end", types::Type::Timestamp()}});
}

bool IsJoinPair(const types::Type& type) {
  if (type.kind() != types::Kind::kRecord || !type.record_name().empty()) return false;
  const auto& f = type.fields();
  return f.size() == 4 && f[0].name == kJoinPairLeft && f[0].type.kind() == types::Kind::kRecord &&
         f[1].name == kJoinPairRight && f[1].type.kind() == types::Kind::kRecord &&
         f[2].name == "window_start" && f[3].name == "window_end";
}

std::string JoinNode::Describe() const {
  if (op == nullptr) return "?";
  std::string s = op->within ? "interval" : "window";
  if (op->window) {
    switch (op->window->shape) {
      case ast::WindowShape::kTumbling:
        s = "tumbling window";
        break;
      case ast::WindowShape::kSliding:
        s = "sliding window";
        break;
      case ast::WindowShape::kSession:
        s = "session window";
        break;
    }
    if (op->window->zone) s.append(" zone ").append(ast::ZoneText(*op->window->zone));
  }
  s.append(" ")
      .append(op->left_name.empty() ? "left" : op->left_name)
      .append(" with ")
      .append(op->right.name);
  s.append(" on ")
      .append(std::to_string(left_keys.size()))
      .append(left_keys.size() == 1 ? " key" : " keys");
  return s;
}

}  // namespace flow::plan

namespace flow::plan {
namespace {}  // namespace

std::unique_ptr<JoinNode> MakeJoinNode(const ast::JoinOp& op, const types::Type& left,
                                       const types::Type& right, std::string* error,
                                       diag::SourceRange* range) {
  auto fail = [&](const std::string& what, diag::SourceRange where) {
    *error = what;
    *range = where;
    return std::unique_ptr<JoinNode>();
  };
  if (op.window) {
    if (op.window->shape == ast::WindowShape::kSession)
      return fail("session-window joins", op.window->range);
    if (op.window->processing_time) return fail("processing-time window joins", op.window->range);
  } else if (!op.within) {
    return fail("a join without `within` or `window`", op.range);
  }
  auto n = std::make_unique<JoinNode>();
  n->op = &op;
  n->left = left;
  n->right = right;
  // `l == r and l == r ...` (sema checked the shape); each equality gives one key pair.
  std::vector<const ast::Expr*> work = {op.condition.get()};
  while (!work.empty()) {
    const ast::Expr* e = work.back();
    work.pop_back();
    const auto* b = ast::As<ast::BinaryExpr>(e);
    if (b == nullptr) return fail("this join condition", e->range);
    if (b->op == ast::BinaryOp::kAnd) {
      work.push_back(b->rhs.get());  // popped after lhs: keys keep their written order
      work.push_back(b->lhs.get());
      continue;
    }
    unsigned l = ast::JoinSidesRead(b->lhs.get()), r = ast::JoinSidesRead(b->rhs.get());
    if (b->op != ast::BinaryOp::kEq || !((l == 1 && r == 2) || (l == 2 && r == 1))) {
      return fail("this join condition", e->range);
    }
    const ast::Expr* lk = l == 1 ? b->lhs.get() : b->rhs.get();
    const ast::Expr* rk = l == 1 ? b->rhs.get() : b->lhs.get();
    if (lk->type.AsNonNullable() != rk->type.AsNonNullable()) {
      return fail("a join on keys of different types (" + lk->type.ToString() + " and " +
                      rk->type.ToString() + ")",
                  e->range);
    }
    if (lk->type.kind() == types::Kind::kFloat || lk->type.kind() == types::Kind::kList ||
        lk->type.kind() == types::Kind::kRecord) {
      return fail("a join key of type " + lk->type.ToString(), e->range);
    }
    n->left_keys.push_back(lk);
    n->right_keys.push_back(rk);
  }
  n->output = JoinPairType(left, right);
  return n;
}

}  // namespace flow::plan
