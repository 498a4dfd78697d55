#include "flow/runtime/formats/avro_schema.h"

// json_decoder.h pins simdjson's configuration macros: include it before simdjson is used.
#include "flow/runtime/formats/json_decoder.h"

#include <fmt/format.h>

#include <map>
#include <optional>

namespace flow::rt {

std::string_view AvroTypeName(AvroType t) {
  switch (t) {
    case AvroType::kNull:
      return "null";
    case AvroType::kBoolean:
      return "boolean";
    case AvroType::kInt:
      return "int";
    case AvroType::kLong:
      return "long";
    case AvroType::kFloat:
      return "float";
    case AvroType::kDouble:
      return "double";
    case AvroType::kBytes:
      return "bytes";
    case AvroType::kString:
      return "string";
    case AvroType::kRecord:
      return "record";
    case AvroType::kEnum:
      return "enum";
    case AvroType::kArray:
      return "array";
    case AvroType::kMap:
      return "map";
    case AvroType::kUnion:
      return "union";
    case AvroType::kFixed:
      return "fixed";
  }
  return "?";
}

namespace {

std::optional<AvroType> Primitive(std::string_view name) {
  for (AvroType t : {AvroType::kNull, AvroType::kBoolean, AvroType::kInt, AvroType::kLong,
                     AvroType::kFloat, AvroType::kDouble, AvroType::kBytes, AvroType::kString}) {
    if (AvroTypeName(t) == name) return t;
  }
  return std::nullopt;
}

Status SchemaError(std::string_view what) {
  return Status::InvalidArgument(fmt::format("avro schema: {}", what));
}

}  // namespace

class AvroSchemaParser {
 public:
  Result<AvroSchema> Run(std::string_view json) {
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    simdjson::padded_string text(json);
    if (auto err = parser.parse(text).get(doc)) {
      return SchemaError(fmt::format("malformed JSON: {}", simdjson::error_message(err)));
    }
    auto root = Node(doc, "", 0);
    if (!root.ok()) return root.status();
    return std::move(schema_);
  }

 private:
  int32_t Add(AvroType t) {
    AvroNode n;
    n.type = t;
    schema_.nodes_.push_back(std::move(n));
    return static_cast<int32_t>(schema_.nodes_.size() - 1);
  }
  AvroNode& At(int32_t i) { return schema_.nodes_[static_cast<size_t>(i)]; }

  static std::string FullName(std::string_view name, std::string_view ns) {
    if (name.find('.') != std::string_view::npos || ns.empty()) return std::string(name);
    return fmt::format("{}.{}", ns, name);
  }

  Result<int32_t> Reference(std::string_view name, std::string_view ns) {
    if (auto p = Primitive(name)) return Add(*p);
    auto it = named_.find(FullName(name, ns));
    if (it == named_.end()) it = named_.find(std::string(name));
    if (it == named_.end()) return SchemaError(fmt::format("unknown type `{}`", name));
    return it->second;
  }

