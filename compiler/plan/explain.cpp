#include "plan/explain.h"

#include <algorithm>
#include <map>
#include <vector>

#include "flow/runtime/connectors/kafka_properties.h"
#include "plan/passes.h"
#include "plan/stages.h"

namespace flow::plan {
namespace {

constexpr size_t kMaxSnippet = 72;  // longer operator texts are cut with "..."

// A connector call as written, with the values of secret Kafka properties in string literals
// ("sasl.password=...") replaced by *** unless they name an environment variable.
std::string MaskSecrets(std::string call) {
  size_t at = 0;
  while ((at = call.find('"', at)) != std::string::npos) {
    size_t end = at + 1;
    while (end < call.size() && call[end] != '"') end += call[end] == '\\' ? 2 : 1;
    if (end >= call.size()) break;
    const std::string_view text(call.data() + at + 1, end - at - 1);
    const size_t eq = text.find('=');
    if (eq != std::string_view::npos && rt::IsSecretKafkaProperty(text.substr(0, eq)) &&
        !text.substr(eq + 1).starts_with("${")) {
      call.replace(at + 1 + eq + 1, text.size() - eq - 1, "***");
      end = at + 1 + eq + 1 + 3;
    }
    at = end + 1;
  }
  return call;
}

// The script text of `range` on one line: runs of whitespace become one space; secrets masked.
std::string Snippet(std::string_view source, const diag::SourceRange& range) {
  if (source.empty() || range.end <= range.begin || range.end > source.size()) return "";
  std::string out;
  bool space = false;
  for (char c : source.substr(range.begin, range.end - range.begin)) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      space = !out.empty();
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    out.push_back(c);
  }
  out = MaskSecrets(std::move(out));  // before the cut: a cut literal would hide its end
  if (out.size() > kMaxSnippet) out = out.substr(0, kMaxSnippet - 3) + "...";
  return out;
}

// `format csv(header: true)` as written, or `format NAME` when the text is not at hand.
std::string FormatText(std::string_view source, const ast::FormatClause& f) {
  std::string text = Snippet(source, f.range);
  return text.rfind("format", 0) == 0 ? text : "format " + f.name.name;
}

std::string Join(const std::vector<std::string>& items, const char* sep) {
  std::string s;
  for (const std::string& i : items) s.append(s.empty() ? "" : sep).append(i);
  return s;
}

bool IsGlobalAggregate(const Node& n) {
  if (const auto* w = As<WindowAggregateNode>(&n)) return w->key == nullptr;
  if (const auto* r = As<RunningAggregateNode>(&n)) return r->key == nullptr;
  return false;
}

std::string Parallelism(const Node& n) {
  if (const auto* s = As<SourceNode>(&n)) {
    if (s->source && s->source->connector.name.name == "stdin") return "1 (stdin has one reader)";
  }
  if (IsGlobalAggregate(n)) return "1 (global aggregate)";
  return "job parallelism";
}

// How records travel from `input` to `n`.
std::string Partitioning(const Plan& plan, const Node& n, int input) {
  if (const auto* s = As<SinkNode>(&n); s && s->late) return "late records (side output)";
  if (const auto* j = As<JoinNode>(&n)) {
    // Both sides hash by their join keys (the same input may feed both sides: left wins).
    const auto& keys = input == n.inputs[0] ? j->left_keys : j->right_keys;
    std::vector<std::string> texts;
    for (const ast::Expr* k : keys) texts.push_back(KeyExprText(k));
    return std::string(input == n.inputs[0] ? "left" : "right") + ", hash by " + Join(texts, ", ");
  }

  if (const auto* k = As<KeyByNode>(plan.Get(input))) {
    return "hash by " + Join(k->op->key_names, ", ");
  }
  if (IsGlobalAggregate(n)) return "all to one subtask";
  return "forward";
}

std::string StepName(const ast::Op& op) {
  switch (op.kind) {
    case ast::OpKind::kWhere:
      return "where";
    case ast::OpKind::kSelect:
      return "select";
    case ast::OpKind::kExplode:
      return "explode";
    case ast::OpKind::kJoin:
      return "flatten the join pair";
    default:
      return "?";
  }
}

std::string LineOf(const diag::SourceRange& r) {
  return r.valid() ? "line " + std::to_string(r.line) : "no line";
}

// One node as a title and detail lines, shared by the text and DOT renderings.
struct Block {
  std::string title;
  std::vector<std::string> details;
};

Block Describe(const Plan& plan, const Node& n, std::string_view source) {
  Block b;
  std::string what = n.Describe();
  if (const auto* s = As<SourceNode>(&n); s && s->source) {
    std::string call = Snippet(source, s->source->connector.range);
    if (!call.empty()) {
      what = call;
      if (s->source->format) what.append(" ").append(FormatText(source, *s->source->format));
      what.append(" decodes {")
          .append(Join({s->decoded.begin(), s->decoded.end()}, ", "))
          .append("}");
    }
  } else if (const auto* k = As<SinkNode>(&n); k && k->into) {
    std::string call = Snippet(source, k->into->sink.range);
    if (!call.empty()) {
      what = call;
      if (k->into->format) what.append(" ").append(FormatText(source, *k->into->format));
    }
  } else if (const auto* c = As<ChainNode>(&n)) {
    what = std::to_string(c->steps.size()) + (c->steps.size() == 1 ? " step" : " steps");
  } else if (const auto* j = As<JoinNode>(&n); j && j->op) {
    std::string text = Snippet(source, j->op->range);
    if (!text.empty()) what = j->Describe() + ": " + text;
  }
  b.title = "#" + std::to_string(n.id) + " " + KindName(n.kind) + " " + what;
  b.details.push_back("stream: " + n.stream + ", " + LineOf(n.range));
  b.details.push_back("parallelism: " + Parallelism(n));
  for (int in : n.inputs) {
    b.details.push_back("input: #" + std::to_string(in) + " " + Partitioning(plan, n, in));
  }
  if (const auto* c = As<ChainNode>(&n)) {
    for (size_t i = 0; i < c->steps.size(); ++i) {
      const ast::Op& op = *c->steps[i].op;
      std::string text = op.kind == ast::OpKind::kJoin ? "" : Snippet(source, op.range);
      // A step a pass rewrote (folded, pushed through a select) no longer reads as written.
      if (std::string built = PassBuiltStepText(plan, op); !built.empty()) text = built;
      if (text.empty()) text = StepName(op);
      b.details.push_back("step " + std::to_string(i + 1) + ": " + text + " (" + LineOf(op.range) +
                          ")");
    }
  }
  if (const auto* s = As<SourceNode>(&n); s && s->source) {
    if (s->source->event_time) b.details.push_back(Snippet(source, s->source->event_time->range));
    if (const auto& e = s->source->on_error;
        e && e->kind == ast::ErrorPolicyKind::kDeadLetter && e->sink) {
      std::string to = "on error dead_letter " + Snippet(source, e->sink->range);
      if (e->format) to.append(" ").append(FormatText(source, *e->format));
      b.details.push_back(to + " (at least once)");
    } else if (e) {
      b.details.push_back(Snippet(source, e->range));
    }
  } else if (const auto* k = As<SinkNode>(&n)) {
    b.details.push_back(k->delivery == ast::Delivery::kExactlyOnce
                            ? "delivery: exactly once (two-phase commit: output is visible once a "
                              "checkpoint completes)"
                            : "delivery: at least once");
  }
  b.details.push_back("output: " + n.output.ToString());
  return b;
}

// Longest path from a source, so a node is indented below every input.
std::map<int, int> Depths(const std::vector<const Node*>& nodes) {
  std::map<int, int> depth;
  for (const Node* n : nodes) {
    int d = 0;
    for (int in : n->inputs) {
      auto it = depth.find(in);
      if (it != depth.end()) d = std::max(d, it->second + 1);
    }
    depth[n->id] = d;
  }
  return depth;
}

// The plan as instances of one job run it (stages.h): the stages, the repartition topics between
// them, or why it cannot run that way yet.
std::string InstancesText(const Plan& plan) {
  const InstancePlan ip = PlanInstances(plan);
  std::string out = "as instances (--instance, docs/deploy.md): ";
  if (!ip.refusals.empty()) {
    out += "refused; run it as one process (without --instance)\n";
    for (const std::string& r : ip.refusals) out.append("  refused: ").append(r).append("\n");
    return out;
  }
  if (ip.cuts.empty()) {
    return out +
           "one stage, no repartition topic: each instance runs the whole plan on its share of "
           "the sources' partitions\n";
  }
  out += std::to_string(ip.stages.size()) + " stages, " + std::to_string(ip.cuts.size()) +
         (ip.cuts.size() == 1 ? " repartition topic" : " repartition topics") +
         " (--shuffle-partitions partitions each, on --shuffle-brokers)\n";
  for (const InstanceStage& st : ip.stages) {
    std::vector<std::string> ids;
    for (int id : st.nodes)
      ids.push_back("#" + std::to_string(id) + " " + KindName(plan.Get(id)->kind));
    out.append("  stage ")
        .append(std::to_string(st.number))
        .append(": ")
        .append(ids.empty() ? "no node" : Join(ids, ", "))
        .append(st.number == 1 ? " (reads the sources' partitions)\n" : "\n");
    for (const RepartitionCut& c : ip.cuts) {
      if (std::find(c.from_stages.begin(), c.from_stages.end(), st.number) == c.from_stages.end())
        continue;
      out.append("    writes ")
          .append(c.topic)
          .append(c.key.empty() ? ", all to one partition (a global aggregate)"
                                : ", hash by " + c.key)
          .append(c.key_by >= 0 ? " (#" + std::to_string(c.key_by) + ")" : "")
          .append(", read by stage ")
          .append(std::to_string(c.to_stage))
          .append(" (#")
          .append(std::to_string(c.consumer))
          .append(" ")
          .append(c.op)
          .append(")\n");
    }
  }
  return out;
}

}  // namespace

