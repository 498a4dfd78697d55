#include "plan/plan.h"

#include <string>

namespace flow::plan {

const char* KindName(NodeKind kind) {
  switch (kind) {
    case NodeKind::kSource:
      return "source";
    case NodeKind::kChain:
      return "chain";
    case NodeKind::kKeyBy:
      return "key-by";
    case NodeKind::kWindowAggregate:
      return "window-aggregate";
    case NodeKind::kRunningAggregate:
      return "running-aggregate";
    case NodeKind::kUnion:
      return "union";
    case NodeKind::kJoin:
      return "join";
    case NodeKind::kPrune:
      return "prune";
    case NodeKind::kSink:
      return "sink";
  }
  return "?";
}

std::vector<int> Plan::Consumers(int id) const {
  std::vector<int> out;
  for (const auto& n : nodes) {
    if (!n) continue;
    for (int in : n->inputs) {
      if (in == id) {
        out.push_back(n->id);
        break;
      }
    }
  }
  return out;
}

std::vector<const Node*> Plan::Ordered() const {
  std::vector<const Node*> out;
  for (const auto& n : nodes) {
    if (n) out.push_back(n.get());
  }
  return out;
}

std::string Plan::ToString() const {
  std::string s;
  for (const Node* n : Ordered()) {
    s.append("#").append(std::to_string(n->id)).append(" ").append(KindName(n->kind));
    s.append(" [").append(n->stream).append("] ").append(n->Describe());
    if (!n->inputs.empty()) {
      s.append(" <-");
      for (int in : n->inputs) s.append(" #").append(std::to_string(in));
    }
    s.append(" : ").append(n->output.ToString());
    if (n->range.valid()) s.append(" (line ").append(std::to_string(n->range.line)).append(")");
    s.append("\n");
  }
  return s;
}

std::string SourceNode::Describe() const {
  std::string s = source ? source->connector.name.name : "?";
  if (source && source->format) s.append(" format ").append(source->format->name.name);
  s.append(" decodes {");
  bool first = true;
  for (const std::string& f : decoded) {
    s.append(first ? "" : ", ").append(f);
    first = false;
  }
  return s.append("}");
}

std::string ChainNode::Describe() const {
  std::string s;
  for (const ChainStep& step : steps) {
    if (!s.empty()) s.append(", ");
    switch (step.op->kind) {
      case ast::OpKind::kWhere:
        s.append("where");
        break;
      case ast::OpKind::kSelect:
        s.append("select");
        break;
      case ast::OpKind::kExplode:
        s.append("explode");
        break;
      case ast::OpKind::kJoin:
        s.append("flatten join");
        break;
      default:
        s.append("?");
        break;
    }
  }
  return s;
}

std::string KeyByNode::Describe() const {
  std::string s = "by";
  for (const std::string& k : op->key_names) s.append(" ").append(k);
  return s;
}

std::string WindowShapeName(const ast::WindowSpec& spec) {
  switch (spec.shape) {
    case ast::WindowShape::kTumbling:
      return "tumbling";
    case ast::WindowShape::kSliding:
      return "sliding";
    case ast::WindowShape::kSession:
      return "session";
  }
  return "?";
}

std::string WindowAggregateNode::Describe() const {
  std::string s = WindowShapeName(window->spec);
  if (window->spec.zone) s.append(" zone ").append(ast::ZoneText(*window->spec.zone));
  if (window->spec.processing_time) s.append(" processing-time");
  s.append(key ? " keyed" : " global");
  for (const ast::NamedExpr& item : aggregate->items) s.append(" ").append(item.output_name);
  return s;
}

std::string RunningAggregateNode::Describe() const {
  std::string s = key ? "keyed" : "global";
  for (const ast::NamedExpr& item : aggregate->items) s.append(" ").append(item.output_name);
  return s;
}

std::string UnionNode::Describe() const {
  return std::to_string(inputs.size()) + " inputs";
}

std::string SinkNode::Describe() const {
  std::string s = late ? "late records to " : "";
  s.append(into ? into->sink.name.name : "?");
  if (into && into->format) s.append(" format ").append(into->format->name.name);
  return s;
}

}  // namespace flow::plan