  Result<int32_t> Node(simdjson::dom::element e, const std::string& ns, int depth) {
    if (depth > AvroSchema::kMaxDepth)
      return SchemaError(fmt::format("nested deeper than {} levels", AvroSchema::kMaxDepth));
    std::string_view s;
    if (e.get_string().get(s) == simdjson::SUCCESS) return Reference(s, ns);
    simdjson::dom::array arr;
    if (e.get_array().get(arr) == simdjson::SUCCESS) {
      int32_t u = Add(AvroType::kUnion);
      for (simdjson::dom::element b : arr) {
        auto branch = Node(b, ns, depth + 1);
        if (!branch.ok()) return branch.status();
        if (node_type(*branch) == AvroType::kUnion)
          return SchemaError("a union directly inside a union");
        At(u).branches.push_back(*branch);
      }
      if (At(u).branches.empty()) return SchemaError("an empty union");
      return u;
    }
    simdjson::dom::object obj;
    if (e.get_object().get(obj) != simdjson::SUCCESS)
      return SchemaError("a type must be a name, an object or a union array");
    simdjson::dom::element type_el;
    if (obj["type"].get(type_el) != simdjson::SUCCESS)
      return SchemaError("an object without `type`");
    std::string_view type;
    if (type_el.get_string().get(type) != simdjson::SUCCESS)
      return Node(type_el, ns, depth + 1);  // {"type": {...}}
    std::string_view logical;
    if (obj["logicalType"].get_string().get(logical) != simdjson::SUCCESS) logical = {};
    if (type == "record" || type == "error") return Record(obj, ns, depth);
    if (type == "enum" || type == "fixed") {
      auto named = Named(obj, ns, type == "enum" ? AvroType::kEnum : AvroType::kFixed);
      if (!named.ok()) return named.status();
      int32_t n = *named;
      At(n).logical = std::string(logical);
      if (type == "enum") {
        simdjson::dom::array symbols;
        if (obj["symbols"].get_array().get(symbols) != simdjson::SUCCESS)
          return SchemaError("an enum without `symbols`");
        for (simdjson::dom::element sym : symbols) {
          std::string_view v;
          if (sym.get_string().get(v) != simdjson::SUCCESS)
            return SchemaError("an enum symbol that is not a string");
          At(n).symbols.emplace_back(v);
        }
      } else {
        int64_t size = 0;
        if (obj["size"].get_int64().get(size) != simdjson::SUCCESS || size < 0) {
          return SchemaError("a fixed type without a non-negative `size`");
        }
        At(n).size = size;
      }
      return n;
    }
    if (type == "array" || type == "map") {
      int32_t n = Add(type == "array" ? AvroType::kArray : AvroType::kMap);
      simdjson::dom::element inner;
      if (obj[type == "array" ? "items" : "values"].get(inner) != simdjson::SUCCESS) {
        return SchemaError(type == "array" ? "an array without `items`" : "a map without `values`");
      }
      auto items = Node(inner, ns, depth + 1);
      if (!items.ok()) return items.status();
      At(n).items = *items;
      return n;
    }
    auto ref = Reference(type, ns);
    if (!ref.ok()) return ref.status();
    // A primitive with attributes ({"type": "long", "logicalType": ...}) is a node of its own.
    if (Primitive(type)) At(*ref).logical = std::string(logical);
    return *ref;
  }

  AvroType node_type(int32_t i) { return At(i).type; }

  Result<int32_t> Named(simdjson::dom::object obj, const std::string& ns, AvroType t) {
    std::string_view name;
    if (obj["name"].get_string().get(name) != simdjson::SUCCESS || name.empty()) {
      return SchemaError(fmt::format("a {} without a `name`", AvroTypeName(t)));
    }
    std::string_view own_ns;
    std::string space = ns;
    if (obj["namespace"].get_string().get(own_ns) == simdjson::SUCCESS) space = std::string(own_ns);
    std::string full = FullName(name, space);
    if (named_.count(full)) return SchemaError(fmt::format("`{}` is defined twice", full));
    int32_t n = Add(t);
    At(n).name = full;
    named_[full] = n;
    return n;
  }

  Result<int32_t> Record(simdjson::dom::object obj, const std::string& ns, int depth) {
    auto named = Named(obj, ns, AvroType::kRecord);
    if (!named.ok()) return named.status();
    int32_t n = *named;
    // Names inside a record are relative to its namespace.
    std::string full = At(n).name;
    std::string inner_ns =
        full.rfind('.') == std::string::npos ? "" : full.substr(0, full.rfind('.'));
    simdjson::dom::array fields;
    if (obj["fields"].get_array().get(fields) != simdjson::SUCCESS)
      return SchemaError(fmt::format("record `{}` has no `fields`", full));
    for (simdjson::dom::element f : fields) {
      std::string_view fname;
      if (f["name"].get_string().get(fname) != simdjson::SUCCESS) {
        return SchemaError(fmt::format("a field of record `{}` has no `name`", full));
      }
      simdjson::dom::element ftype;
      if (f["type"].get(ftype) != simdjson::SUCCESS)
        return SchemaError(fmt::format("field `{}` of `{}` has no `type`", fname, full));
      auto t = Node(ftype, inner_ns, depth + 1);
      if (!t.ok()) return t.status();
      simdjson::dom::element unused;
      At(n).fields.push_back(
          AvroField{std::string(fname), *t, f["default"].get(unused) == simdjson::SUCCESS});
    }
    return n;
  }