std::string ExplainText(const Plan& plan, std::string_view source) {
  std::vector<const Node*> nodes = plan.Ordered();
  std::map<int, int> depth = Depths(nodes);
  std::string out;
  for (const Node* n : nodes) {
    std::string indent(static_cast<size_t>(depth[n->id]) * 2, ' ');
    Block b = Describe(plan, *n, source);
    out.append(indent).append(b.title).append("\n");
    for (const std::string& d : b.details) out.append(indent).append("    ").append(d).append("\n");
  }
  return out + InstancesText(plan);
}

std::string DotEscape(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\\' || c == '"') {
      out.push_back('\\');
      out.push_back(c);
    } else if (c == '\n') {
      out.append("\\l");
    } else if (c == '\r') {
      if (i + 1 >= text.size() || text[i + 1] != '\n') out.append("\\l");
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string ExplainDot(const Plan& plan, std::string_view source) {
  std::string out = "digraph plan {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\"];\n";
  for (const Node* n : plan.Ordered()) {
    Block b = Describe(plan, *n, source);
    std::string label = b.title + "\n";
    for (const std::string& d : b.details) label.append(d).append("\n");
    out.append("  n")
        .append(std::to_string(n->id))
        .append(" [label=\"")
        .append(DotEscape(label))
        .append("\"];\n");
  }
  // Under --instance a cut edge crosses a repartition topic: say which.
  std::map<int, std::string> topic_into;  // consumer node -> topic
  for (const RepartitionCut& c : PlanInstances(plan).cuts) topic_into[c.consumer] = c.topic;
  for (const Node* n : plan.Ordered()) {
    for (int in : n->inputs) {
      std::string label = Partitioning(plan, *n, in);
      if (auto t = topic_into.find(n->id); t != topic_into.end())
        label += "\nwith --instance: through " + t->second;
      out.append("  n").append(std::to_string(in)).append(" -> n").append(std::to_string(n->id));
      out.append(" [label=\"").append(DotEscape(label)).append("\"];\n");
    }
  }
  return out + "}\n";
}

}  // namespace flow::plan
