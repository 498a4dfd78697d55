// Joins: per side a key function (and, for nullable keys, a filter: a null key matches nothing),
// the builder of the join pair, a state Serializer for each side's record (the operators buffer
// records in keyed state, which snapshots them, and a repartition topic carries them between
// instances), and JoinAcrossInstances (Connect(left.KeyBy, right.KeyBy).Then(...) in one process).

#include "codegen/aggregate_emitter.h"
#include "codegen/escape.h"
#include "codegen/node_text.h"
#include "plan/stages.h"

namespace flow::codegen {
namespace {

std::string Join(const std::vector<std::string>& parts) {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? ", " : "") + parts[i];
  return s;
}

// `Key<id> <fn>(const <rec>& <var>)` from one side's key expressions; with `present`, also
// `bool <fn>Present(...)`: false when a key is null.
void EmitKeyFunction(OpEmitContext& cx, const plan::JoinNode& n,
                     const std::vector<const ast::Expr*>& keys, const types::Type& side,
                     const std::string& fn, const std::string& var, bool present) {
  std::string id = std::to_string(n.id);
  // The condition's names are marked with their side; each function reads only its own.
  ExprScope scope;
  scope.record = var;
  scope.flow_file = cx.FlowFile();
  scope.sides = {"l", "r"};
  ExprEmitter ex(cx.records, scope);
  std::vector<std::string> parts, checks;
  for (const ast::Expr* k : keys) {
    parts.push_back(ex.EmitAs(*k, k->type.AsNonNullable()));
    if (k->type.nullable()) checks.push_back("::flow::exec::ops::Present(" + ex.Emit(*k) + ")");
  }
  cx.Take(ex);
  cx.w.Line("inline JoinKey" + id + " " + fn + "(const " + cx.Rec(side) + "& " + var + ") {");
  cx.w.FlowLine(n.op->condition->range.line);
  cx.w.Line("  return JoinKey" + id + "(" + Join(parts) + ");");
  cx.w.CppLine();
  cx.w.Line("}");
  if (present) {
    cx.w.Line("inline bool " + fn + "Present(const " + cx.Rec(side) + "& " + var + ") {");
    if (checks.empty()) {
      cx.w.Line("  (void)" + var + ";");
      cx.w.Line("  return true;");
    } else {
      cx.w.FlowLine(n.op->condition->range.line);
      std::string all;
      for (size_t i = 0; i < checks.size(); ++i) all += (i ? " && " : "") + checks[i];
      cx.w.Line("  return " + all + ";");
      cx.w.CppLine();
    }
    cx.w.Line("}");
  }
}

}  // namespace

// Serializer<rec::X> for a record (and the records inside it), once per struct. The fields are
// written in order with the runtime's serializers.
void EmitSerializer(OpEmitContext& cx, const types::Type& type) {
  if (type.kind() == types::Kind::kList) return EmitSerializer(cx, type.element());
  if (type.kind() != types::Kind::kRecord) return;
  std::string name = cx.records.Name(type);
  if (!cx.serializers.insert(name).second) return;
  for (const types::Field& f : type.fields()) EmitSerializer(cx, f.type);
  Writer& w = cx.w;
  std::string rec = "rec::" + name;
  w.Line("struct Serde" + name + " {");
  w.Line("  static void Write(::flow::rt::BinaryWriter& w, const " + rec + "& v) {");
  if (type.fields().empty()) w.Line("    (void)w; (void)v;");
  for (const types::Field& f : type.fields()) {
    w.Line("    ::flow::rt::Serializer<" + cx.Rec(f.type) + ">::Write(w, v." + MangleIdent(f.name) +
           ");");
  }
  w.Line("  }");
  w.Line("  static ::flow::rt::Status Read(::flow::rt::BinaryReader& r, " + rec + "* v) {");
  if (type.fields().empty()) w.Line("    (void)r; (void)v;");
  for (const types::Field& f : type.fields()) {
    w.Line("    FLOW_RETURN_IF_ERROR(::flow::rt::Serializer<" + cx.Rec(f.type) + ">::Read(r, &v->" +
           MangleIdent(f.name) + "));");
  }
  w.Line("    return ::flow::rt::Status::Ok();");
  w.Line("  }");
  w.Line("};");
  w.Line("}  // namespace flowjob");
  w.Line("template <>");
  w.Line("struct flow::rt::Serializer<flowjob::" + rec + "> : flowjob::Serde" + name + " {};");
  w.Line("namespace flowjob {");
}

