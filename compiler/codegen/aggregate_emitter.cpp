// Aggregates: a key function, an accumulator struct (one stdlib accumulator per item), an output
// builder, and the keyed operator in Build(). The accumulator reads Stamped<In> (the record and
// its time, exec/window_aggregate_adapter.h), so first/last order by event time.

#include <algorithm>
#include <filesystem>

#include "codegen/aggregate_emitter.h"
#include "codegen/escape.h"
#include "codegen/node_text.h"
#include "plan/state_schema.h"
#include "stdlib/registry/registry.h"

namespace flow::codegen {

ExprEmitter OpEmitContext::Exprs(const std::string& record, const types::Type& input) const {
  ExprScope scope;
  scope.record = record;
  scope.flow_file = std::filesystem::path(options.flow_file).filename().string();
  if (plan::IsJoinPair(input))
    scope.sides = {record + "." + MangleIdent(plan::kJoinPairLeft),
                   record + "." + MangleIdent(plan::kJoinPairRight)};
  return ExprEmitter(records, scope);
}

std::string OpEmitContext::FlowFile() const {
  return std::filesystem::path(options.flow_file).filename().string();
}

std::string OpEmitContext::Name(const plan::Node& n, const char* what) const {
  return CppStringLiteral(plan::OperatorName(n, what));
}

void OpEmitContext::Header(const plan::Node& n, const std::string& what) {
  NodeHeader(w, n, what, options.flow_file);
}

namespace {

std::string Join(const std::vector<std::string>& parts) {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? ", " : "") + parts[i];
  return s;
}

// Emits Key<id>, KeyOf<id>, Acc<id> and Output<id>; returns false on an unsupported construct.
bool EmitAggregateFunctions(OpEmitContext& cx, const plan::Node& n, const plan::Node& input,
                            const ast::KeyByOp* key, const ast::AggregateOp* agg, bool windowed) {
  Writer& w = cx.w;
  std::string id = std::to_string(n.id);
  std::string in = cx.Rec(input.output);
  std::string out = cx.Rec(n.output);
  std::vector<std::string> key_types;
  if (key != nullptr) {
    for (const auto& k : key->keys) key_types.push_back(cx.Rec(k->type));
  }
  std::string key_type = key_types.empty()       ? "bool"
                         : key_types.size() == 1 ? key_types[0]
                                                 : "std::tuple<" + Join(key_types) + ">";
  w.Line("using Key" + id + " = " + key_type + ";");
  w.Line("inline Key" + id + " KeyOf" + id + "(const " + in + "& r) {");
  if (key == nullptr) {
    w.Line("  (void)r;");
    w.Line("  return false;  // a global aggregate: one key");
  } else {
    ExprEmitter ex = cx.Exprs("r", input.output);
    std::vector<std::string> parts;
    for (const auto& k : key->keys) parts.push_back(ex.EmitAs(*k, k->type));
    w.FlowLine(key->range.line);
    w.Line("  return Key" + id + "(" + Join(parts) + ");");
    w.CppLine();
    cx.Take(ex);
  }
  w.Line("}");
  // Accumulator: one stdlib accumulator per aggregate item.
  std::string acc = "Acc" + id;
  w.Line("struct " + acc + " {");
  std::vector<std::string> adds;
  ExprEmitter ex = cx.Exprs("r", input.output);
  for (size_t i = 0; i < agg->items.size(); ++i) {
    const ast::Expr* e = agg->items[i].expr.get();
    const auto* call = ast::As<ast::CallExpr>(e);
    if (call == nullptr || call->builtin == nullptr || !call->aggregate) {
      cx.Unsupported("an aggregate item that is not a single aggregate call", e->range);
      return false;
    }
    std::vector<types::Type> arg_types;
    std::vector<std::string> arg_exprs;
    for (const auto& a : call->args) {
      arg_types.push_back(a->type);
      arg_exprs.push_back(ex.EmitAs(*a, a->type));
    }
    stdlib::CallResolution res = stdlib::ResolveCallDetailed(*call->builtin, arg_types, nullptr);
    std::string cls = stdlib::ExpandCpp(*call->builtin, arg_exprs, arg_types, cx.Rec(res.bound_t));
    std::string member = "a" + std::to_string(i);
    w.Line("  " + cls + " " + member + ";  // " + CommentText(agg->items[i].output_name));
    std::string time = call->builtin->needs_event_time ? ", ts" : "";  // first/last: by event time
    adds.push_back(call->args.empty() || call->star
                       ? member + ".Add();"
                       : member + ".Add(" + arg_exprs[0] + time + ");");
  }
  cx.Take(ex);
  w.Line("  void Add(const ::flow::exec::Stamped<" + in + ">& s) {");
  w.Line("    const " + in + "& r = *s.record;");
  w.Line("    const int64_t ts = s.ts;");
  w.Line("    (void)r;");
  w.Line("    (void)ts;");
  w.FlowLine(agg->range.line);
  for (const std::string& a : adds) w.Line("    " + a);
  w.CppLine();
  w.Line("  }");
  w.Line("  void Merge(const " + acc + "& o) {");
  if (agg->items.empty()) w.Line("    (void)o;");
  for (size_t i = 0; i < agg->items.size(); ++i)
    w.Line("    a" + std::to_string(i) + ".Merge(o.a" + std::to_string(i) + ");");
  w.Line("  }");
  w.Line("  const " + acc + "& Result() const { return *this; }");
  // Stored by name (exec/tagged.h), so a savepoint restores into a script that added or removed
  // aggregates (plan/state_schema.h).
  std::vector<std::string> tags;
  for (const ast::NamedExpr& item : agg->items) {
    const std::string tag = std::to_string(plan::AggregateTag(item.output_name)) + "u";
    if (std::find(tags.begin(), tags.end(), tag) != tags.end()) {
      cx.Unsupported("two aggregates whose names hash alike (rename one)", agg->range);
      return false;
    }
    tags.push_back(tag);
  }
  w.Line("  void Serialize(::flow::rt::BinaryWriter& w) const {");
  w.Line("    w.PutU32(" + std::to_string(agg->items.size()) + ");");
  for (size_t i = 0; i < agg->items.size(); ++i) {
    w.Line("    ::flow::exec::PutTagged(w, " + tags[i] + ", [&](::flow::rt::BinaryWriter& x) { a" +
           std::to_string(i) + ".Serialize(x); });");
  }
  w.Line("  }");
  w.Line("  ::flow::rt::Status Deserialize(::flow::rt::BinaryReader& rd) {");
  w.Line(
      "    return ::flow::exec::ReadTagged(rd, [&](uint32_t tag, ::flow::rt::BinaryReader& x) -> "
      "::flow::rt::Status {");
  w.Line("      switch (tag) {");
  for (size_t i = 0; i < agg->items.size(); ++i) {
    w.Line("        case " + tags[i] + ": return a" + std::to_string(i) + ".Deserialize(x);");
  }
  w.Line("        default: (void)x; return ::flow::rt::Status::Ok();  // a removed aggregate");
  w.Line("      }");
  w.Line("    });");
  w.Line("  }");
  w.Line("};");
  // Output: key fields, window bounds, aggregates, in the order sema gave the output type.
  const auto& fields = n.output.fields();
  size_t nkeys = key != nullptr ? key->keys.size() : 0;
  size_t nwin = windowed ? 2 : 0;
  if (fields.size() != nkeys + nwin + agg->items.size()) {
    cx.Unsupported("an aggregate output of unexpected shape", agg->range);
    return false;
  }
  std::string sig =
      windowed ? "const Key" + id +
                     "& k, ::flow::rt::TimestampMs start, ::flow::rt::TimestampMs end, const " +
                     acc + "& acc"
               : "const Key" + id + "& k, const " + acc + "& acc";
  w.Line("inline " + out + " Output" + id + "(" + sig + ") {");
  w.Line("  " + out + " o;");
  if (nkeys == 0) w.Line("  (void)k;");
  if (agg->items.empty()) w.Line("  (void)acc;");
  for (size_t i = 0; i < nkeys; ++i) {
    std::string v = nkeys == 1 ? "k" : "std::get<" + std::to_string(i) + ">(k)";
    w.Line("  o." + MangleIdent(fields[i].name) + " = ::flow::exec::ops::As<" +
           cx.Rec(fields[i].type) + ">(" + v + ");");
  }
  if (windowed) {
    w.Line("  o." + MangleIdent(fields[nkeys].name) + " = start;");
    w.Line("  o." + MangleIdent(fields[nkeys + 1].name) + " = end;");
  }
  for (size_t i = 0; i < agg->items.size(); ++i) {
    const types::Field& f = fields[nkeys + nwin + i];
    std::string m = "acc.a" + std::to_string(i);
    std::string v = f.type.nullable() ? "::flow::agg::NullableResult(" + m + ")" : m + ".Result()";
    w.Line("  o." + MangleIdent(f.name) + " = ::flow::exec::ops::As<" + cx.Rec(f.type) + ">(" + v +
           ");");
  }
  w.Line("  return o;");
  w.Line("}");
  return true;
}

// The aggregate's input stream, hash-partitioned by its key (one key for a global aggregate), as
// `s<id>_keyed`: a plain key-by in one process, a cut through a repartition topic named after
// `op` (the keyed operator's name literal) under --instance (engine/shuffle_key_by.h). Returns
// the expression of the keyed stream.
std::string Keyed(OpEmitContext& cx, const plan::Node& n, const ast::KeyByOp* key,
                  const std::string& op) {
  std::string id = std::to_string(n.id);
  std::string var = "s" + id + "_keyed";
  cx.Build("auto " + var + " = ::flow::rt::KeyByAcrossInstances(job, s" +
           std::to_string(n.inputs[0]) + ", " + op + ", " +
           CppStringLiteral(key ? Join(key->key_names) : "global") +
           ", ::flow::exec::KeyHashOf<Key" + id + ">(&KeyOf" + id + "));");
  cx.Build("if (!" + var + ".ok()) return " + var + ".status();");
  return "(*" + var + ")";
}

}  // namespace

