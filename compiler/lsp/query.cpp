#include "lsp/query.h"

#include <algorithm>
#include <map>

#include "sema/connectors.h"

namespace flow::lsp {
namespace {

using types::Type;

const char* OperatorName(ast::OpKind k) {
  switch (k) {
    case ast::OpKind::kWhere:
      return "where";
    case ast::OpKind::kKeyBy:
      return "key by";
    case ast::OpKind::kWindow:
      return "window";
    case ast::OpKind::kAggregate:
      return "aggregate";
    case ast::OpKind::kSelect:
      return "select";
    case ast::OpKind::kExplode:
      return "explode";
    case ast::OpKind::kUnion:
      return "union";
    case ast::OpKind::kJoin:
      return "join";
    case ast::OpKind::kInto:
      return "into";
  }
  return "";
}

class Collector {
 public:
  explicit Collector(const sema::CheckedProgram& p) : p_(p) {}

  std::vector<Occurrence> Run() {
    for (const ast::DeclPtr& d : p_.program.decls) Decl(*d);
    return std::move(out_);
  }

 private:
  Occurrence& Add(SymbolKind kind, const std::string& name, const diag::SourceRange& r, Type type) {
    Occurrence o;
    o.kind = kind;
    o.name = name;
    o.begin = r.begin;
    o.end = std::max(r.begin, r.end);
    o.type = std::move(type);
    out_.push_back(std::move(o));
    return out_.back();
  }

  // The declaration of field `name` when `record` is a named schema's record.
  std::optional<diag::SourceRange> SchemaFieldDef(const Type& record, const std::string& name) {
    if (record.kind() != types::Kind::kRecord || record.record_name().empty()) return std::nullopt;
    auto it = p_.schemas.find(record.record_name());
    if (it == p_.schemas.end()) return std::nullopt;
    for (const ast::FieldDecl& f : it->second->fields) {
      if (f.name.name == name) return f.name.range;
    }
    return std::nullopt;
  }

  void Decl(const ast::Decl& d) {
    if (auto* param = ast::As<ast::ParamDecl>(&d)) {
      Occurrence& o = Add(SymbolKind::kParam, param->name.name, param->name.range, param->resolved);
      o.definition = param->name.range;
      o.is_declaration = true;
      TypeReference(param->type);
      if (param->default_value) Expr(param->default_value.get(), Type::Error());
    } else if (auto* schema = ast::As<ast::SchemaDecl>(&d)) {
      Occurrence& o =
          Add(SymbolKind::kSchema, schema->name.name, schema->name.range, schema->resolved);
      o.definition = schema->name.range;
      o.is_declaration = true;
      for (const ast::FieldDecl& f : schema->fields) {
        const types::Field* rf = schema->resolved.kind() == types::Kind::kRecord
                                     ? schema->resolved.FindField(f.name.name)
                                     : nullptr;
        Occurrence& fo =
            Add(SymbolKind::kSchemaField, f.name.name, f.name.range, rf ? rf->type : Type::Error());
        fo.owner = schema->name.name;
        if (rf != nullptr) fo.wire_name = rf->wire_name;
        fo.definition = f.name.range;
        fo.is_declaration = true;
        TypeReference(f.type);
      }
    } else if (auto* fn = ast::As<ast::ExternFnDecl>(&d)) {
      Occurrence& o = Add(SymbolKind::kExternFn, fn->name.name, fn->name.range, fn->return_type);
      o.extern_fn = fn;
      o.definition = fn->name.range;
      o.is_declaration = true;
      for (const ast::FnParam& prm : fn->params) TypeReference(prm.type);
      TypeReference(fn->returns);
    } else if (auto* stream = ast::As<ast::StreamDecl>(&d)) {
      auto it = p_.streams.find(stream->name.name);
      Type record =
          it != p_.streams.end() && it->second.decl == stream ? it->second.record : Type::Error();
      Occurrence& o = Add(SymbolKind::kStream, stream->name.name, stream->name.range, record);
      o.definition = stream->name.range;
      o.is_declaration = true;
      stream_defs_[stream->name.name] = Pipeline(stream->pipeline);
    } else if (auto* stmt = ast::As<ast::PipelineStmt>(&d)) {
      (void)Pipeline(stmt->pipeline);
    }
  }

  void TypeReference(const ast::TypeRef& t) {
    auto it = p_.schemas.find(t.name.name);
    if (it != p_.schemas.end()) {
      Add(SymbolKind::kSchema, t.name.name, t.name.range, it->second->resolved).definition =
          it->second->name.range;
    }
    if (t.arg) TypeReference(*t.arg);
  }