  AvroSchema schema_;
  std::map<std::string, int32_t> named_;
};

Result<AvroSchema> AvroSchema::Parse(std::string_view json) {
  return AvroSchemaParser().Run(json);
}

std::string AvroSchema::Describe(int32_t i) const {
  const AvroNode& n = node(i);
  switch (n.type) {
    case AvroType::kRecord:
    case AvroType::kEnum:
    case AvroType::kFixed:
      return fmt::format("{} {}", AvroTypeName(n.type), n.name);
    case AvroType::kArray:
      return fmt::format("array of {}", Describe(n.items));
    case AvroType::kMap:
      return fmt::format("map of {}", Describe(n.items));
    case AvroType::kUnion: {
      std::string out = "union [";
      for (size_t b = 0; b < n.branches.size(); ++b) {
        // Named branches by name only: a recursive type would not end.
        const AvroNode& bn = node(n.branches[b]);
        out += (b ? ", " : "") + (bn.name.empty() ? std::string(AvroTypeName(bn.type)) : bn.name);
      }
      return out + "]";
    }
    default:
      return n.logical.empty() ? std::string(AvroTypeName(n.type))
                               : fmt::format("{} ({})", AvroTypeName(n.type), n.logical);
  }
}

class AvroResolver {
 public:
  AvroResolver(AvroResolution& out, const AvroSchema& reader)
      : out_(out), w_(out.writer_), r_(reader) {}

  Result<const AvroResolved*> Resolve(int32_t w, int32_t r, const std::string& path, int depth) {
    if (depth > AvroSchema::kMaxDepth)
      return Status::InvalidArgument("avro: schemas nested too deep to resolve");
    const AvroNode& wn = w_.node(w);
    const AvroNode& rn = r_.node(r);
    if (wn.type == AvroType::kUnion) {
      AvroResolved res = Base(w);
      Status first_error;
      bool any = false;
      for (int32_t b : wn.branches) {
        auto branch = Resolve(b, r, path, depth + 1);
        if (branch.ok()) {
          res.branches.push_back(*branch);
          res.branch_state.push_back(0);
          any = true;
          continue;
        }
        res.branches.push_back(nullptr);
        res.branch_state.push_back(w_.node(b).type == AvroType::kNull ? AvroResolved::kNullBranch
                                                                      : AvroResolved::kBadBranch);
        if (first_error.ok() && w_.node(b).type != AvroType::kNull) first_error = branch.status();
      }
      if (!any) return first_error.ok() ? Mismatch(w, r, path) : first_error;
      return Keep(std::move(res));
    }
    if (rn.type == AvroType::kUnion) {
      // The first reader branch that can read the writer's type.
      if (wn.type == AvroType::kNull) {
        for (int32_t b : rn.branches) {
          if (r_.node(b).type == AvroType::kNull) return Keep(Base(w));
        }
        return Mismatch(w, r, path);
      }
      Status first_error;
      for (int32_t b : rn.branches) {
        if (r_.node(b).type == AvroType::kNull) continue;
        auto branch = Resolve(w, b, path, depth + 1);
        if (branch.ok()) return branch;
        if (first_error.ok()) first_error = branch.status();
      }
      return first_error.ok() ? Mismatch(w, r, path) : first_error;
    }
    AvroResolved res = Base(w);
    switch (rn.type) {
      case AvroType::kNull:
      case AvroType::kBoolean:
        if (wn.type != rn.type) return Mismatch(w, r, path);
        return Keep(std::move(res));
      case AvroType::kInt:
        if (wn.type != AvroType::kInt) return Mismatch(w, r, path);
        return Keep(std::move(res));
      case AvroType::kLong:
        if (wn.type != AvroType::kInt && wn.type != AvroType::kLong) return Mismatch(w, r, path);
        if (rn.logical == "timestamp-millis") {
          if (wn.logical == "timestamp-micros" || wn.logical == "local-timestamp-micros")
            res.divide = 1000;
          if (wn.logical == "timestamp-nanos" || wn.logical == "local-timestamp-nanos")
            res.divide = 1000000;
          if (wn.logical == "date") res.multiply = 86400000;
        }
        return Keep(std::move(res));
      case AvroType::kFloat:
      case AvroType::kDouble:
        if (wn.type != AvroType::kInt && wn.type != AvroType::kLong &&
            wn.type != AvroType::kFloat &&
            !(wn.type == AvroType::kDouble && rn.type == AvroType::kDouble)) {
          return Mismatch(w, r, path);
        }
        return Keep(std::move(res));
      case AvroType::kString:
      case AvroType::kBytes:
        if (wn.type == AvroType::kString || wn.type == AvroType::kBytes)
          return Keep(std::move(res));
        if (rn.type == AvroType::kString && wn.type == AvroType::kEnum) {
          res.symbols = &wn.symbols;
          return Keep(std::move(res));
        }
        if (rn.type == AvroType::kBytes && wn.type == AvroType::kFixed) return Keep(std::move(res));
        return Mismatch(w, r, path);
      case AvroType::kArray: {
        if (wn.type != AvroType::kArray) return Mismatch(w, r, path);
        auto items = Resolve(wn.items, rn.items, path + "[]", depth + 1);
        if (!items.ok()) return items.status();
        res.items = *items;
        return Keep(std::move(res));
      }
      case AvroType::kRecord:
        return Record(w, r, path, depth, std::move(res));
      case AvroType::kEnum:
      case AvroType::kMap:
      case AvroType::kFixed:
      case AvroType::kUnion:
        break;
    }
    // Flow's reader schemas have no enum, map or fixed types.
    return Status::Internal(
        fmt::format("avro: reader schema has a {} at {}", AvroTypeName(rn.type), Where(path)));
  }

