#include "plan/state_schema.h"

#include "ast/pipeline.h"
#include "plan/join_node.h"
#include "plan/passes.h"
#include "plan/running_aggregate_node.h"
#include "plan/source_node.h"
#include "plan/window_aggregate_node.h"

namespace flow::plan {
namespace {

// Connector arguments that say where a source's positions point: changing them makes the
// restored offsets meaningless. (Brokers are left out: a cluster's addresses change without
// its topics changing.)
constexpr std::string_view kPositionArgs[] = {"topic", "path"};

std::string DurationText(const ast::DurationRef& d) {
  return d.is_param ? "param " + d.param : std::to_string(d.millis) + "ms";
}

std::string WindowText(const ast::WindowSpec& spec) {
  std::string s = WindowShapeName(spec) + " " + DurationText(spec.size);
  if (spec.slide) s += " every " + DurationText(*spec.slide);
  if (spec.zone) s += " zone " + ast::ZoneText(*spec.zone);
  if (spec.lateness) s += " lateness " + DurationText(*spec.lateness);
  if (spec.processing_time) s += " processing-time";
  return s;
}

// The structure a snapshot stores: fields by position with their types (a record's schema name
// does not matter, its fields do).
std::string Shape(const types::Type& t) {
  std::string s;
  if (t.kind() == types::Kind::kRecord) {
    s = "{";
    for (size_t i = 0; i < t.fields().size(); ++i) {
      const types::Field& f = t.fields()[i];
      s += (i ? ", " : "") + f.name + ": " + Shape(f.type);
    }
    s += "}";
    if (t.nullable()) s += "?";
  } else if (t.kind() == types::Kind::kList) {
    s = "list<" + Shape(t.element()) + ">" + (t.nullable() ? "?" : "");
  } else {
    s = t.ToString();
  }
  return s;
}

std::string KeyText(const std::vector<const ast::Expr*>& keys) {
  std::string s;
  for (const ast::Expr* k : keys) s += (s.empty() ? "" : ", ") + Shape(k->type);
  return s.empty() ? "none (global)" : s;
}

std::vector<const ast::Expr*> Keys(const ast::KeyByOp* key) {
  std::vector<const ast::Expr*> out;
  if (key != nullptr) {
    for (const auto& k : key->keys) out.push_back(k.get());
  }
  return out;
}

void AddAggregates(const ast::AggregateOp& agg, std::vector<std::string>* parts) {
  for (const ast::NamedExpr& item : agg.items) {
    std::string call = ExprText(*item.expr);
    if (const auto* c = ast::As<ast::CallExpr>(item.expr.get()); c != nullptr) {
      // The accumulator depends on the function and its argument types, not on the argument
      // expressions (changing those changes what is added from now on, like any logic change).
      call = c->name.name + "(";
      if (c->star) call += "*";
      for (size_t i = 0; i < c->args.size(); ++i) call += (i ? ", " : "") + Shape(c->args[i]->type);
      call += ")";
    }
    parts->push_back(std::string("aggregate ") + item.output_name + ": " + call + " -> " +
                     Shape(item.expr->type));
  }
}

std::vector<std::string> SourceParts(const SourceNode& n) {
  std::vector<std::string> parts{"state: source " + n.source->connector.name.name};
  for (const ast::NamedArg& arg : n.source->connector.args) {
    for (std::string_view name : kPositionArgs) {
      if (arg.name.name == name) parts.push_back(arg.name.name + ": " + ExprText(*arg.value));
    }
  }
  return parts;
}

}  // namespace

std::string OperatorName(const Node& n, std::string_view what) {
  return n.stream + "." + std::string(what) + (n.ordinal > 0 ? std::to_string(n.ordinal + 1) : "");
}

uint32_t AggregateTag(std::string_view name) {
  uint32_t h = 2166136261u;
  for (unsigned char c : name) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}

std::vector<OperatorState> StateOperators(const Plan& plan) {
  std::vector<OperatorState> out;
  for (const Node* n : plan.Ordered()) {
    OperatorState op;
    if (const auto* src = As<SourceNode>(n); src != nullptr && src->source != nullptr) {
      op.name = OperatorName(*n, "source");
      op.parts = SourceParts(*src);
    } else if (const auto* w = As<WindowAggregateNode>(n); w != nullptr) {
      const bool session = w->window->spec.shape == ast::WindowShape::kSession;
      op.name = OperatorName(*n, session ? "session" : "window");
      op.parts = {std::string("state: ") + (session ? "session" : "window") + " aggregate",
                  "key: " + KeyText(Keys(w->key)), "window: " + WindowText(w->window->spec)};
      AddAggregates(*w->aggregate, &op.parts);
    } else if (const auto* r = As<RunningAggregateNode>(n); r != nullptr) {
      op.name = OperatorName(*n, "aggregate");
      op.parts = {"state: running aggregate", "key: " + KeyText(Keys(r->key))};
      AddAggregates(*r->aggregate, &op.parts);
    } else if (const auto* j = As<JoinNode>(n); j != nullptr) {
      op.name = OperatorName(*n, "join");
      if (j->op->window) {
        op.parts = {"state: window join", "window: " + WindowText(*j->op->window)};
      } else {
        op.parts = {"state: interval join", "within: " + DurationText(*j->op->within)};
      }
      op.parts.push_back("key: " + KeyText(j->left_keys));
      op.parts.push_back("left: " + Shape(j->left));
      op.parts.push_back("right: " + Shape(j->right));
    } else {
      continue;
    }
    out.push_back(std::move(op));
  }
  return out;
}

}  // namespace flow::plan
