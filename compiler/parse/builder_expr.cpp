// Expressions and literals.
#include "parse/builder.h"
#include "parse/literals.h"

namespace flow::parse {

ast::ExprPtr AstBuilder::Error(antlr4::ParserRuleContext* at) {
  auto e = std::make_unique<ast::ErrorExpr>();
  e->range = ctx_.Range(at);
  return e;
}

ast::ExprPtr AstBuilder::BuildExpr(FlowParser::ExprContext* e) {
  depth_reported_ = false;
  return BuildExprAt(e, 0);
}

namespace {

ast::BinaryOp OpFromText(const std::string& s) {
  if (s == "*") return ast::BinaryOp::kMul;
  if (s == "/") return ast::BinaryOp::kDiv;
  if (s == "%") return ast::BinaryOp::kMod;
  if (s == "+") return ast::BinaryOp::kAdd;
  if (s == "-") return ast::BinaryOp::kSub;
  if (s == "==") return ast::BinaryOp::kEq;
  if (s == "!=") return ast::BinaryOp::kNe;
  if (s == "<") return ast::BinaryOp::kLt;
  if (s == "<=") return ast::BinaryOp::kLe;
  if (s == ">") return ast::BinaryOp::kGt;
  return ast::BinaryOp::kGe;
}

}  // namespace

ast::ExprPtr AstBuilder::BuildExprAt(FlowParser::ExprContext* e, size_t depth) {
  if (e == nullptr) return std::make_unique<ast::ErrorExpr>();
  if (depth > limits_.max_expr_depth) {
    if (!depth_reported_) {
      depth_reported_ = true;
      ctx_.diags()
          .Report(diag::Kind::kNestingTooDeep, ctx_.Range(e->getStart()),
                  "expression is nested too deeply (more than " +
                      std::to_string(limits_.max_expr_depth) + " levels)")
          .Help("split it with intermediate `select` steps or shorter chains");
    }
    return Error(e);
  }
  const size_t d = depth + 1;
  ast::ExprPtr out;
  auto binary = [&](FlowParser::ExprContext* lhs, FlowParser::ExprContext* rhs, ast::BinaryOp op,
                    antlr4::Token* op_token) {
    auto b = std::make_unique<ast::BinaryExpr>();
    b->op = op;
    b->op_range = ctx_.Range(op_token);
    b->lhs = BuildExprAt(lhs, d);
    b->rhs = BuildExprAt(rhs, d);
    return b;
  };
  auto expr_at = [](const std::vector<FlowParser::ExprContext*>& v,
                    size_t i) -> FlowParser::ExprContext* { return i < v.size() ? v[i] : nullptr; };
  if (auto* p = dynamic_cast<FlowParser::PrimaryExprContext*>(e)) {
    out = BuildPrimary(p->primary(), d);
  } else if (auto* f = dynamic_cast<FlowParser::FieldExprContext*>(e)) {
    auto x = std::make_unique<ast::FieldExpr>();
    x->base = BuildExprAt(f->expr(), d);
    x->field = BuildIdent(f->ident());
    out = std::move(x);
  } else if (auto* ix = dynamic_cast<FlowParser::IndexExprContext*>(e)) {
    auto x = std::make_unique<ast::IndexExpr>();
    x->base = BuildExprAt(expr_at(ix->expr(), 0), d);
    x->index = BuildExprAt(expr_at(ix->expr(), 1), d);
    out = std::move(x);
  } else if (auto* n = dynamic_cast<FlowParser::NegExprContext*>(e)) {
    auto x = std::make_unique<ast::UnaryExpr>();
    x->op = ast::UnaryOp::kNeg;
    x->operand = BuildExprAt(n->expr(), d);
    out = std::move(x);
  } else if (auto* n = dynamic_cast<FlowParser::NotExprContext*>(e)) {
    auto x = std::make_unique<ast::UnaryExpr>();
    x->op = ast::UnaryOp::kNot;
    x->operand = BuildExprAt(n->expr(), d);
    out = std::move(x);
  } else if (auto* m = dynamic_cast<FlowParser::MulExprContext*>(e)) {
    out = binary(expr_at(m->expr(), 0), expr_at(m->expr(), 1),
                 OpFromText(m->op ? m->op->getText() : "*"), m->op);
  } else if (auto* a = dynamic_cast<FlowParser::AddExprContext*>(e)) {
    out = binary(expr_at(a->expr(), 0), expr_at(a->expr(), 1),
                 OpFromText(a->op ? a->op->getText() : "+"), a->op);
  } else if (auto* c = dynamic_cast<FlowParser::CmpExprContext*>(e)) {
    out = binary(expr_at(c->expr(), 0), expr_at(c->expr(), 1),
                 OpFromText(c->op ? c->op->getText() : "=="), c->op);
  } else if (auto* x = dynamic_cast<FlowParser::AndExprContext*>(e)) {
    out = binary(expr_at(x->expr(), 0), expr_at(x->expr(), 1), ast::BinaryOp::kAnd,
                 x->AND() ? x->AND()->getSymbol() : nullptr);
  } else if (auto* x = dynamic_cast<FlowParser::OrExprContext*>(e)) {
    out = binary(expr_at(x->expr(), 0), expr_at(x->expr(), 1), ast::BinaryOp::kOr,
                 x->OR() ? x->OR()->getSymbol() : nullptr);
  } else if (auto* in = dynamic_cast<FlowParser::InExprContext*>(e)) {
    auto x = std::make_unique<ast::InExpr>();
    x->negated = in->NOT() != nullptr;
    auto items = in->expr();
    x->operand = BuildExprAt(expr_at(items, 0), d);
    for (size_t i = 1; i < items.size(); ++i) x->items.push_back(BuildExprAt(items[i], d));
    out = std::move(x);
  } else if (auto* isn = dynamic_cast<FlowParser::IsNullExprContext*>(e)) {
    auto x = std::make_unique<ast::IsNullExpr>();
    x->negated = isn->NOT() != nullptr;
    x->operand = BuildExprAt(isn->expr(), d);
    out = std::move(x);
  } else {
    return Error(e);
  }
  out->range = ctx_.Range(e);
  return out;
}

ast::ExprPtr AstBuilder::BuildPrimary(FlowParser::PrimaryContext* p, size_t depth) {
  if (p == nullptr) return std::make_unique<ast::ErrorExpr>();
  ast::ExprPtr out;
  if (auto* c = dynamic_cast<FlowParser::CallExprContext*>(p)) {
    auto x = std::make_unique<ast::CallExpr>();
    x->name = BuildIdent(c->ident());
    for (auto* a : c->callArg()) {
      if (a == nullptr) continue;
      if (a->expr()) {
        x->args.push_back(BuildExprAt(a->expr(), depth));
      } else {
        x->star = true;
      }
    }
    out = std::move(x);
  } else if (auto* n = dynamic_cast<FlowParser::NameExprContext*>(p)) {
    auto x = std::make_unique<ast::NameExpr>();
    x->name = n->ident() ? n->ident()->getText() : "";
    out = std::move(x);
  } else if (auto* par = dynamic_cast<FlowParser::ParenExprContext*>(p)) {
    ast::ExprPtr inner = BuildExprAt(par->expr(), depth);
    inner->range = ctx_.Range(p);  // include the parentheses so carets cover what was written
    return inner;
  } else if (auto* c = dynamic_cast<FlowParser::CastExprContext*>(p)) {
    auto x = std::make_unique<ast::CastExpr>();
    x->operand = BuildExprAt(c->expr(), depth);
    x->target = BuildType(c->typeRef());
    out = std::move(x);
  } else if (auto* c = dynamic_cast<FlowParser::CaseExprContext*>(p)) {
    auto x = std::make_unique<ast::CaseExpr>();
    auto parts = c->expr();
    size_t whens = c->WHEN().size();
    for (size_t i = 0; i < whens; ++i) {
      ast::CaseExpr::When w;
      w.condition = BuildExprAt(2 * i < parts.size() ? parts[2 * i] : nullptr, depth);
      w.value = BuildExprAt(2 * i + 1 < parts.size() ? parts[2 * i + 1] : nullptr, depth);
      x->whens.push_back(std::move(w));
    }
    if (c->ELSE() && parts.size() > 2 * whens) x->else_value = BuildExprAt(parts[2 * whens], depth);
    out = std::move(x);
  } else if (auto* l = dynamic_cast<FlowParser::ListLitContext*>(p)) {
    auto x = std::make_unique<ast::ListExpr>();
    for (auto* e : l->expr()) x->items.push_back(BuildExprAt(e, depth));
    out = std::move(x);
  } else {
    out = Literal(p);
  }
  out->range = ctx_.Range(p);
  return out;
}

ast::ExprPtr AstBuilder::Literal(FlowParser::PrimaryContext* p) {
  auto x = std::make_unique<ast::LiteralExpr>();
  diag::SourceRange range = ctx_.Range(p);
  std::string error;
  auto bad = [&](diag::Kind kind, diag::SourceRange r) { ctx_.diags().Report(kind, r, error); };
  if (auto* i = dynamic_cast<FlowParser::IntLitContext*>(p)) {
    x->literal = ast::LiteralKind::kInt;
    if (!ParseInt(i->getText(), &x->int_value, &error)) bad(diag::Kind::kInvalidLiteral, range);
  } else if (auto* f = dynamic_cast<FlowParser::FloatLitContext*>(p)) {
    x->literal = ast::LiteralKind::kFloat;
    if (!ParseFloat(f->getText(), &x->float_value, &error)) bad(diag::Kind::kInvalidLiteral, range);
  } else if (auto* s = dynamic_cast<FlowParser::StringLitContext*>(p)) {
    x->literal = ast::LiteralKind::kString;
    if (s->STRING() != nullptr) x->string_value = DecodeString(s->STRING());
  } else if (auto* d = dynamic_cast<FlowParser::DurationLitContext*>(p)) {
    x->literal = ast::LiteralKind::kDuration;
    if (!ParseDuration(d->getText(), &x->int_value, &error))
      bad(diag::Kind::kInvalidLiteral, range);
  } else if (dynamic_cast<FlowParser::TrueLitContext*>(p) ||
             dynamic_cast<FlowParser::FalseLitContext*>(p)) {
    x->literal = ast::LiteralKind::kBool;
    x->bool_value = dynamic_cast<FlowParser::TrueLitContext*>(p) != nullptr;
  } else if (dynamic_cast<FlowParser::NullLitContext*>(p)) {
    x->literal = ast::LiteralKind::kNull;
  } else if (auto* t = dynamic_cast<FlowParser::TimestampLitContext*>(p)) {
    x->literal = ast::LiteralKind::kTimestamp;
    if (t->STRING()) {
      diag::SourceRange sr = ctx_.Range(t->STRING()->getSymbol());
      std::string text;
      size_t at = 0;
      if (!UnescapeString(t->STRING()->getText(), &text, &error, &at)) {
        bad(diag::Kind::kInvalidEscape, sr);
      } else if (!ParseTimestamp(text, &x->int_value, &error)) {
        bad(diag::Kind::kInvalidLiteral, sr);
      }
    }
  } else {
    return Error(p);
  }
  return x;
}

}  // namespace flow::parse
