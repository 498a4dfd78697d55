// Pipelines: the record type and stream properties flowing through each operator.
#include <map>

#include "diag/suggest.h"
#include "flow/runtime/common/time_zone.h"
#include "sema/checker_impl.h"

namespace flow::sema {
namespace {

using types::Kind;
using types::Type;

// The output name of an expression without `as`: a field's own name.
std::string ImplicitName(const ast::Expr* e) {
  if (auto* n = ast::As<ast::NameExpr>(e)) return n->name;
  if (auto* f = ast::As<ast::FieldExpr>(e)) return f->field.name;
  return "";
}

// The field a select item passes on unchanged: a field named bare or through its record
// (`user_id`, `orders.user_id`, `geo.city`) without `as`; nullptr for anything else.
const types::Field* PassedField(const ast::SelectItem& si, const Type& input) {
  if (si.item.alias) return nullptr;
  if (auto* n = ast::As<ast::NameExpr>(si.item.expr.get())) return input.FindField(n->name);
  if (auto* f = ast::As<ast::FieldExpr>(si.item.expr.get()); f && f->base) {
    return f->base->type.FindField(f->field.name);
  }
  return nullptr;
}

bool SameFields(const Type& a, const Type& b, std::string* difference) {
  const auto& fa = a.fields();
  const auto& fb = b.fields();
  for (size_t i = 0; i < std::max(fa.size(), fb.size()); ++i) {
    if (i >= fa.size()) {
      *difference = "field `" + fb[i].name + "` exists only in the second";
      return false;
    }
    if (i >= fb.size()) {
      *difference = "field `" + fa[i].name + "` exists only in the first";
      return false;
    }
    if (fa[i].name != fb[i].name || fa[i].type != fb[i].type) {
      *difference = "field " + std::to_string(i + 1) + " is `" + fa[i].name + ": " +
                    fa[i].type.ToString() + "` in the first and `" + fb[i].name + ": " +
                    fb[i].type.ToString() + "` in the second";
      return false;
    }
    if (fa[i].Wire() != fb[i].Wire()) {
      *difference = "field `" + fa[i].name + "` is named " +
                    types::FlowStringLiteral(fa[i].Wire()) + " in the data of the first and " +
                    types::FlowStringLiteral(fb[i].Wire()) + " in the second";
      return false;
    }
  }
  return true;
}

void SetRecord(FlowState& st, Type record) {
  st.record = record;
  st.sides.assign(1, Side{"", record, {}});
  st.keys.clear();
  st.key_types.clear();
  st.keyed = false;
  st.window_fields = false;
}

}  // namespace

void Checker::CheckDuration(const ast::DurationRef& d, const char* what) {
  if (!d.is_param) return;
  auto it = out_.params.find(d.param);
  if (it == out_.params.end()) {
    std::vector<std::string> names;
    for (auto& [n, _] : out_.params) names.push_back(n);
    auto& r = diags_.Report(diag::Kind::kUnknownName, d.range,
                            std::string(what) +
                                " must be a duration such as `5s` or a duration param; `" +
                                d.param + "` is not a param");
    if (auto hint = DidYouMean(d.param, names)) r.Help(*hint);
    return;
  }
  if (!it->second->resolved.is_error() &&
      it->second->resolved.AsNonNullable() != Type::Duration()) {
    diags_
        .Report(diag::Kind::kTypeMismatch, d.range,
                std::string(what) + " must be a duration; param `" + d.param + "` is " +
                    it->second->resolved.ToString())
        .AddNote(it->second->name.range, "param declared here");
  }
}

void Checker::CheckZone(const ast::WindowSpec& w) {
  const ast::ZoneRef& z = *w.zone;
  if (w.shape == ast::WindowShape::kSession) {
    diags_
        .Report(diag::Kind::kInvalidArgument, z.range,
                "a session window has no boundaries to align to a time zone")
        .Help("`zone` applies to tumbling and sliding windows; remove it here");
    return;
  }
  if (!z.is_param) {
    if (!rt::IsTimeZone(z.name)) {
      auto& r = diags_.Report(diag::Kind::kInvalidArgument, z.range,
                              "unknown time zone " + types::FlowStringLiteral(z.name));
      if (auto best = diag::ClosestMatch(z.name, rt::ZoneNames())) {
        r.Help("did you mean " + types::FlowStringLiteral(*best) + "?");
      } else {
        r.Help(
            "use a name of the IANA time zone database, such as \"Europe/Berlin\", "
            "\"America/New_York\" or \"UTC\"");
      }
    }
    return;
  }
  auto it = out_.params.find(z.param);
  if (it == out_.params.end()) {
    std::vector<std::string> names;
    for (auto& [n, _] : out_.params) names.push_back(n);
    auto& r = diags_.Report(diag::Kind::kUnknownName, z.range,
                            "a window's zone must be a string such as \"Europe/Berlin\" or a "
                            "string param; `" +
                                z.param + "` is not a param");
    if (auto hint = DidYouMean(z.param, names)) r.Help(*hint);
    return;
  }
  if (!it->second->resolved.is_error() && it->second->resolved.AsNonNullable() != Type::String()) {
    diags_
        .Report(diag::Kind::kTypeMismatch, z.range,
                "a window's zone must be a string; param `" + z.param + "` is " +
                    it->second->resolved.ToString())
        .AddNote(it->second->name.range, "param declared here");
  }
}

void Checker::CheckWindowSpec(const ast::WindowSpec& w, const FlowState& st,
                              const diag::SourceRange& at) {
  CheckDuration(w.size, w.shape == ast::WindowShape::kSession ? "a session gap" : "a window size");
  if (!w.size.is_param && w.size.millis <= 0 && w.size.range.valid()) {
    diags_.Report(diag::Kind::kInvalidArgument, w.size.range,
                  "a window size must be greater than zero");
  }
  if (w.slide) {
    CheckDuration(*w.slide, "a window slide");
    if (!w.slide->is_param && w.slide->millis <= 0 && w.slide->range.valid()) {
      diags_.Report(diag::Kind::kInvalidArgument, w.slide->range,
                    "`every` must be greater than zero");
    } else if (!w.slide->is_param && !w.size.is_param && w.slide->millis > w.size.millis) {
      diags_
          .Report(diag::Kind::kInvalidArgument, w.slide->range,
                  "a sliding window cannot slide by more than its size")
          .AddNote(w.size.range, "the window size");
    }
  }
  if (w.zone) CheckZone(w);
  if (w.lateness) CheckDuration(*w.lateness, "allowed lateness");
  if (!w.processing_time && !st.event_time && !st.broken) {
    diags_
        .Report(diag::Kind::kWindowNeedsTime, at,
                "this window needs event time, but the stream has none")
        .Help(
            "add `event time <field> watermark 5s` to the source, or write `processing time` after "
            "the window");
  }
}

FlowState Checker::CheckHead(ast::Pipeline& p, const ast::StreamDecl* self) {
  FlowState st;
  if (p.source) {
    bool event_time = false;
    Type record = CheckSource(*p.source, &event_time);
    SetRecord(st, record);
    st.event_time = event_time;
    st.broken = record.is_error();
  } else if (p.head) {
    const StreamInfo* info = UseStream(*p.head, self);
    Type record = info ? info->record : Type::Error();
    SetRecord(st, record);
    st.sides[0].name = p.head->name;
    if (info) st.sides[0].declared = info->decl->name.range;
    st.event_time = info && info->event_time;
    st.broken = record.is_error();
  } else {
    st.broken = true;
  }
  return st;
}

FlowState Checker::CheckPipeline(ast::Pipeline& p, bool is_stream, const ast::StreamDecl* self) {
  current_stream_ = self;
  FlowState st = CheckHead(p, self);
  bool after_sink_reported = false;
  const ast::IntoOp* sink = nullptr;
  for (size_t i = 0; i < p.ops.size(); ++i) {
    ast::Op& op = *p.ops[i];
    if (sink && !after_sink_reported) {
      diags_
          .Report(diag::Kind::kOperatorAfterSink, op.keyword_range,
                  "nothing can follow `into`; the pipeline ends at its sink")
          .AddNote(sink->keyword_range, "the sink");
      after_sink_reported = true;
    }
    if (st.window && op.kind != ast::OpKind::kAggregate) {
      diags_
          .Report(diag::Kind::kWindowWithoutAggregate, st.window->keyword_range,
                  "`window` must be followed directly by `aggregate`")
          .AddNote(op.keyword_range, "found this instead");
      st.window = nullptr;
    }
    CheckOp(op, st, i + 1 == p.ops.size(), is_stream);
    if (auto* into = ast::As<ast::IntoOp>(&op)) sink = into;
    op.output = st.broken ? Type::Error() : st.record;
  }
  if (st.window) {
    diags_
        .Report(diag::Kind::kWindowWithoutAggregate, st.window->keyword_range,
                "`window` must be followed by `aggregate`")
        .Help("add e.g. `| aggregate count() as n`");
  }
  if (!is_stream && sink == nullptr) {
    diag::SourceRange at = p.ops.empty() ? p.range : p.ops.back()->range;
    diags_.Report(diag::Kind::kPipelineWithoutSink, at, "this pipeline does not write anywhere")
        .Help(p.head && p.ops.empty()
                  ? "write it with `" + p.head->name +
                        " | into stdout() format json`, or name it: `stream x = ...`"
                  : "end it with `| into ...`, or name it: `stream x = ...`");
  }
  p.output = st.broken ? Type::Error() : st.record;
  current_stream_ = nullptr;
  return st;
}

void Checker::CheckOp(ast::Op& op, FlowState& st, bool is_last, bool is_stream) {
  ExprContext cx;
  cx.state = &st;
  switch (op.kind) {
    case ast::OpKind::kWhere: {
      auto& w = static_cast<ast::WhereOp&>(op);
      cx.where = "in `where`";
      Type t = CheckExpr(*w.condition, cx);
      RequireBool(t, w.condition->range, "a `where` condition");
      break;
    }
    case ast::OpKind::kKeyBy: {
      auto& k = static_cast<ast::KeyByOp&>(op);
      std::vector<std::string> names;
      std::vector<Type> types;
      for (size_t i = 0; i < k.keys.size(); ++i) {
        Type t = CheckExpr(*k.keys[i], cx);
        if (t.kind() == Kind::kList || t.kind() == Kind::kRecord) {
          diags_
              .Report(diag::Kind::kInvalidKeyType, k.keys[i]->range,
                      "a key cannot be of type " + t.ToString())
              .Help("key by a scalar value: string, int, bool, timestamp, ...");
          t = Type::Error();
        }
        std::string n = ImplicitName(k.keys[i].get());
        if (n.empty()) n = k.keys.size() == 1 ? "key" : "key" + std::to_string(i + 1);
        names.push_back(n);
        types.push_back(t);
      }
      k.key_names = names;
      st.keys = names;
      st.key_types = types;
      st.keyed = true;
      break;
    }
    case ast::OpKind::kWindow: {
      auto& w = static_cast<ast::WindowOp&>(op);
      CheckWindowSpec(w.spec, st, w.range);
      if (w.late_sink) CheckLateSink(w, st);
      st.window = &w;
      break;
    }
    case ast::OpKind::kAggregate:
      CheckAggregate(static_cast<ast::AggregateOp&>(op), st);
      break;
    case ast::OpKind::kSelect:
      CheckSelect(static_cast<ast::SelectOp&>(op), st);
      break;
    case ast::OpKind::kExplode: {
      auto& x = static_cast<ast::ExplodeOp&>(op);
      Type t = CheckExpr(*x.list, cx);
      if (!t.is_error() && t.kind() != Kind::kList) {
        diags_.Report(diag::Kind::kExplodeNotList, x.list->range,
                      "`explode` needs a list, found " + t.ToString());
        t = Type::Error();
      }
      if (st.broken) break;
      std::vector<types::Field> fields =
          st.record.kind() == Kind::kRecord ? st.record.fields() : std::vector<types::Field>{};
      for (const types::Field& f : fields) {
        if (f.name == x.alias.name) {
          diags_
              .Report(diag::Kind::kDuplicateField, x.alias.range,
                      "the record already has a field `" + x.alias.name + "`")
              .Help("choose another name after `as`");
          t = Type::Error();
        }
      }
      fields.push_back({x.alias.name, t.is_error() ? t : t.element().AsNonNullable()});
      bool event_time = st.event_time;
      SetRecord(st, Type::Record("", std::move(fields)));
      st.event_time = event_time;
      break;
    }
    case ast::OpKind::kUnion:
      CheckUnion(static_cast<ast::UnionOp&>(op), st);
      break;
    case ast::OpKind::kJoin:
      CheckJoin(static_cast<ast::JoinOp&>(op), st);
      break;
    case ast::OpKind::kInto: {
      auto& into = static_cast<ast::IntoOp&>(op);
      if (is_stream) {
        diags_
            .Report(diag::Kind::kSinkInStream, into.keyword_range,
                    "a `stream` definition cannot end in a sink")
            .Help("define the stream, then write it in its own statement: `name | into ...`");
      }
      CheckSink(into, st.broken ? Type::Error() : st.record);
      break;
    }
  }
  (void)is_last;
}

void Checker::CheckAggregate(ast::AggregateOp& op, FlowState& st) {
  op.windowed = st.window != nullptr;
  st.window = nullptr;
  ExprContext cx;
  cx.state = &st;
  cx.aggregates_allowed = true;
  cx.where = "in `aggregate`";
  std::vector<types::Field> fields;
  std::map<std::string, diag::SourceRange> seen;
  for (size_t i = 0; i < st.keys.size(); ++i) {
    fields.push_back({st.keys[i], i < st.key_types.size() ? st.key_types[i] : Type::Error()});
    seen[st.keys[i]] = op.keyword_range;
  }
  if (op.windowed) {
    fields.push_back({"window_start", Type::Timestamp()});
    fields.push_back({"window_end", Type::Timestamp()});
    seen["window_start"] = seen["window_end"] = op.keyword_range;
  }
  for (ast::NamedExpr& item : op.items) {
    Type t = CheckExpr(*item.expr, cx);
    std::string name = item.alias ? item.alias->name : ImplicitName(item.expr.get());
    diag::SourceRange at = item.alias ? item.alias->range : item.expr->range;
    if (name.empty()) {
      auto* call = ast::As<ast::CallExpr>(item.expr.get());
      diags_.Report(diag::Kind::kSelectNeedsName, item.expr->range, "this aggregate needs a name")
          .Help("add `as name`, e.g. `" + (call ? call->name.name : std::string("count")) +
                "(...) as " + (call ? call->name.name : std::string("n")) + "`");
      continue;
    }
    item.output_name = name;
    if (auto it = seen.find(name); it != seen.end()) {
      diags_
          .Report(diag::Kind::kDuplicateField, at, "the output already has a field `" + name + "`")
          .AddNote(it->second, "`" + name + "` comes from here");
      continue;
    }
    seen[name] = at;
    fields.push_back({name, t});
  }
  bool event_time = st.event_time;
  bool broken = st.broken;
  SetRecord(st, Type::Record("", std::move(fields)));
  st.event_time = event_time;
  st.broken = broken;
}

void Checker::CheckSelect(ast::SelectOp& op, FlowState& st) {
  ExprContext cx;
  cx.state = &st;
  cx.where = "in `select`";
  std::vector<types::Field> fields;
  std::map<std::string, diag::SourceRange> seen, seen_wire;
  // A field selected as is (`*`, or its bare name) keeps its wire name; any other column is
  // named in the data as in scripts.
  auto add = [&](types::Field field, const diag::SourceRange& at) {
    const std::string& name = field.name;
    if (auto it = seen.find(name); it != seen.end()) {
      diags_
          .Report(diag::Kind::kDuplicateField, at, "the output already has a field `" + name + "`")
          .AddNote(it->second, "`" + name + "` first selected here")
          .Help("rename one with `as`");
      return;
    }
    if (auto it = seen_wire.find(field.Wire()); it != seen_wire.end()) {
      diags_
          .Report(diag::Kind::kDuplicateField, at,
                  "the output already has a field named " + types::FlowStringLiteral(field.Wire()) +
                      " in the data")
          .AddNote(it->second, "that field is selected here")
          .Help("rename one with `as`");
      return;
    }
    seen[name] = at;
    seen_wire[field.Wire()] = at;
    fields.push_back(std::move(field));
  };
  for (ast::SelectItem& si : op.items) {
    if (si.star) {
      if (st.record.kind() == Kind::kRecord) {
        for (const types::Field& f : st.record.fields()) add(f, si.star_range);
      }
      continue;
    }
    Type t = CheckExpr(*si.item.expr, cx);
    std::string name = si.item.alias ? si.item.alias->name : ImplicitName(si.item.expr.get());
    if (name.empty()) {
      diags_
          .Report(diag::Kind::kSelectNeedsName, si.item.expr->range,
                  "a computed column needs a name")
          .Help("add `as name` after the expression");
      continue;
    }
    si.item.output_name = name;
    if (t.kind() == Kind::kNull) {
      diags_
          .Report(diag::Kind::kTypeMismatch, si.item.expr->range,
                  "the type of a bare `null` column cannot be inferred")
          .Help("give it a type: `cast(null as string?)`");
      t = Type::Error();
    }
    types::Field field{name, t};
    if (const types::Field* in = PassedField(si, st.record)) field.wire_name = in->wire_name;
    add(std::move(field), si.item.alias ? si.item.alias->range : si.item.expr->range);
  }
  bool event_time = st.event_time;
  bool broken = st.broken;
  SetRecord(st, Type::Record("", std::move(fields)));
  st.event_time = event_time;
  st.broken = broken;
}

void Checker::CheckUnion(ast::UnionOp& op, FlowState& st) {
  for (const ast::Ident& name : op.streams) {
    const StreamInfo* info = UseStream(name, current_stream_);
    if (info == nullptr || info->record.is_error() || st.broken) continue;
    std::string difference;
    if (st.record.kind() == Kind::kRecord && !SameFields(st.record, info->record, &difference)) {
      diags_
          .Report(diag::Kind::kUnionSchemaMismatch, name.range,
                  "cannot union streams with different records: " + difference)
          .AddNote(info->decl->name.range, "`" + name.name + "` is " + info->record.ToString())
          .Help("`select` the same fields with the same types on both sides first");
    }
    st.event_time = st.event_time && info->event_time;
  }
  Type record = st.record;
  bool event_time = st.event_time;
  bool broken = st.broken;
  SetRecord(st, record);
  st.event_time = event_time;
  st.broken = broken;
}

void Checker::CheckJoin(ast::JoinOp& op, FlowState& st) {
  const StreamInfo* right = UseStream(op.right, current_stream_);
  Side left = st.sides.size() == 1 ? st.sides[0] : Side{"", st.record, {}};
  left.record = st.record;
  op.left_name = left.name;
  if (!left.name.empty() && left.name == op.right.name) {
    diags_
        .Report(diag::Kind::kJoinCondition, op.right.range,
                "a stream cannot be joined with itself by name")
        .Help("define a second stream (`stream other = " + left.name + "`) and join with that");
  }
  Side r{op.right.name, right ? right->record : Type::Error(),
         right ? right->decl->name.range : diag::SourceRange{}};
  FlowState joined;
  joined.sides = {left, r};
  joined.broken = st.broken || r.record.is_error();
  joined.event_time = st.event_time && right && right->event_time;
  joined.window_fields = op.window.has_value();
  ExprContext cx;
  cx.state = &joined;
  cx.where = "in a join condition";
  Type t = CheckExpr(*op.condition, cx);
  RequireBool(t, op.condition->range, "a join condition");
  // Must be `l == r [and l == r ...]` with one side of each equality on each input.
  if (!t.is_error() && !joined.broken) {
    std::vector<const ast::Expr*> work = {op.condition.get()};
    while (!work.empty()) {
      const ast::Expr* e = work.back();
      work.pop_back();
      auto* b = ast::As<ast::BinaryExpr>(e);
      if (b && b->op == ast::BinaryOp::kAnd) {
        work.push_back(b->lhs.get());
        work.push_back(b->rhs.get());
        continue;
      }
      unsigned l = b ? ast::JoinSidesRead(b->lhs.get()) : 0,
               rr = b ? ast::JoinSidesRead(b->rhs.get()) : 0;
      if (!b || b->op != ast::BinaryOp::kEq || !((l == 1 && rr == 2) || (l == 2 && rr == 1))) {
        diags_
            .Report(diag::Kind::kJoinCondition, e->range,
                    "a join condition must compare the two streams for equality, like `" +
                        (left.name.empty() ? std::string("x") : left.name) +
                        ".k == " + op.right.name + ".k`")
            .Help(
                "join on keys with `==` (combine several with `and`); filter other conditions with "
                "`where` after the join");
        break;
      }
    }
  }
  if (op.within) {
    CheckDuration(*op.within, "a join bound");
    if (!joined.event_time && !joined.broken) {
      diags_
          .Report(diag::Kind::kJoinNeedsTime, op.keyword_range,
                  "an interval join (`within`) needs event time on both streams")
          .Help("add `event time <field> watermark ...` to the sources of both streams");
    }
  } else if (op.window) {
    CheckWindowSpec(*op.window, joined, op.window->range);
  }
  // Merged record: left fields, then right fields; a right field whose name (in scripts or in the
  // data) is taken gets the right stream's name as prefix.
  std::vector<types::Field> fields;
  if (!joined.broken && left.record.kind() == Kind::kRecord && r.record.kind() == Kind::kRecord) {
    fields = left.record.fields();
    auto wire_taken = [&](const std::string& wire) {
      for (const types::Field& l : left.record.fields())
        if (l.Wire() == wire) return true;
      return false;
    };
    for (const types::Field& f : r.record.fields()) {
      // A prefixed field is a new name in the data too.
      if (left.record.FindField(f.name) != nullptr || wire_taken(f.Wire())) {
        fields.push_back({op.right.name + "_" + f.name, f.type});
      } else {
        fields.push_back(f);
      }
    }
  }
  joined.record = joined.broken ? Type::Error() : Type::Record("", std::move(fields));
  st = joined;
}

}  // namespace flow::sema
