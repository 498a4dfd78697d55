// Plan invariants. A violation is a compiler bug, never a user error: the driver reports it as an
// internal error naming the pass that ran last.

#include <set>

#include "plan/plan.h"

namespace flow::plan {
namespace {

std::string Where(const Node& n) {
  return std::string("node #") + std::to_string(n.id) + " (" + KindName(n.kind) + ")";
}

// Records with the same field names and types in the same order; record names may differ.
bool SameFields(const types::Type& a, const types::Type& b) {
  if (a == b) return true;
  if (a.kind() != types::Kind::kRecord || b.kind() != types::Kind::kRecord) return false;
  if (a.fields().size() != b.fields().size()) return false;
  for (size_t i = 0; i < a.fields().size(); ++i) {
    if (a.fields()[i].name != b.fields()[i].name || a.fields()[i].type != b.fields()[i].type)
      return false;
  }
  return true;
}

}  // namespace

std::string Verify(const Plan& plan) {
  const std::vector<const Node*> nodes = plan.Ordered();
  if (nodes.empty()) return "the plan is empty";
  for (const Node* n : nodes) {
    if (n->output.kind() != types::Kind::kRecord) return Where(*n) + " does not output a record";
    for (int in : n->inputs) {
      const Node* src = plan.Get(in);
      if (src == nullptr) return Where(*n) + " reads a missing node #" + std::to_string(in);
      if (in >= n->id)
        return Where(*n) + " reads node #" + std::to_string(in) + ", which comes after it";
    }
    size_t want_inputs = n->kind == NodeKind::kSource ? 0 : n->kind == NodeKind::kJoin ? 2 : 1;
    if (n->kind == NodeKind::kUnion ? n->inputs.size() < 2 : n->inputs.size() != want_inputs) {
      return Where(*n) + " has " + std::to_string(n->inputs.size()) + " inputs";
    }
    switch (n->kind) {
      case NodeKind::kChain: {
        const auto* c = As<ChainNode>(n);
        if (c->steps.empty()) return Where(*n) + " has no steps";
        if (c->steps.front().input != plan.Get(n->inputs[0])->output)
          return Where(*n) + ": first step's input type differs from its input";
        for (size_t i = 1; i < c->steps.size(); ++i) {
          if (c->steps[i].input != c->steps[i - 1].output)
            return Where(*n) + ": step " + std::to_string(i) + " input type differs";
        }
        for (const ChainStep& step : c->steps) {
          bool flatten = step.op != nullptr && step.op->kind == ast::OpKind::kJoin;
          if (flatten && (!IsJoinPair(step.input) || IsJoinPair(step.output)))
            return Where(*n) + " has a join flatten step that does not flatten a pair";
          if (!flatten && step.op != nullptr && step.op->kind != ast::OpKind::kWhere &&
              IsJoinPair(step.output)) {
            return Where(*n) + " has a step other than `where` that outputs a join pair";
          }
        }
        if (c->steps.back().output != n->output)
          return Where(*n) + ": output type differs from its last step";
        break;
      }
      case NodeKind::kSink:
        if (As<SinkNode>(n)->late) {
          // Late records are the window's input records.
          const Node* w = plan.Get(n->inputs[0]);
          if (w->kind != NodeKind::kWindowAggregate)
            return Where(*n) + " reads late records of a node that is no window";
          if (plan.Get(w->inputs[0])->output != n->output)
            return Where(*n) + ": late records differ from the window's input";
          break;
        }
        [[fallthrough]];
      case NodeKind::kKeyBy:
        if (plan.Get(n->inputs[0])->output != n->output)
          return Where(*n) + " changes the record type";
        break;
      case NodeKind::kPrune: {
        const auto* p = As<PruneNode>(n);
        if (plan.Get(n->inputs[0])->output != n->output)
          return Where(*n) + " changes the record type";
        if (p->key == nullptr || p->window == nullptr) return Where(*n) + " has no key or window";
        if (!PlainTumbling(*p->window))
          return Where(*n) + " prunes for a window that is not a plain tumbling event-time one";
        if (p->key->type != types::Type::Int())
          return Where(*n) + " prunes by a key that is not an int";
        std::vector<int> readers = plan.Consumers(n->id);
        if (readers.size() != 1 || plan.Get(readers[0])->kind != NodeKind::kJoin)
          return Where(*n) + " is not read by exactly one join";
        break;
      }
      case NodeKind::kUnion:
        // Same fields under another record name is fine: code generation converts such inputs.
        for (int in : n->inputs) {
          if (!SameFields(plan.Get(in)->output, n->output)) {
            return Where(*n) + ": input #" + std::to_string(in) + " has another type";
          }
        }
        break;
      case NodeKind::kWindowAggregate:
      case NodeKind::kRunningAggregate: {
        const ast::KeyByOp* key = n->kind == NodeKind::kWindowAggregate
                                      ? As<WindowAggregateNode>(n)->key
                                      : As<RunningAggregateNode>(n)->key;
        const Node* in = plan.Get(n->inputs[0]);
        if (key != nullptr && in->kind != NodeKind::kKeyBy)
          return Where(*n) + " is keyed but its input is no key-by";
        break;
      }
      case NodeKind::kJoin: {
        const auto* j = As<JoinNode>(n);
        if (j->op == nullptr) return Where(*n) + " has no join operator";
        if (j->left_keys.empty() || j->left_keys.size() != j->right_keys.size())
          return Where(*n) + " has unpaired join keys";
        if (plan.Get(n->inputs[0])->output != j->left ||
            plan.Get(n->inputs[1])->output != j->right) {
          return Where(*n) + ": an input's type differs from its join side";
        }
        if (IsJoinPair(j->left) || IsJoinPair(j->right))
          return Where(*n) + " joins a join pair that was not flattened";
        if (n->output != JoinPairType(j->left, j->right))
          return Where(*n) + " does not output its join pair";
        break;
      }
      case NodeKind::kSource: {
        const auto* s = As<SourceNode>(n);
        // A set, not FindField per name: a schema may have tens of thousands of fields.
        std::set<std::string_view> fields;
        for (const types::Field& f : n->output.fields()) fields.insert(f.name);
        for (const std::string& f : s->decoded) {
          if (!fields.count(f)) return Where(*n) + " decodes unknown field `" + f + "`";
        }
        break;
      }
    }
  }
  // Every node reaches a sink and is reached from a source.
  std::set<int> reaches_sink;
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    const Node* n = *it;
    if (n->kind == NodeKind::kSink || reaches_sink.count(n->id)) {
      reaches_sink.insert(n->id);
      for (int in : n->inputs) reaches_sink.insert(in);
    }
  }
  std::set<int> from_source;
  for (const Node* n : nodes) {
    bool reached = n->kind == NodeKind::kSource;
    for (int in : n->inputs) reached = reached || from_source.count(in) > 0;
    if (reached) from_source.insert(n->id);
    if (!reached) return Where(*n) + " is not reachable from a source";
  }
  for (const Node* n : nodes) {
    if (!reaches_sink.count(n->id)) return Where(*n) + " does not reach a sink";
  }
  return "";
}

}  // namespace flow::plan
