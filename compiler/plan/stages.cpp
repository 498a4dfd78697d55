#include "plan/stages.h"

#include <algorithm>
#include <map>
#include <set>

#include "flow/runtime/shuffle/repartition_topic.h"
#include "plan/state_schema.h"

namespace flow::plan {
namespace {

std::string Title(const Node& n) {
  return "#" + std::to_string(n.id) + " " + KindName(n.kind);
}

std::string KeyText(const ast::KeyByOp* key) {
  if (key == nullptr) return "";
  std::string s;
  for (const std::string& k : key->key_names) s.append(s.empty() ? "" : ", ").append(k);
  return s;
}

// Both sides' keys: "a.k (left), b.k (right)".
std::string JoinKeyText(const JoinNode& j) {
  std::string left, right;
  for (const ast::Expr* k : j.left_keys)
    left.append(left.empty() ? "" : ", ").append(KeyExprText(k));
  for (const ast::Expr* k : j.right_keys)
    right.append(right.empty() ? "" : ", ").append(KeyExprText(k));
  return left + " (left), " + right + " (right)";
}

}  // namespace

std::string KeyExprText(const ast::Expr* e) {
  if (const auto* n = ast::As<ast::NameExpr>(e)) return n->name;
  if (const auto* f = ast::As<ast::FieldExpr>(e)) {
    if (const auto* b = ast::As<ast::NameExpr>(f->base.get())) return b->name + "." + f->field.name;
  }
  return "expr";
}

InstancePlan PlanInstances(const Plan& plan) {
  InstancePlan out;
  std::map<int, int> stage_of;  // node id -> stage
  out.stages.push_back({.number = 1, .nodes = {}});
  const std::vector<const Node*> nodes = plan.Ordered();
  for (const Node* n : nodes) {
    int stage = 1;
    for (int in : n->inputs) {
      stage = std::max(stage, stage_of[in]);
    }
    const ast::KeyByOp* key = nullptr;
    const char* what = nullptr;
    if (const auto* w = As<WindowAggregateNode>(n)) {
      key = w->key;
      what = w->window->spec.shape == ast::WindowShape::kSession ? "session" : "window";
    } else if (const auto* r = As<RunningAggregateNode>(n)) {
      key = r->key;
      what = "aggregate";
    }
    if (const auto* src = As<SourceNode>(n);
        src != nullptr && src->source != nullptr && src->source->connector.name.name != "kafka") {
      out.refusals.push_back(Title(*n) + " `" + src->source->connector.name.name +
                             "`: every instance would read the whole input; instances of a job "
                             "share Kafka partitions only");
    } else if (const auto* sink = As<SinkNode>(n); sink != nullptr && sink->into != nullptr &&
                                                   sink->into->sink.name.name == "file" &&
                                                   sink->delivery == ast::Delivery::kExactlyOnce) {
      out.refusals.push_back(Title(*n) +
                             " `file` exactly_once: its commit cannot be atomic with the "
                             "instance's Kafka transaction");
    } else if (const auto* join = As<JoinNode>(n); join != nullptr || what != nullptr) {
      RepartitionCut cut;
      cut.consumer = n->id;
      if (const Node* in = plan.Get(n->inputs[0]);
          join == nullptr && in != nullptr && As<KeyByNode>(in) != nullptr)
        cut.key_by = in->id;
      cut.op = OperatorName(*n, join != nullptr ? "join" : what);
      rt::Result<std::string> topic = rt::shuffle::RepartitionTopicName("<job id>", cut.op);
      if (!topic.ok()) {
        out.refusals.push_back(Title(*n) + ": " + topic.status().message());
        continue;
      }
      cut.topic = *topic;
      cut.key = join != nullptr ? JoinKeyText(*join) : KeyText(key);
      // A key-by node belongs to the stage that writes the topic; each side of a join writes.
      if (cut.key_by >= 0) {
        cut.from_stages = {stage_of[cut.key_by]};
      } else if (join != nullptr) {
        std::set<int> sides;
        for (int in : n->inputs) sides.insert(stage_of[in]);
        cut.from_stages.assign(sides.begin(), sides.end());
      } else {
        cut.from_stages = {stage};
      }
      cut.to_stage = static_cast<int>(out.stages.size()) + 1;
      out.stages.push_back({.number = cut.to_stage, .nodes = {}});
      stage = cut.to_stage;
      out.cuts.push_back(std::move(cut));
    }
    stage_of[n->id] = stage;
  }
  std::set<int> cut_key_bys;
  for (const RepartitionCut& c : out.cuts) cut_key_bys.insert(c.key_by);
  for (const Node* n : nodes) {
    if (cut_key_bys.count(n->id) == 0) out.stages[stage_of[n->id] - 1].nodes.push_back(n->id);
  }
  return out;
}

}  // namespace flow::plan
