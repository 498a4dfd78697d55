// Top-level declarations: names, schemas, params, extern functions, stream order and use.
#include <set>

#include "sema/checker_impl.h"
#include "stdlib/registry/registry.h"

namespace flow::sema {
namespace {

const std::vector<std::string>& PrimitiveNames() {
  static const std::vector<std::string> names = {"bool",  "int",       "float",    "string",
                                                 "bytes", "timestamp", "duration", "list"};
  return names;
}

// Names of streams a pipeline reads, with where they are read.
void StreamRefs(const ast::Pipeline& p, std::vector<const ast::Ident*>* out) {
  if (p.head) out->push_back(&*p.head);
  for (const ast::OpPtr& op : p.ops) {
    if (auto* u = ast::As<ast::UnionOp>(op.get())) {
      for (const ast::Ident& s : u->streams) out->push_back(&s);
    } else if (auto* j = ast::As<ast::JoinOp>(op.get())) {
      out->push_back(&j->right);
    }
  }
}

}  // namespace

void Checker::CollectDecls() {
  for (size_t i = 0; i < out_.program.decls.size(); ++i) {
    ast::Decl* d = out_.program.decls[i].get();
    const ast::Ident* name = nullptr;
    const char* what = "";
    if (auto* p = ast::As<ast::ParamDecl>(d))
      name = &p->name, what = "param";
    else if (auto* s = ast::As<ast::SchemaDecl>(d))
      name = &s->name, what = "schema";
    else if (auto* f = ast::As<ast::ExternFnDecl>(d))
      name = &f->name, what = "function";
    else if (auto* s = ast::As<ast::StreamDecl>(d))
      name = &s->name, what = "stream";
    if (name == nullptr || name->name.empty()) continue;
    auto it = top_level_.find(name->name);
    if (it != top_level_.end()) {
      diags_
          .Report(diag::Kind::kDuplicateDefinition, name->range,
                  std::string(what) + " `" + name->name + "` is defined more than once")
          .AddNote(it->second, "`" + name->name + "` first defined here");
      continue;
    }
    top_level_[name->name] = name->range;
    if (auto* s = ast::As<ast::SchemaDecl>(d)) {
      CheckSchema(*s);
      out_.schemas[s->name.name] = s;
    } else if (auto* f = ast::As<ast::ExternFnDecl>(d)) {
      CheckExtern(*f);
      out_.externs[f->name.name] = f;
    } else if (auto* p = ast::As<ast::ParamDecl>(d)) {
      p->resolved = ResolveType(p->type, /*allow_records=*/false);
      out_.params[p->name.name] = p;
    } else if (auto* s = ast::As<ast::StreamDecl>(d)) {
      stream_index_[s->name.name] = i;
    }
  }
  FindCycles();
}

// Iterative Tarjan over the stream graph, so long chains cannot overflow the stack and the work
// stays linear in the number of streams and references.
void Checker::FindCycles() {
  std::vector<std::string> names;
  std::map<std::string, size_t> id;
  for (auto& [name, index] : stream_index_) {
    id[name] = names.size();
    names.push_back(name);
  }
  const size_t n = names.size();
  std::vector<std::vector<size_t>> edges(n);
  std::vector<bool> self_loop(n, false);
  for (size_t v = 0; v < n; ++v) {
    auto* decl = ast::As<ast::StreamDecl>(out_.program.decls[stream_index_[names[v]]].get());
    std::vector<const ast::Ident*> refs;
    StreamRefs(decl->pipeline, &refs);
    for (const ast::Ident* r : refs) {
      auto it = id.find(r->name);
      if (it == id.end()) continue;
      edges[v].push_back(it->second);
      if (it->second == v) self_loop[v] = true;
    }
  }
  constexpr size_t kUnvisited = static_cast<size_t>(-1);
  std::vector<size_t> index(n, kUnvisited), low(n, 0), comp(n, kUnvisited);
  std::vector<bool> on_stack(n, false);
  std::vector<size_t> stack;
  size_t next_index = 0, next_comp = 0;
  for (size_t root = 0; root < n; ++root) {
    if (index[root] != kUnvisited) continue;
    std::vector<std::pair<size_t, size_t>> call;  // (node, next edge to visit)
    call.push_back({root, 0});
    index[root] = low[root] = next_index++;
    stack.push_back(root);
    on_stack[root] = true;
    while (!call.empty()) {
      auto& [v, e] = call.back();
      if (e < edges[v].size()) {
        size_t w = edges[v][e++];
        if (index[w] == kUnvisited) {
          index[w] = low[w] = next_index++;
          stack.push_back(w);
          on_stack[w] = true;
          call.push_back({w, 0});
        } else if (on_stack[w]) {
          low[v] = std::min(low[v], index[w]);
        }
        continue;
      }
      size_t done = v;
      call.pop_back();
      if (!call.empty()) low[call.back().first] = std::min(low[call.back().first], low[done]);
      if (low[done] == index[done]) {
        size_t size = 0;
        size_t w;
        do {
          w = stack.back();
          stack.pop_back();
          on_stack[w] = false;
          comp[w] = next_comp;
          ++size;
        } while (w != done);
        if (size > 1 || self_loop[done]) cyclic_components_.insert(next_comp);
        ++next_comp;
      }
    }
  }
  for (size_t v = 0; v < n; ++v) component_[names[v]] = comp[v];
}

types::Type Checker::ResolveType(const ast::TypeRef& t, bool allow_records) {
  const std::string& n = t.name.name;
  if (n.empty()) return types::Type::Error();
  types::Type result = types::Type::Error();
  if (n == "list") {
    if (!t.arg) {
      diags_.Report(diag::Kind::kUnknownType, t.range, "`list` needs an element type")
          .Help("write e.g. `list<string>`");
      return types::Type::Error();
    }
    types::Type element = ResolveType(*t.arg, allow_records);
    if (element.is_error()) return element;
    result = types::Type::List(element);
  } else {
    if (t.arg) {
      diags_.Report(diag::Kind::kUnknownType, t.range,
                    "`" + n + "` does not take a type argument; only `list<...>` does");
      return types::Type::Error();
    }
    result = types::ParsePrimitive(n);
    if (result.is_error()) {
      auto s = out_.schemas.find(n);
      if (s != out_.schemas.end() && allow_records) {
        result = s->second->resolved;
        if (result.is_error()) return result;
      } else if (s != out_.schemas.end()) {
        diags_
            .Report(diag::Kind::kUnknownType, t.name.range,
                    "a schema cannot be used here; expected a primitive type or list")
            .AddNote(s->second->name.range, "schema `" + n + "` declared here");
        return types::Type::Error();
      } else {
        bool later_schema = false;
        for (const ast::DeclPtr& d : out_.program.decls) {
          if (auto* sd = ast::As<ast::SchemaDecl>(d.get()); sd && sd->name.name == n)
            later_schema = true;
        }
        if (later_schema && allow_records) {
          diags_
              .Report(diag::Kind::kUseBeforeDefinition, t.name.range,
                      "schema `" + n + "` is used before its declaration")
              .AddNote(top_level_.count(n) ? top_level_[n] : diag::SourceRange{}, "declared here")
              .Help("move the schema above this use; schemas cannot refer to themselves");
          return types::Type::Error();
        }
        std::vector<std::string> candidates = PrimitiveNames();
        if (allow_records) {
          for (auto& [name, _] : out_.schemas) candidates.push_back(name);
        }
        static const std::map<std::string, std::string> kAliases = {
            {"integer", "int"},        {"long", "int"},          {"int64", "int"},
            {"double", "float"},       {"real", "float"},        {"str", "string"},
            {"text", "string"},        {"varchar", "string"},    {"boolean", "bool"},
            {"datetime", "timestamp"}, {"interval", "duration"}, {"array", "list"}};
        auto& d = diags_.Report(diag::Kind::kUnknownType, t.name.range, "unknown type `" + n + "`");
        if (auto alias = kAliases.find(n); alias != kAliases.end())
          d.Help("Flow calls this type `" + alias->second + "`");
        else if (auto hint = DidYouMean(n, candidates))
          d.Help(*hint);
        else
          d.Help(
              "types are bool, int, float, string, bytes, timestamp, duration, list<T>, T? and "
              "schema names");
        return types::Type::Error();
      }
    }
  }
  return t.nullable ? result.AsNullable() : result;
}

void Checker::CheckSchema(ast::SchemaDecl& s) {
  std::vector<types::Field> fields;
  // Both namespaces must be unique: scripts find a field by its name, formats by its wire name.
  std::map<std::string, diag::SourceRange> seen, seen_wire;
  for (ast::FieldDecl& f : s.fields) {
    if (auto it = seen.find(f.name.name); it != seen.end()) {
      diags_
          .Report(diag::Kind::kDuplicateField, f.name.range,
                  "field `" + f.name.name + "` is declared twice in schema `" + s.name.name + "`")
          .AddNote(it->second, "first declared here");
      continue;
    }
    const std::string& wire = f.Wire();
    diag::SourceRange wire_at = f.quoted() ? f.wire_range : f.name.range;
    if (auto it = seen_wire.find(wire); it != seen_wire.end()) {
      diags_
          .Report(diag::Kind::kDuplicateField, wire_at,
                  "two fields of schema `" + s.name.name + "` are named " +
                      types::FlowStringLiteral(wire) + " in the data")
          .AddNote(it->second, "the other one is declared here")
          .Help("a record holds one value per name: rename one of the quoted names");
    }
    // Kept after a wire clash: scripts can still use it, so its uses raise no further errors.
    seen[f.name.name] = f.name.range;
    seen_wire.emplace(wire, wire_at);
    // Fields with Error types stay, so uses of them are silent.
    types::Type t = ResolveType(f.type, /*allow_records=*/true);
    types::Field field{f.name.name, t};
    if (wire != f.name.name) field.wire_name = wire;
    fields.push_back(std::move(field));
  }
  s.resolved = types::Type::Record(s.name.name, std::move(fields));
}

void Checker::CheckParam(ast::ParamDecl& p) {
  if (!p.default_value) return;
  ExprContext cx;
  cx.where = "in a param default";
  types::Type t = CheckExpr(*p.default_value, cx);
  if (!types::IsAssignable(t, p.resolved)) {
    diags_
        .Report(diag::Kind::kTypeMismatch, p.default_value->range,
                "default of param `" + p.name.name + "` has type " + t.ToString() +
                    ", but the param is " + p.resolved.ToString())
        .AddNote(p.type.range, "type declared here");
  }
}

void Checker::CheckExtern(ast::ExternFnDecl& f) {
  if (stdlib::FindFunction(f.name.name) != nullptr) {
    diags_
        .Report(diag::Kind::kDuplicateDefinition, f.name.range,
                "extern function `" + f.name.name + "` has the name of a standard library function")
        .Help("choose another name");
  }
  std::set<std::string> seen;
  for (ast::FnParam& p : f.params) {
    if (!seen.insert(p.name.name).second) {
      diags_.Report(diag::Kind::kDuplicateField, p.name.range,
                    "parameter `" + p.name.name + "` is declared twice");
    }
    f.param_types.push_back(ResolveType(p.type, /*allow_records=*/false));
  }
  f.return_type = ResolveType(f.returns, /*allow_records=*/false);
  if (f.header.empty() && f.header_range.valid()) {
    diags_.Report(diag::Kind::kInvalidArgument, f.header_range,
                  "the header of an extern function cannot be empty");
  }
}

const StreamInfo* Checker::UseStream(const ast::Ident& name, const ast::StreamDecl* self) {
  if (name.name.empty()) return nullptr;
  referenced_.insert(name.name);
  if (self && name.name == self->name.name) {
    diags_
        .Report(diag::Kind::kStreamCycle, name.range,
                "stream `" + name.name + "` reads from itself")
        .AddNote(self->name.range, "`" + name.name + "` defined here");
    return nullptr;
  }
  auto it = out_.streams.find(name.name);
  if (it != out_.streams.end()) {
    it->second.used = true;
    return &it->second;
  }
  auto later = stream_index_.find(name.name);
  if (later == stream_index_.end()) {
    std::vector<std::string> candidates;
    for (auto& [n, _] : out_.streams) candidates.push_back(n);
    auto& d =
        diags_.Report(diag::Kind::kUnknownStream, name.range, "unknown stream `" + name.name + "`");
    if (auto hint = DidYouMean(name.name, candidates)) d.Help(*hint);
    if (out_.schemas.count(name.name))
      d.Help("`" + name.name + "` is a schema; read a source with `from ...`");
    else if (out_.params.count(name.name))
      d.Help("`" + name.name + "` is a param, not a stream");
    return nullptr;
  }
  // Defined later: either a cycle back to the stream being defined, or just out of order.
  if (self && component_.count(self->name.name) && component_.count(name.name)) {
    size_t comp = component_[self->name.name];
    if (comp == component_[name.name] && cyclic_components_.count(comp)) {
      if (reported_cycles_.insert(comp).second) {
        auto* other = ast::As<ast::StreamDecl>(out_.program.decls[later->second].get());
        diags_
            .Report(diag::Kind::kStreamCycle, name.range,
                    "streams `" + self->name.name + "` and `" + name.name +
                        "` depend on each other in a cycle")
            .AddNote(other->name.range,
                     "`" + name.name +
                         "` is defined here and reads, directly or through other streams, `" +
                         self->name.name + "`")
            .Help("a stream can only read streams defined above it");
      }
      return nullptr;
    }
  }
  auto* later_decl = ast::As<ast::StreamDecl>(out_.program.decls[later->second].get());
  diags_
      .Report(diag::Kind::kUseBeforeDefinition, name.range,
              "stream `" + name.name + "` is used before its definition")
      .AddNote(later_decl->name.range, "`" + name.name + "` is defined here")
      .Help("move the definition of `" + name.name + "` above this use");
  return nullptr;
}

void Checker::ReportUnused() {
  for (auto& [name, info] : out_.streams) {
    if (info.used || referenced_.count(name) || info.decl == nullptr || info.record.is_error())
      continue;
    diags_
        .Report(diag::Kind::kUnusedStream, info.decl->name.range,
                "stream `" + name + "` is never used")
        .Help("write it with `" + name + " | into ...`, read it from another stream, or remove it");
  }
}

}  // namespace flow::sema