 private:
  static std::string Where(const std::string& path) {
    return path.empty() ? "the record" : fmt::format("field `{}`", path);
  }

  AvroResolved Base(int32_t w) const {
    AvroResolved res;
    res.writer_type = w_.node(w).type;
    res.writer = w;
    return res;
  }

  const AvroResolved* Keep(AvroResolved res) {
    out_.nodes_.push_back(std::move(res));
    return &out_.nodes_.back();
  }

  Status Mismatch(int32_t w, int32_t r, const std::string& path) const {
    return Status::InvalidArgument(fmt::format("{}: the writer's {} cannot be read as {}",
                                               Where(path), w_.Describe(w), r_.Describe(r)));
  }

  Result<const AvroResolved*> Record(int32_t w, int32_t r, const std::string& path, int depth,
                                     AvroResolved res) {
    const AvroNode& wn = w_.node(w);
    const AvroNode& rn = r_.node(r);
    if (wn.type != AvroType::kRecord) return Mismatch(w, r, path);
    std::vector<bool> matched(rn.fields.size(), false);
    for (const AvroField& wf : wn.fields) {
      AvroResolved::Step step;
      step.writer_type = wf.type;
      for (size_t j = 0; j < rn.fields.size(); ++j) {
        if (rn.fields[j].name != wf.name) continue;
        auto f = Resolve(wf.type, rn.fields[j].type, path.empty() ? wf.name : path + "." + wf.name,
                         depth + 1);
        if (!f.ok()) return f.status();
        step.reader_field = static_cast<int32_t>(j);
        step.resolved = *f;
        matched[j] = true;
        break;
      }
      res.steps.push_back(step);
    }
    for (size_t j = 0; j < rn.fields.size(); ++j) {
      if (matched[j] || rn.fields[j].has_default) continue;
      std::string field = path.empty() ? rn.fields[j].name : path + "." + rn.fields[j].name;
      return Status::InvalidArgument(
          fmt::format("field `{}`: the writer's {} has no such field, and the script's field is "
                      "not nullable (a nullable field reads "
                      "as null when the writer lacks it)",
                      field, w_.Describe(w)));
    }
    return Keep(std::move(res));
  }

  AvroResolution& out_;
  const AvroSchema& w_;
  const AvroSchema& r_;
};

Result<std::shared_ptr<const AvroResolution>> AvroResolution::Make(AvroSchema writer,
                                                                   const AvroSchema& reader) {
  auto out = std::make_shared<AvroResolution>();
  out->writer_ = std::move(writer);
  auto root = AvroResolver(*out, reader).Resolve(out->writer_.root(), reader.root(), "", 0);
  if (!root.ok()) return root.status();
  out->root_ = *root;
  return std::shared_ptr<const AvroResolution>(std::move(out));
}

}  // namespace flow::rt
