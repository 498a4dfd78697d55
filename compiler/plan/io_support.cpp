// What flowc build supports of sources and sinks (the runtime's connector catalog), and the key a
// sink writes with.

#include <algorithm>

#include "flow/runtime/connectors/connector_catalog.h"
#include "plan/plan.h"

namespace flow::plan {
namespace {

// Whether `step` passes field `name` through unchanged.
bool Keeps(const ChainStep& step, const std::string& name) {
  if (ast::As<ast::WhereOp>(step.op)) return true;
  if (const auto* x = ast::As<ast::ExplodeOp>(step.op)) return x->alias.name != name;
  if (const auto* sel = ast::As<ast::SelectOp>(step.op)) {
    for (const ast::SelectItem& item : sel->items) {
      if (item.star) {
        if (step.input.FindField(name) != nullptr) return true;
        continue;
      }
      if (item.item.output_name != name) continue;
      const auto* ref = ast::As<ast::NameExpr>(item.item.expr.get());
      return ref != nullptr && ref->target == ast::NameTarget::kField && ref->name == name;
    }
  }
  return false;
}

}  // namespace

std::string SourceFormat(const ast::Source& source) {
  return source.format ? source.format->name.name : "none";
}

std::string UnsupportedSource(const ast::Source& source, diag::SourceRange* where) {
  const std::string& kind = source.connector.name.name;
  const rt::ConnectorCaps* caps = rt::FindConnectorCaps(kind);
  if (caps == nullptr || !caps->source) {
    *where = source.connector.range;
    return "the `" + kind + "` source";
  }
  std::string format = SourceFormat(source);
  if (caps->formats == 0 ? format != "none" : !rt::TakesFormat(kind, format)) {
    *where = source.format ? source.format->range : source.range;
    return "`format " + format + "` on a `" + kind + "` source";
  }
  if (source.on_error && source.on_error->kind == ast::ErrorPolicyKind::kDeadLetter) {
    const ast::ErrorPolicy& p = *source.on_error;
    if (!p.sink || !rt::IsDeadLetterSinkKind(p.sink->name.name)) {
      *where = p.sink ? p.sink->range : p.range;
      return "a dead-letter sink other than " +
             rt::ConnectorKindList(
                 [](const rt::ConnectorCaps& c) { return c.sink && c.dead_letter; }, " or ");
    }
    if (p.format && p.format->name.name != "json") {
      *where = p.format->range;
      return "`format " + p.format->name.name + "` for dead letters (they are JSON objects)";
    }
  }
  return "";
}

std::string UnsupportedSink(const ast::IntoOp& into, diag::SourceRange* where) {
  const std::string& kind = into.sink.name.name;
  if (!rt::IsSinkKind(kind)) {
    *where = into.sink.range;
    return "the `" + kind + "` sink";
  }
  // Without a format clause the sink writes JSON, or nothing (blackhole).
  if (into.format && !rt::TakesFormat(kind, into.format->name.name)) {
    *where = into.format->range;
    return "`format " + into.format->name.name + "` on a sink";
  }
  if (into.delivery == ast::Delivery::kExactlyOnce &&
      !rt::SinkOffers(kind, rt::Delivery::kExactlyOnce)) {
    *where = into.delivery_range ? *into.delivery_range : into.range;
    return "`exactly_once` on a `" + kind + "` sink";
  }
  return "";
}

void ResolveSinkKey(const Plan& plan, SinkNode* sink) {
  std::vector<const ChainStep*> after;  // chain steps between the key's origin and the sink
  const Node* n = plan.Get(sink->inputs.empty() ? -1 : sink->inputs[0]);
  while (n != nullptr) {
    if (const auto* c = As<ChainNode>(n)) {
      for (auto it = c->steps.rbegin(); it != c->steps.rend(); ++it) after.push_back(&*it);
      n = plan.Get(n->inputs[0]);
      continue;
    }
    if (const auto* k = As<KeyByNode>(n)) {
      // The expressions are over the key by's record: only `where`s may come between.
      bool same_record = std::all_of(after.begin(), after.end(), [](const ChainStep* s) {
        return ast::As<ast::WhereOp>(s->op) != nullptr;
      });
      if (same_record) sink->key_by = k->op;
      return;
    }
    const ast::KeyByOp* key = nullptr;
    if (const auto* w = As<WindowAggregateNode>(n)) key = w->key;
    if (const auto* r = As<RunningAggregateNode>(n)) key = r->key;
    if (key == nullptr) return;
    for (const std::string& name : key->key_names) {
      for (const ChainStep* s : after) {
        if (!Keeps(*s, name)) return;
      }
    }
    sink->key_fields = key->key_names;
    return;
  }
}

}  // namespace flow::plan
