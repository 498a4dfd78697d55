// Pipelines, sources, connectors and operators.
#include "parse/builder.h"
#include "parse/literals.h"

namespace flow::parse {

ast::Pipeline AstBuilder::BuildPipeline(FlowParser::PipelineContext* p) {
  ast::Pipeline out;
  if (p == nullptr) return out;
  out.range = ctx_.Range(p);
  if (auto* head = p->pipeHead()) {
    if (auto* s = dynamic_cast<FlowParser::SourceHeadContext*>(head)) {
      if (s->source()) out.source = BuildSource(s->source());
    } else if (auto* n = dynamic_cast<FlowParser::StreamHeadContext*>(head)) {
      if (n->ident()) out.head = BuildIdent(n->ident());
    }
  }
  for (auto* op : p->pipeOp()) {
    if (ast::OpPtr o = BuildOp(op)) out.ops.push_back(std::move(o));
  }
  return out;
}

std::vector<ast::NamedArg> AstBuilder::BuildArgs(
    const std::vector<FlowParser::NamedArgContext*>& args) {
  std::vector<ast::NamedArg> out;
  for (auto* a : args) {
    if (a == nullptr) continue;
    ast::NamedArg arg;
    arg.name = BuildIdent(a->ident());
    arg.value = BuildExpr(a->expr());
    out.push_back(std::move(arg));
  }
  return out;
}

ast::ConnectorCall AstBuilder::BuildConnector(FlowParser::ConnectorContext* c) {
  ast::ConnectorCall out;
  if (c == nullptr) return out;
  out.range = ctx_.Range(c);
  out.name = BuildIdent(c->ident());
  out.args = BuildArgs(c->namedArg());
  return out;
}

ast::FormatClause AstBuilder::BuildFormat(FlowParser::FormatClauseContext* f) {
  ast::FormatClause out;
  if (f == nullptr) return out;
  out.range = ctx_.Range(f);
  out.name = BuildIdent(f->ident());
  out.args = BuildArgs(f->namedArg());
  return out;
}

ast::DurationRef AstBuilder::BuildDuration(FlowParser::DurationRefContext* d) {
  ast::DurationRef out;
  if (d == nullptr) return out;
  out.range = ctx_.Range(d);
  if (auto* lit = dynamic_cast<FlowParser::DurationLiteralContext*>(d)) {
    std::string error;
    if (lit->DURATION() && !ParseDuration(lit->DURATION()->getText(), &out.millis, &error)) {
      ctx_.diags().Report(diag::Kind::kInvalidLiteral, out.range, error);
    }
  } else if (auto* p = dynamic_cast<FlowParser::DurationParamContext*>(d)) {
    out.is_param = true;
    out.param = p->ident() ? p->ident()->getText() : "";
  }
  return out;
}

ast::ZoneRef AstBuilder::BuildZone(FlowParser::ZoneRefContext* z) {
  ast::ZoneRef out;
  if (z == nullptr) return out;
  out.range = ctx_.Range(z);
  if (auto* lit = dynamic_cast<FlowParser::ZoneLiteralContext*>(z)) {
    if (lit->STRING()) out.name = DecodeString(lit->STRING());
  } else if (auto* p = dynamic_cast<FlowParser::ZoneParamContext*>(z)) {
    out.is_param = true;
    out.param = p->ident() ? p->ident()->getText() : "";
  }
  return out;
}

ast::Source AstBuilder::BuildSource(FlowParser::SourceContext* s) {
  ast::Source out;
  out.range = ctx_.Range(s);
  out.connector = BuildConnector(s->connector());
  auto duplicate = [&](antlr4::ParserRuleContext* c, const char* what,
                       const diag::SourceRange& first) {
    ctx_.diags()
        .Report(diag::Kind::kDuplicateClause, ctx_.Range(c),
                std::string("`") + what + "` given twice for one source")
        .AddNote(first, "first given here");
  };
  for (auto* clause : s->sourceClause()) {
    if (auto* f = dynamic_cast<FlowParser::SourceFormatContext*>(clause)) {
      if (out.format)
        duplicate(f, "format", out.format->range);
      else
        out.format = BuildFormat(f->formatClause());
    } else if (auto* a = dynamic_cast<FlowParser::SourceSchemaContext*>(clause)) {
      if (out.schema)
        duplicate(a, "as", out.schema->range);
      else
        out.schema = BuildIdent(a->ident());
    } else if (auto* e = dynamic_cast<FlowParser::SourceEventTimeContext*>(clause)) {
      if (out.event_time) {
        duplicate(e, "event time", out.event_time->range);
        continue;
      }
      ast::EventTimeClause et;
      et.range = ctx_.Range(e);
      et.expr = BuildExpr(e->expr());
      auto durations = e->durationRef();
      if (!durations.empty()) et.watermark = BuildDuration(durations[0]);
      if (durations.size() > 1) et.idle = BuildDuration(durations[1]);
      out.event_time = std::move(et);
    } else if (auto* o = dynamic_cast<FlowParser::SourceOnErrorContext*>(clause)) {
      if (out.on_error) {
        duplicate(o, "on error", out.on_error->range);
        continue;
      }
      ast::ErrorPolicy policy;
      policy.range = ctx_.Range(o);
      auto* p = o->errorPolicy();
      if (dynamic_cast<FlowParser::ErrorSkipContext*>(p)) {
        policy.kind = ast::ErrorPolicyKind::kSkip;
      } else if (auto* dl = dynamic_cast<FlowParser::ErrorDeadLetterContext*>(p)) {
        policy.kind = ast::ErrorPolicyKind::kDeadLetter;
        policy.sink = BuildConnector(dl->connector());
        if (dl->formatClause()) policy.format = BuildFormat(dl->formatClause());
      }
      out.on_error = std::move(policy);
    }
  }
  return out;
}

ast::WindowSpec AstBuilder::BuildWindow(FlowParser::WindowSpecContext* w) {
  ast::WindowSpec out;
  if (w == nullptr) return out;
  out.range = ctx_.Range(w);
  if (auto* t = dynamic_cast<FlowParser::TumblingWindowContext*>(w->windowShape())) {
    out.shape = ast::WindowShape::kTumbling;
    out.size = BuildDuration(t->durationRef());
  } else if (auto* s = dynamic_cast<FlowParser::SlidingWindowContext*>(w->windowShape())) {
    out.shape = ast::WindowShape::kSliding;
    auto d = s->durationRef();
    if (!d.empty()) out.size = BuildDuration(d[0]);
    if (d.size() > 1) out.slide = BuildDuration(d[1]);
  } else if (auto* g = dynamic_cast<FlowParser::SessionWindowContext*>(w->windowShape())) {
    out.shape = ast::WindowShape::kSession;
    out.size = BuildDuration(g->durationRef());
  }
  if (w->ZONE()) out.zone = BuildZone(w->zoneRef());
  if (w->LATENESS()) out.lateness = BuildDuration(w->durationRef());
  out.processing_time = w->PROCESSING() != nullptr;
  return out;
}

ast::NamedExpr AstBuilder::BuildNamed(FlowParser::ExprContext* e, FlowParser::IdentContext* alias) {
  ast::NamedExpr out;
  out.expr = BuildExpr(e);
  if (alias) out.alias = BuildIdent(alias);
  return out;
}

ast::OpPtr AstBuilder::BuildOp(FlowParser::PipeOpContext* op) {
  if (op == nullptr) return nullptr;
  ast::OpPtr out;
  if (auto* w = dynamic_cast<FlowParser::WhereOpContext*>(op)) {
    auto o = std::make_unique<ast::WhereOp>();
    o->condition = BuildExpr(w->expr());
    out = std::move(o);
  } else if (auto* k = dynamic_cast<FlowParser::KeyByOpContext*>(op)) {
    auto o = std::make_unique<ast::KeyByOp>();
    for (auto* e : k->expr()) o->keys.push_back(BuildExpr(e));
    out = std::move(o);
  } else if (auto* w = dynamic_cast<FlowParser::WindowOpContext*>(op)) {
    auto o = std::make_unique<ast::WindowOp>();
    o->spec = BuildWindow(w->windowSpec());
    if (auto* late = w->lateRoute()) {
      if (late->ident() && late->ident()->getText() != "late") {
        ctx_.diags()
            .Report(diag::Kind::kSyntaxError, ctx_.Range(late->ident()),
                    "unexpected `" + late->ident()->getText() +
                        "` after the window's `on`, expected `late`")
            .Help("route late records with `on late into <sink>`");
      }
      auto sink = std::make_unique<ast::IntoOp>();
      sink->sink = BuildConnector(late->connector());
      if (late->formatClause()) sink->format = BuildFormat(late->formatClause());
      if (auto* d = late->delivery()) {
        sink->delivery =
            d->EXACTLY_ONCE() ? ast::Delivery::kExactlyOnce : ast::Delivery::kAtLeastOnce;
        sink->delivery_range = ctx_.Range(d);
      }
      sink->range = ctx_.Range(late);
      sink->keyword_range = ctx_.Range(late->getStart());
      o->late_sink = std::move(sink);
    }
    out = std::move(o);
  } else if (auto* a = dynamic_cast<FlowParser::AggregateOpContext*>(op)) {
    auto o = std::make_unique<ast::AggregateOp>();
    for (auto* n : a->namedExpr()) {
      if (n) o->items.push_back(BuildNamed(n->expr(), n->ident()));
    }
    out = std::move(o);
  } else if (auto* s = dynamic_cast<FlowParser::SelectOpContext*>(op)) {
    auto o = std::make_unique<ast::SelectOp>();
    for (auto* item : s->selectItem()) {
      ast::SelectItem si;
      if (auto* star = dynamic_cast<FlowParser::SelectStarContext*>(item)) {
        si.star = true;
        si.star_range = ctx_.Range(star);
      } else if (auto* e = dynamic_cast<FlowParser::SelectExprContext*>(item)) {
        si.item = BuildNamed(e->expr(), e->ident());
      } else {
        continue;
      }
      o->items.push_back(std::move(si));
    }
    out = std::move(o);
  } else if (auto* x = dynamic_cast<FlowParser::ExplodeOpContext*>(op)) {
    auto o = std::make_unique<ast::ExplodeOp>();
    o->list = BuildExpr(x->expr());
    o->alias = BuildIdent(x->ident());
    out = std::move(o);
  } else if (auto* u = dynamic_cast<FlowParser::UnionOpContext*>(op)) {
    auto o = std::make_unique<ast::UnionOp>();
    for (auto* i : u->ident()) o->streams.push_back(BuildIdent(i));
    out = std::move(o);
  } else if (auto* j = dynamic_cast<FlowParser::JoinOpContext*>(op)) {
    auto o = std::make_unique<ast::JoinOp>();
    o->right = BuildIdent(j->ident());
    o->condition = BuildExpr(j->expr());
    if (auto* b = dynamic_cast<FlowParser::IntervalBoundContext*>(j->joinBound())) {
      o->within = BuildDuration(b->durationRef());
    } else if (auto* b = dynamic_cast<FlowParser::WindowBoundContext*>(j->joinBound())) {
      o->window = BuildWindow(b->windowSpec());
    }
    out = std::move(o);
  } else if (auto* i = dynamic_cast<FlowParser::IntoOpContext*>(op)) {
    auto o = std::make_unique<ast::IntoOp>();
    o->sink = BuildConnector(i->connector());
    if (i->formatClause()) o->format = BuildFormat(i->formatClause());
    if (auto* d = i->delivery()) {
      o->delivery = d->EXACTLY_ONCE() ? ast::Delivery::kExactlyOnce : ast::Delivery::kAtLeastOnce;
      o->delivery_range = ctx_.Range(d);
    }
    out = std::move(o);
  } else {
    return nullptr;
  }
  out->range = ctx_.Range(op);
  out->keyword_range = ctx_.Range(op->getStart());
  return out;
}

}  // namespace flow::parse