  void Duration(const ast::DurationRef& d) {
    if (d.is_param) Param(d.param, d.range);
  }
  void Param(const std::string& name, const diag::SourceRange& range) {
    auto it = p_.params.find(name);
    if (it == p_.params.end()) return;
    Add(SymbolKind::kParam, name, range, it->second->resolved).definition = it->second->name.range;
  }

  void StreamReference(const ast::Ident& id) {
    auto it = p_.streams.find(id.name);
    if (it == p_.streams.end() || it->second.decl == nullptr) return;
    Add(SymbolKind::kStream, id.name, id.range, it->second.record).definition =
        it->second.decl->name.range;
  }

  void Connector(const ast::ConnectorCall& c, bool source) {
    Add(SymbolKind::kConnector, c.name.name, c.name.range, Type::Error()).owner =
        source ? "source" : "sink";
    Args(c.args);
  }

  void Format(const std::optional<ast::FormatClause>& f) {
    if (!f) return;
    Add(SymbolKind::kFormat, f->name.name, f->name.range, Type::Error());
    Args(f->args);
  }

  void Args(const std::vector<ast::NamedArg>& args) {
    for (const ast::NamedArg& a : args) Expr(a.value.get(), Type::Error());
  }

  void Window(const ast::WindowSpec& w) {
    Duration(w.size);
    if (w.slide) Duration(*w.slide);
    if (w.zone && w.zone->is_param) Param(w.zone->param, w.zone->range);
    if (w.lateness) Duration(*w.lateness);
  }

  void Items(const std::vector<const ast::NamedExpr*>& items, const Type& input,
             const Type& output) {
    for (const ast::NamedExpr* item : items) {
      Expr(item->expr.get(), input);
      if (item->alias) {
        const types::Field* f =
            output.kind() == types::Kind::kRecord ? output.FindField(item->alias->name) : nullptr;
        Type t = f ? f->type : (item->expr ? item->expr->type : Type::Error());
        Occurrence& o = Add(SymbolKind::kField, item->alias->name, item->alias->range, t);
        o.definition = item->alias->range;
        o.is_declaration = true;
      }
    }
  }

  // Where each field of a record was introduced (a schema field, a select/aggregate alias, an
  // explode alias), followed through the pipeline so a use can jump to it.
  using FieldDefs = std::map<std::string, diag::SourceRange>;

  FieldDefs HeadDefs(const ast::Pipeline& pl) {
    FieldDefs defs;
    if (pl.head) {
      auto it = stream_defs_.find(pl.head->name);
      if (it != stream_defs_.end()) defs = it->second;
    } else if (pl.source && pl.source->schema) {
      auto it = p_.schemas.find(pl.source->schema->name);
      if (it != p_.schemas.end()) {
        for (const ast::FieldDecl& f : it->second->fields) defs.emplace(f.name.name, f.name.range);
      }
    }
    return defs;
  }

  // The definitions of a select's or aggregate's output: aliases, and plain fields (and `*`)
  // passed through from the input.
  FieldDefs ProjectDefs(const std::vector<const ast::NamedExpr*>& items, bool star,
                        bool keep_keys) {
    FieldDefs out;
    if (star || keep_keys) out = defs_;
    for (const ast::NamedExpr* item : items) {
      if (item->alias) {
        out[item->alias->name] = item->alias->range;
        continue;
      }
      std::string name;
      if (auto* n = ast::As<ast::NameExpr>(item->expr.get())) name = n->name;
      if (auto* f = ast::As<ast::FieldExpr>(item->expr.get())) name = f->field.name;
      auto it = defs_.find(name);
      if (!name.empty() && it != defs_.end()) out[name] = it->second;
    }
    return out;
  }