void EmitJoin(OpEmitContext& cx, const plan::JoinNode& n) {
  cx.Header(n, n.Describe());
  std::string id = std::to_string(n.id);
  std::string l = cx.Rec(n.left), r = cx.Rec(n.right), out = cx.Rec(n.output);
  EmitSerializer(cx, n.left);
  EmitSerializer(cx, n.right);
  std::vector<std::string> key_types;
  bool nullable = false;
  for (const ast::Expr* k : n.left_keys) key_types.push_back(cx.Rec(k->type.AsNonNullable()));
  for (size_t i = 0; i < n.left_keys.size(); ++i) {
    nullable = nullable || n.left_keys[i]->type.nullable() || n.right_keys[i]->type.nullable();
  }
  cx.w.Line("using JoinKey" + id + " = " +
            (key_types.size() == 1 ? key_types[0] : "std::tuple<" + Join(key_types) + ">") + ";");
  EmitKeyFunction(cx, n, n.left_keys, n.left, "LeftKey" + id, "l", nullable);
  EmitKeyFunction(cx, n, n.right_keys, n.right, "RightKey" + id, "r", nullable);
  bool window = n.op->window.has_value();
  if (window) {
    cx.w.Line("inline " + out + " Pair" + id + "(const JoinKey" + id +
              "&, ::flow::rt::TimestampMs start, ::flow::rt::TimestampMs end, const " + l +
              "& l, const " + r + "& r) {");
    cx.w.Line("  return " + out + "{l, r, start, end};");
  } else {
    cx.w.Line("inline " + out + " Pair" + id + "(const JoinKey" + id + "&, const " + l +
              "& l, ::flow::rt::TimestampMs, const " + r + "& r, ::flow::rt::TimestampMs) {");
    cx.w.Line("  return " + out + "{l, r, 0, 0};");
  }
  cx.w.Line("}");
  std::string left = "s" + std::to_string(n.inputs[0]), right = "s" + std::to_string(n.inputs[1]);
  if (nullable) {
    left += ".Filter(" + cx.Name(n, "join.left_key_present") + ", [](const " + l +
            "& x) { return LeftKey" + id + "Present(x); })";
    right += ".Filter(" + cx.Name(n, "join.right_key_present") + ", [](const " + r +
             "& x) { return RightKey" + id + "Present(x); })";
  }
  // One process: both sides keyed into a two-input operator. Under --instance both sides cross
  // one repartition topic to the instance of their key (engine/shuffle_join.h).
  const std::string types = "JoinKey" + id + ", " + l + ", " + r + ", " + out;
  std::string factory;
  if (window) {
    const ast::WindowSpec& spec = *n.op->window;
    std::string cfg = "cfg" + id;
    cx.Build("::flow::exec::WindowConfig " + cfg + ";");
    cx.Build(cfg + ".size = " + CppDuration(spec.size) + ";");
    cx.Build(cfg + ".slide = " + (spec.slide ? CppDuration(*spec.slide) : CppDuration(spec.size)) +
             ";");
    if (spec.lateness) cx.Build(cfg + ".allowed_lateness = " + CppDuration(*spec.lateness) + ";");
    if (spec.zone) cx.Build(cfg + ".zone = " + CppZone(*spec.zone) + ";");
    factory = "[" + cfg + "] { return std::make_unique<::flow::exec::WindowJoinAdapter<" + types +
              ">>(" + cfg + ", &LeftKey" + id + ", &RightKey" + id + ", &Pair" + id + "); }";
  } else {
    std::string bound = "bound" + id;
    cx.Build("const int64_t " + bound + " = " + CppDuration(*n.op->within) + ";");
    factory = "[" + bound + "] { return std::make_unique<::flow::exec::IntervalJoinAdapter<" +
              types + ">>(" + bound + ", &LeftKey" + id + ", &RightKey" + id + ", &Pair" + id +
              "); }";
  }
  std::vector<std::string> key_texts;
  for (const ast::Expr* k : n.left_keys) key_texts.push_back(plan::KeyExprText(k));
  const std::string joined = "s" + id + "_joined";
  cx.Build("auto " + joined + " = ::flow::rt::JoinAcrossInstances<" + out + ">(job, " + left +
           ", " + right + ", " + cx.Name(n, "join") + ", " + CppStringLiteral(Join(key_texts)) +
           ", ::flow::exec::KeyHashOf<JoinKey" + id + ">(&LeftKey" + id +
           "), ::flow::exec::KeyHashOf<JoinKey" + id + ">(&RightKey" + id + "), " + factory + ");");
  cx.Build("if (!" + joined + ".ok()) return " + joined + ".status();");
  cx.Build("auto s" + id + " = *" + joined + ";");
}

