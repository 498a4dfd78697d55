// Avro codecs and schemas of record types (formats/avro.h has the mapping of Flow types).

#include <algorithm>
#include <set>

#include "codegen/escape.h"
#include "codegen/records.h"
#include "flow/runtime/common/json_escape.h"

namespace flow::codegen {

std::string RecordTypes::AvroCodec(const types::Type& type) const {
  std::string base;
  switch (type.kind()) {
    case types::Kind::kBool:
      base = "::flow::rt::AvroBoolean";
      break;
    case types::Kind::kInt:
    case types::Kind::kDuration:
      base = "::flow::rt::AvroLong";
      break;
    case types::Kind::kTimestamp:
      base = "::flow::rt::AvroTimestamp";
      break;
    case types::Kind::kFloat:
      base = "::flow::rt::AvroDouble";
      break;
    case types::Kind::kString:
      base = "::flow::rt::AvroString";
      break;
    case types::Kind::kBytes:
      base = "::flow::rt::AvroBytes";
      break;
    case types::Kind::kList:
      base = "::flow::rt::AvroList<" + AvroCodec(type.element()) + ">";
      break;
    case types::Kind::kRecord:
      base = "Avro" + Name(type);
      break;
    case types::Kind::kNull:
    case types::Kind::kError:
      base = "void";
      break;
  }
  return type.nullable() ? "::flow::rt::AvroNullable<" + base + ">" : base;
}

namespace {

// A named type is defined once in a schema and referred to by name after that.
std::string TypeJson(const RecordTypes& records, const types::Type& t,
                     std::set<std::string>* defined, const std::vector<const types::Field*>* only) {
  if (t.nullable())
    return "[\"null\", " + TypeJson(records, t.AsNonNullable(), defined, only) + "]";
  switch (t.kind()) {
    case types::Kind::kBool:
      return "\"boolean\"";
    case types::Kind::kInt:
    case types::Kind::kDuration:
      return "\"long\"";
    case types::Kind::kTimestamp:
      return R"({"type": "long", "logicalType": "timestamp-millis"})";
    case types::Kind::kFloat:
      return "\"double\"";
    case types::Kind::kString:
      return "\"string\"";
    case types::Kind::kBytes:
      return "\"bytes\"";
    case types::Kind::kList:
      return R"({"type": "array", "items": )" + TypeJson(records, t.element(), defined, nullptr) +
             "}";
    case types::Kind::kRecord:
      break;
    case types::Kind::kNull:
    case types::Kind::kError:
      return "\"null\"";
  }
  std::string name = records.Name(t);
  if (!defined->insert(name).second) return rt::JsonQuoted(name);
  std::string out = R"({"type": "record", "name": )" + rt::JsonQuoted(name) + R"(, "fields": [)";
  bool first = true;
  for (const types::Field& f : t.fields()) {
    if (only != nullptr && std::find(only->begin(), only->end(), &f) == only->end()) continue;
    out += std::string(first ? "" : ", ") + R"({"name": )" + rt::JsonQuoted(f.Wire()) +
           R"(, "type": )" + TypeJson(records, f.type, defined, nullptr) +
           (f.type.nullable() ? R"(, "default": null})" : "}");
    first = false;
  }
  return out + "]}";
}

}  // namespace

std::string RecordTypes::AvroSchema(const types::Type& record,
                                    const std::vector<const types::Field*>* only) const {
  std::set<std::string> defined;
  return TypeJson(*this, record.AsNonNullable(), &defined, only);
}

void RecordTypes::EmitAvroRead(Writer& w, const std::vector<const types::Field*>& fields,
                               const std::string& indent) const {
  w.Line(indent +
         "return in.Record(r, [&](int32_t j, const ::flow::rt::AvroResolved& f) -> "
         "::flow::rt::Status {");
  w.Line(indent + "  ::flow::rt::Status s;");
  w.Line(indent + "  switch (j) {");
  for (size_t i = 0; i < fields.size(); ++i) {
    w.Line(indent + "    case " + std::to_string(i) + ": s = " + AvroCodec(fields[i]->type) +
           "::Read(in, f, &out->" + MangleIdent(fields[i]->name) +
           "); if (!s.ok()) [[unlikely]] return ::flow::rt::AvroFieldError(" +
           CppStringLiteral(fields[i]->Wire()) + ", s); break;");
  }
  w.Line(indent + "    default: break;");
  w.Line(indent + "  }");
  w.Line(indent + "  return s;");
  w.Line(indent + "});");
}

void RecordTypes::EmitAvroCodecs(Writer& w) const {
  for (const Entry& e : entries_) {
    const auto& fields = e.type.fields();
    w.Line("");
    w.Line("struct Avro" + e.name + " {");
    w.Line("  using Value = rec::" + e.name + ";");
    // Read: reader field j is the record's field j (the schema of AvroSchema without `only`).
    w.Line(
        "  static ::flow::rt::Status Read(::flow::rt::AvroIn& in, const ::flow::rt::AvroResolved& "
        "r, Value* out) {");
    std::vector<const types::Field*> all;
    for (const types::Field& f : fields) all.push_back(&f);
    EmitAvroRead(w, all, "    ");
    w.Line("  }");
    w.Line("  static void Write(const Value& v, ::flow::rt::AvroOut& out) {");
    if (fields.empty()) w.Line("    (void)v; (void)out;");
    for (const types::Field& f : fields)
      w.Line("    " + AvroCodec(f.type) + "::Write(v." + MangleIdent(f.name) + ", out);");
    w.Line("  }");
    w.Line("};");
  }
}

}  // namespace flow::codegen