  FieldDefs Pipeline(const ast::Pipeline& pl) {
    Type input = HeadRecord(p_, pl);
    defs_ = HeadDefs(pl);
    if (pl.source) {
      const ast::Source& s = *pl.source;
      Connector(s.connector, /*source=*/true);
      Format(s.format);
      if (s.schema) {
        auto it = p_.schemas.find(s.schema->name);
        if (it != p_.schemas.end()) {
          Add(SymbolKind::kSchema, s.schema->name, s.schema->range, it->second->resolved)
              .definition = it->second->name.range;
        }
      }
      if (s.event_time) {
        Expr(s.event_time->expr.get(), input);
        Duration(s.event_time->watermark);
        if (s.event_time->idle) Duration(*s.event_time->idle);
      }
      if (s.on_error && s.on_error->sink) {
        Connector(*s.on_error->sink, /*source=*/false);
        Format(s.on_error->format);
      }
    }
    if (pl.head) StreamReference(*pl.head);
    for (const ast::OpPtr& op : pl.ops) {
      Occurrence& k =
          Add(SymbolKind::kOperator, OperatorName(op->kind), op->keyword_range, op->output);
      (void)k;
      switch (op->kind) {
        case ast::OpKind::kWhere:
          Expr(static_cast<const ast::WhereOp&>(*op).condition.get(), input);
          break;
        case ast::OpKind::kKeyBy:
          for (const ast::ExprPtr& e : static_cast<const ast::KeyByOp&>(*op).keys)
            Expr(e.get(), input);
          break;
        case ast::OpKind::kWindow:
          Window(static_cast<const ast::WindowOp&>(*op).spec);
          break;
        case ast::OpKind::kAggregate: {
          std::vector<const ast::NamedExpr*> items;
          for (const ast::NamedExpr& i : static_cast<const ast::AggregateOp&>(*op).items)
            items.push_back(&i);
          Items(items, input, op->output);
          FieldDefs next = ProjectDefs(items, false, /*keep_keys=*/true);
          defs_ = std::move(next);
          break;
        }
        case ast::OpKind::kSelect: {
          std::vector<const ast::NamedExpr*> items;
          bool star = false;
          for (const ast::SelectItem& i : static_cast<const ast::SelectOp&>(*op).items) {
            if (!i.star) items.push_back(&i.item);
            star |= i.star;
          }
          Items(items, input, op->output);
          FieldDefs next = ProjectDefs(items, star, false);
          defs_ = std::move(next);
          break;
        }
        case ast::OpKind::kExplode: {
          const auto& ex = static_cast<const ast::ExplodeOp&>(*op);
          Expr(ex.list.get(), input);
          const types::Field* f = op->output.kind() == types::Kind::kRecord
                                      ? op->output.FindField(ex.alias.name)
                                      : nullptr;
          Occurrence& o =
              Add(SymbolKind::kField, ex.alias.name, ex.alias.range, f ? f->type : Type::Error());
          o.definition = ex.alias.range;
          o.is_declaration = true;
          defs_[ex.alias.name] = ex.alias.range;
          break;
        }
        case ast::OpKind::kUnion:
          for (const ast::Ident& s : static_cast<const ast::UnionOp&>(*op).streams)
            StreamReference(s);
          break;
        case ast::OpKind::kJoin: {
          const auto& j = static_cast<const ast::JoinOp&>(*op);
          StreamReference(j.right);
          if (auto it = stream_defs_.find(j.right.name); it != stream_defs_.end()) {
            defs_.insert(it->second.begin(), it->second.end());  // the left side wins on a clash
          }
          Expr(j.condition.get(), op->output);
          if (j.within) Duration(*j.within);
          if (j.window) Window(*j.window);
          break;
        }
        case ast::OpKind::kInto: {
          const auto& into = static_cast<const ast::IntoOp&>(*op);
          Connector(into.sink, /*source=*/false);
          Format(into.format);
          break;
        }
      }
      input = op->output;
    }
    // Fields whose name left the record (not in the output type) have no definition any more.
    FieldDefs out;
    for (auto& [name, range] : defs_) {
      if (input.kind() == types::Kind::kRecord && input.FindField(name)) out.emplace(name, range);
    }
    return out;
  }

  void Expr(const ast::Expr* e, const Type& input) {
    if (e == nullptr) return;
    switch (e->kind) {
      case ast::ExprKind::kError:
      case ast::ExprKind::kLiteral:
        return;
      case ast::ExprKind::kName: {
        const auto& n = static_cast<const ast::NameExpr&>(*e);
        if (n.target == ast::NameTarget::kField) {
          Occurrence& o = Add(SymbolKind::kField, n.name, n.range, n.type);
          if (input.kind() == types::Kind::kRecord) {
            o.owner = input.record_name();
            if (const types::Field* in = input.FindField(n.name)) o.wire_name = in->wire_name;
          }
          o.definition = SchemaFieldDef(input, n.name);
          if (!o.definition) {
            auto it = defs_.find(n.name);
            if (it != defs_.end()) o.definition = it->second;
          }
        } else if (n.target == ast::NameTarget::kWindowField) {
          Add(SymbolKind::kField, n.name, n.range, n.type).owner = "window";
        } else if (n.target == ast::NameTarget::kParam) {
          auto it = p_.params.find(n.name);
          if (it != p_.params.end()) {
            Add(SymbolKind::kParam, n.name, n.range, it->second->resolved).definition =
                it->second->name.range;
          }
        } else if (n.target == ast::NameTarget::kJoinSide) {
          ast::Ident id{n.name, n.range};
          StreamReference(id);
        }
        return;
      }
      case ast::ExprKind::kField: {
        const auto& f = static_cast<const ast::FieldExpr&>(*e);
        Expr(f.base.get(), input);
        Type base = f.base ? f.base->type : Type::Error();
        Occurrence& o = Add(SymbolKind::kField, f.field.name, f.field.range, f.type);
        if (base.kind() == types::Kind::kRecord) {
          o.owner = base.record_name();
          if (const types::Field* in = base.FindField(f.field.name)) o.wire_name = in->wire_name;
          o.definition = SchemaFieldDef(base, f.field.name);
        }
        if (auto* qualifier = ast::As<ast::NameExpr>(f.base.get());
            qualifier && qualifier->target == ast::NameTarget::kJoinSide) {
          o.owner = qualifier->name;
          auto side = stream_defs_.find(qualifier->name);
          if (!o.definition && side != stream_defs_.end()) {
            auto it = side->second.find(f.field.name);
            if (it != side->second.end()) o.definition = it->second;
          }
        }
        return;
      }
      case ast::ExprKind::kCall: {
        const auto& c = static_cast<const ast::CallExpr&>(*e);
        if (c.builtin) {
          Occurrence& o = Add(SymbolKind::kFunction, c.name.name, c.name.range, c.type);
          o.function = c.builtin;
        } else if (c.extern_fn) {
          Occurrence& o = Add(SymbolKind::kExternFn, c.name.name, c.name.range, c.type);
          o.extern_fn = c.extern_fn;
          o.definition = c.extern_fn->name.range;
        }
        break;
      }
      default:
        break;
    }
    // Operands in source order; a cast's target type comes after its operand.
    ast::ForEachChild(*e, [&](const ast::Expr& child) { Expr(&child, input); });
    if (const auto* c = ast::As<ast::CastExpr>(e)) TypeReference(c->target);
  }