void EmitWindowAggregate(OpEmitContext& cx, const plan::WindowAggregateNode& n,
                         const plan::Plan& plan) {
  const ast::WindowSpec& spec = n.window->spec;
  bool session = spec.shape == ast::WindowShape::kSession;
  cx.Header(n, std::string(session ? "session" : "window") + " aggregate" +
                   (spec.processing_time ? " (processing time)" : ""));
  const plan::Node& input = *plan.Get(n.inputs[0]);
  if (!EmitAggregateFunctions(cx, n, input, n.key, n.aggregate, true)) return;
  EmitSerializer(cx, input.output);  // a repartition topic carries the input (--instance)
  std::string id = std::to_string(n.id);
  std::string in = cx.Rec(input.output);
  std::string out = cx.Rec(n.output);
  std::string cfg = "cfg" + id;
  cx.Build("::flow::exec::WindowConfig " + cfg + ";");
  cx.Build(cfg + ".size = " + CppDuration(spec.size) + ";");
  if (!session) {
    cx.Build(cfg + ".slide = " + (spec.slide ? CppDuration(*spec.slide) : CppDuration(spec.size)) +
             ";");
  }
  if (spec.lateness) cx.Build(cfg + ".allowed_lateness = " + CppDuration(*spec.lateness) + ";");
  if (spec.processing_time) cx.Build(cfg + ".processing_time = true;");
  if (spec.zone) cx.Build(cfg + ".zone = " + CppZone(*spec.zone) + ";");
  std::string adapter = session ? "SessionWindowAdapter" : "WindowAggregateAdapter";
  std::string parallelism = n.key ? "" : ", 1";
  if (n.window->late_sink != nullptr) {
    // `on late into`: the window emits WithLate<Out, In>; two chained splits give its results
    // (s<id>) and its late records (s<id>_late, read by the late sink node).
    std::string with_late = "::flow::exec::WithLate<" + out + ", " + in + ">";
    std::string p = n.key ? "0" : "1";
    const std::string op = cx.Name(n, session ? "session" : "window");
    cx.Build("auto s" + id + "_all = " + Keyed(cx, n, n.key, op) + ".Then<" + with_late + ">(" +
             op + ", [" + cfg + "] { return std::make_unique<::flow::exec::" + adapter + "<Key" +
             id + ", " + in + ", Acc" + id + ", " + out + ", " + with_late + ">>(" + cfg +
             ", &KeyOf" + id + ", &Output" + id + "); }" + parallelism + ");");
    cx.Build("auto s" + id + " = ::flow::exec::WindowResults<" + out + ", " + in + ">(s" + id +
             "_all, " + cx.Name(n, session ? "session.results" : "window.results") + ", " + p +
             ");");
    cx.Build("auto s" + id + "_late = ::flow::exec::LateRecords<" + out + ", " + in + ">(s" + id +
             "_all, " + cx.Name(n, session ? "session.late" : "window.late") + ", " + p + ");");
    return;
  }
  const std::string op = cx.Name(n, session ? "session" : "window");
  cx.Build("auto s" + id + " = " + Keyed(cx, n, n.key, op) + ".Then<" + out + ">(" + op + ", [" +
           cfg + "] { return std::make_unique<::flow::exec::" + adapter + "<Key" + id + ", " + in +
           ", Acc" + id + ", " + out + ">>(" + cfg + ", &KeyOf" + id + ", &Output" + id + "); }" +
           parallelism + ");");
}

void EmitRunningAggregate(OpEmitContext& cx, const plan::RunningAggregateNode& n,
                          const plan::Plan& plan) {
  cx.Header(n, "running aggregate");
  const plan::Node& input = *plan.Get(n.inputs[0]);
  if (!EmitAggregateFunctions(cx, n, input, n.key, n.aggregate, false)) return;
  EmitSerializer(cx, input.output);  // a repartition topic carries the input (--instance)
  std::string id = std::to_string(n.id);
  std::string in = cx.Rec(input.output);
  std::string out = cx.Rec(n.output);
  std::string parallelism = n.key ? "" : ", 1";
  const std::string op = cx.Name(n, "aggregate");
  cx.Build("auto s" + id + " = " + Keyed(cx, n, n.key, op) + ".Then<" + out + ">(" + op +
           ", [] { return std::make_unique<::flow::exec::RunningAggregateAdapter<Key" + id + ", " +
           in + ", Acc" + id + ", " + out + ">>(&KeyOf" + id + ", &Output" + id + "); }" +
           parallelism + ");");
}

}  // namespace flow::codegen