void EmitPrune(OpEmitContext& cx, const plan::PruneNode& n) {
  cx.Header(n, n.Describe());
  const std::string id = std::to_string(n.id);
  const std::string rec = cx.Rec(n.output);
  // The key is the join's, marked with its side: that side's record variable reads it.
  const std::string var = n.side == 1 ? "r" : "l";
  ExprScope scope;
  scope.record = var;
  scope.flow_file = cx.FlowFile();
  scope.sides = {"l", "r"};
  ExprEmitter ex(cx.records, scope);
  const std::string key = ex.EmitAs(*n.key, types::Type::Int());
  cx.Take(ex);
  cx.w.Line("struct PruneKey" + id + " {");
  cx.w.Line("  int64_t operator()(const " + rec + "& " + var + ") const {");
  cx.w.FlowLine(n.range.line);
  cx.w.Line("    return " + key + ";");
  cx.w.CppLine();
  cx.w.Line("  }");
  cx.w.Line("};");
  const ast::WindowSpec& w = *n.window;
  std::string size = "size" + id;
  cx.Build("const int64_t " + size + " = " + CppDuration(w.size) + ";");
  cx.Build("auto s" + id + " = s" + std::to_string(n.inputs[0]) + ".Then<" + rec + ">(" +
           cx.Name(n, "prune") + ", [" + size +
           "] { return std::make_unique<::flow::rt::RunningExtremeFilter<" + rec + ", int64_t, " +
           "PruneKey" + id + ">>(" + size + ", " + (n.max ? "true" : "false") + ", PruneKey" + id +
           "{}); });");
}

void EmitFlattenStep(OpEmitContext& cx, const plan::ChainStep& step, const std::string& var,
                     const std::string& next, const std::string& indent) {
  // sema's merged record: the left fields, then the right ones (a name the left side has gets
  // the right stream's name as prefix), in order.
  const types::Type& left = step.input.fields()[0].type;
  const types::Type& right = step.input.fields()[1].type;
  const auto& out = step.output.fields();
  if (out.size() != left.fields().size() + right.fields().size()) {
    cx.Unsupported("a join whose merged record has an unexpected shape", step.op->range);
    return;
  }
  cx.w.Line(indent + cx.Rec(step.output) + " " + next + ";");
  size_t i = 0;
  for (const types::Field& f : left.fields()) {
    cx.w.Line(indent + next + "." + MangleIdent(out[i++].name) + " = " + var + "." +
              MangleIdent(plan::kJoinPairLeft) + "." + MangleIdent(f.name) + ";");
  }
  for (const types::Field& f : right.fields()) {
    cx.w.Line(indent + next + "." + MangleIdent(out[i++].name) + " = " + var + "." +
              MangleIdent(plan::kJoinPairRight) + "." + MangleIdent(f.name) + ";");
  }
}

}  // namespace flow::codegen