  const sema::CheckedProgram& p_;
  std::vector<Occurrence> out_;
  std::map<std::string, FieldDefs> stream_defs_;  // each stream's output fields
  FieldDefs defs_;                                // the fields flowing at the current point
};

// The pipeline of a top-level statement, or null for declarations.
const ast::Pipeline* PipelineOf(const ast::Decl& d) {
  if (auto* s = ast::As<ast::StreamDecl>(&d)) return &s->pipeline;
  if (auto* p = ast::As<ast::PipelineStmt>(&d)) return &p->pipeline;
  return nullptr;
}

}  // namespace

std::vector<Occurrence> CollectOccurrences(const sema::CheckedProgram& program) {
  return Collector(program).Run();
}

const Occurrence* FindOccurrence(const std::vector<Occurrence>& occurrences, uint32_t offset) {
  const Occurrence* best = nullptr;
  for (const Occurrence& o : occurrences) {
    if (o.begin > offset || offset > o.end) continue;
    // Innermost wins; on equal size the later one (a field over the operator holding it).
    if (best == nullptr || o.end - o.begin <= best->end - best->begin) best = &o;
  }
  return best;
}

types::Type HeadRecord(const sema::CheckedProgram& program, const ast::Pipeline& pipeline) {
  if (pipeline.head) {
    auto it = program.streams.find(pipeline.head->name);
    return it != program.streams.end() ? it->second.record : Type::Error();
  }
  if (!pipeline.source) return Type::Error();
  const ast::Source& s = *pipeline.source;
  if (s.schema) {
    auto it = program.schemas.find(s.schema->name);
    return it != program.schemas.end() ? it->second->resolved : Type::Error();
  }
  if (s.connector.name.name == "nexmark") {
    for (const ast::NamedArg& a : s.connector.args) {
      if (a.name.name != "kind" || !a.value) continue;
      if (auto* lit = ast::As<ast::LiteralExpr>(a.value.get());
          lit && lit->literal == ast::LiteralKind::kString) {
        return sema::NexmarkRecord(lit->string_value);
      }
      if (auto* name = ast::As<ast::NameExpr>(a.value.get()))
        return sema::NexmarkRecord(name->name);
    }
  }
  return Type::Error();
}

types::Type RecordAt(const sema::CheckedProgram& program, uint32_t offset, std::string_view text) {
  const ast::Pipeline* pipeline = nullptr;
  for (const ast::DeclPtr& d : program.program.decls) {
    if (d->range.begin > offset) break;
    pipeline = PipelineOf(*d);
  }
  if (pipeline == nullptr) return Type::Error();
  Type input = HeadRecord(program, *pipeline);
  for (const ast::OpPtr& op : pipeline->ops) {
    if (op->range.begin >= offset) break;
    // A `|` between this operator's end and the cursor starts a new operator: it reads this one's
    // output. Otherwise the cursor is inside this operator, which reads `input`.
    size_t from = std::min<size_t>(op->range.end, text.size());
    size_t to = std::min<size_t>(offset, text.size());
    bool after = from < to && text.substr(from, to - from).find('|') != std::string_view::npos;
    if (!after) return input;
    input = op->output;
  }
  return input;
}

}  // namespace flow::lsp
