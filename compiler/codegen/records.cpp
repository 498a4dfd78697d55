#include "codegen/records.h"

#include <cassert>

#include "codegen/escape.h"
#include "flow/runtime/common/json_escape.h"
#include "types/cpp_type.h"

namespace flow::codegen {

std::string ShapeKey(const types::Type& type) {
  std::string s = type.record_name() + "{";
  // Wire names are part of the shape: they select a different JSON codec.
  for (const types::Field& f : type.fields()) {
    s.append(f.name)
        .append("=")
        .append(CppStringLiteral(f.Wire()))
        .append(":")
        .append(f.type.ToString())
        .append(",");
  }
  return s + "}";
}

std::string RecordTypes::Register(const types::Type& type, const std::string& hint) {
  if (type.kind() == types::Kind::kList) return Register(type.element(), hint);
  if (type.kind() != types::Kind::kRecord) return "";
  std::string key = ShapeKey(type);
  auto it = by_shape_.find(key);
  if (it != by_shape_.end()) return entries_[it->second].name;
  for (const types::Field& f : type.fields()) Register(f.type, hint + CamelCase(f.name));
  std::string base = MangleIdent(type.record_name().empty() ? hint : type.record_name());
  std::string name = base;
  int& n = used_names_[base];
  // A repeated name gets `_<n>_`: plain and mangled names never end in `_`, so this cannot meet
  // one.
  if (n++ > 0) name = base + "_" + std::to_string(n) + "_";
  by_shape_[key] = entries_.size();
  entries_.push_back(Entry{type.AsNonNullable(), name});
  return name;
}

std::string RecordTypes::Name(const types::Type& type) const {
  auto it = by_shape_.find(ShapeKey(type));
  assert(it != by_shape_.end() && "record type used before it was registered");
  return it == by_shape_.end() ? "Unregistered" : entries_[it->second].name;
}

std::string RecordTypes::Cpp(const types::Type& type) const {
  return types::CppType(type, [this](const types::Type& record) { return "rec::" + Name(record); });
}

std::string RecordTypes::JsonCodec(const types::Type& type) const {
  std::string base;
  switch (type.kind()) {
    case types::Kind::kBool:
      base = "::flow::rt::JsonBool";
      break;
    case types::Kind::kInt:
      base = "::flow::rt::JsonInt";
      break;
    case types::Kind::kTimestamp:
      base = "::flow::rt::JsonTimestamp";
      break;
    case types::Kind::kDuration:
      base = "::flow::rt::JsonDuration";
      break;
    case types::Kind::kFloat:
      base = "::flow::rt::JsonFloat";
      break;
    case types::Kind::kString:
      base = "::flow::rt::JsonString";
      break;
    case types::Kind::kBytes:
      base = "::flow::rt::JsonBytes";
      break;
    case types::Kind::kList:
      base = "::flow::rt::JsonList<" + JsonCodec(type.element()) + ">";
      break;
    case types::Kind::kRecord:
      base = "Json" + Name(type);
      break;
    case types::Kind::kNull:
    case types::Kind::kError:
      base = "void";
      break;
  }
  return type.nullable() ? "::flow::rt::JsonNullable<" + base + ">" : base;
}

void RecordTypes::EmitStructs(Writer& w) const {
  w.Line("namespace rec {");
  for (const Entry& e : entries_) {
    w.Line("");
    w.Line("// " + CommentText(e.type.ToString(), 100));
    w.Line("struct " + e.name + " {");
    for (const types::Field& f : e.type.fields()) {
      w.Line("  " + Cpp(f.type) + " " + MangleIdent(f.name) + "{};");
    }
    w.Line("  bool operator==(const " + e.name + "&) const = default;");
    w.Line("};");
  }
  w.Line("");
  w.Line("}  // namespace rec");
}

std::string QuotedJsonKey(std::string_view wire_name) {
  return CppStringLiteral(rt::JsonQuoted(wire_name) + ":");
}

void RecordTypes::EmitJsonCodecs(Writer& w) const {
  for (const Entry& e : entries_) {
    const auto& fields = e.type.fields();
    std::string n = std::to_string(fields.size());
    std::string table = "kFields" + e.name;
    w.Line("");
    std::string names, required;
    for (size_t i = 0; i < fields.size(); ++i) {
      names += (i ? ", " : "") + CppStringLiteral(fields[i].Wire());
      required += std::string(i ? ", " : "") + (fields[i].type.nullable() ? "false" : "true");
    }
    w.Line("inline constexpr ::flow::rt::JsonFieldTable<" + n + "> " + table + "{{" + names +
           "}, {" + required + "}};");
    w.Line("struct Json" + e.name + " {");
    w.Line("  using Value = rec::" + e.name + ";");
    // Read: a nested object (every field); top-level decoders are generated per source.
    w.Line("  static ::flow::rt::Status Read(::flow::rt::JsonValue& v, Value* out) {");
    w.Line("    ::flow::rt::JsonObjectReader r;");
    w.Line("    FLOW_RETURN_IF_ERROR(r.Begin(v));");
    w.Line("    std::bitset<" + n + "> seen;");
    w.Line("    std::string_view key;");
    w.Line("    while (r.NextField(&key)) {");
    w.Line("      switch (" + table + ".Find(key)) {");
    for (size_t i = 0; i < fields.size(); ++i) {
      w.Line("        case " + std::to_string(i) + ": FLOW_RETURN_IF_ERROR(r.Read<" +
             JsonCodec(fields[i].type) + ">(" + table + ".names[" + std::to_string(i) +
             "], &out->" + MangleIdent(fields[i].name) + ")); seen.set(" + std::to_string(i) +
             "); break;");
    }
    w.Line("        default: break;");
    w.Line("      }");
    w.Line("    }");
    w.Line("    FLOW_RETURN_IF_ERROR(r.End());");
    for (size_t i = 0; i < fields.size(); ++i) {
      if (fields[i].type.nullable()) {
        w.Line("    if (!seen[" + std::to_string(i) + "]) out->" + MangleIdent(fields[i].name) +
               ".reset();");
      }
    }
    w.Line("    return r.CheckRequired(" + table + ", seen);");
    w.Line("  }");
    w.Line("  static void Write(const Value& v, ::flow::rt::JsonEncoder* e) {");
    w.Line("    e->BeginObject();");
    for (size_t i = 0; i < fields.size(); ++i) {
      w.Line("    e->QuotedField<" + JsonCodec(fields[i].type) + ">(" +
             QuotedJsonKey(fields[i].Wire()) + ", v." + MangleIdent(fields[i].name) + ");");
    }
    w.Line("    e->EndObject();");
    w.Line("  }");
    w.Line("};");
  }
}

}  // namespace flow::codegen
