// Protobuf codecs and .proto schemas of record types (formats/protobuf.h has the mapping of Flow
// types).

#include <algorithm>
#include <set>

#include "codegen/escape.h"
#include "codegen/records.h"
#include "sema/protobuf_types.h"

namespace flow::codegen {

std::string RecordTypes::ProtobufCodec(const types::Type& type) const {
  std::string base;
  switch (type.kind()) {
    case types::Kind::kBool:
      base = "::flow::rt::ProtoBool";
      break;
    case types::Kind::kInt:
      base = "::flow::rt::ProtoInt";
      break;
    case types::Kind::kDuration:
      base = "::flow::rt::ProtoDurationMs";
      break;
    case types::Kind::kTimestamp:
      base = "::flow::rt::ProtoTimestampMs";
      break;
    case types::Kind::kFloat:
      base = "::flow::rt::ProtoDouble";
      break;
    case types::Kind::kString:
      base = "::flow::rt::ProtoString";
      break;
    case types::Kind::kBytes:
      base = "::flow::rt::ProtoBytes";
      break;
    case types::Kind::kList:
      base = "::flow::rt::ProtoList<" + ProtobufCodec(type.element()) + ">";
      break;
    case types::Kind::kRecord:
      base = "Proto" + Name(type);
      break;
    case types::Kind::kNull:
    case types::Kind::kError:
      base = "void";
      break;
  }
  return type.nullable() ? "::flow::rt::ProtoNullable<" + base + ">" : base;
}

namespace {

// The field type of a Flow type in the schema (lists are `repeated` in FieldLine).
std::string FieldType(const RecordTypes& records, const types::Type& t) {
  switch (t.kind()) {
    case types::Kind::kBool:
      return "bool";
    case types::Kind::kInt:
      return "int64";
    case types::Kind::kDuration:
      return "google.protobuf.Duration";
    case types::Kind::kTimestamp:
      return "google.protobuf.Timestamp";
    case types::Kind::kFloat:
      return "double";
    case types::Kind::kString:
      return "string";
    case types::Kind::kBytes:
      return "bytes";
    case types::Kind::kList:
      return FieldType(records, t.element());
    case types::Kind::kRecord:
      return records.Name(t);
    case types::Kind::kNull:
    case types::Kind::kError:
      break;
  }
  return "bytes";
}

std::string FieldLine(const RecordTypes& records, const types::Field& f, size_t number) {
  std::string label = f.type.kind() == types::Kind::kList ? "repeated "
                      : f.type.nullable()                 ? "optional "
                                                          : "";
  return "  " + label + FieldType(records, f.type) + " " + f.Wire() + " = " +
         std::to_string(number) + ";\n";
}

// Record types used by `t`, each once, in first-use order.
void Nested(const types::Type& t, const RecordTypes& records, std::set<std::string>* seen,
            std::vector<types::Type>* out, std::set<std::string>* imports) {
  switch (t.kind()) {
    case types::Kind::kList:
      Nested(t.element(), records, seen, out, imports);
      return;
    case types::Kind::kTimestamp:
      imports->insert("google/protobuf/timestamp.proto");
      return;
    case types::Kind::kDuration:
      imports->insert("google/protobuf/duration.proto");
      return;
    case types::Kind::kRecord:
      if (!seen->insert(records.Name(t)).second) return;
      out->push_back(t.AsNonNullable());
      for (const types::Field& f : t.fields()) Nested(f.type, records, seen, out, imports);
      return;
    default:
      return;
  }
}

}  // namespace

std::string ProtobufProblem(const std::vector<const types::Field*>& fields, bool sink) {
  for (const types::Field* f : fields) {
    std::string p = sema::ProtobufFieldProblem(*f, sink);
    if (!p.empty()) return p;
  }
  return "";
}

std::string RecordTypes::ProtobufSchema(const types::Type& record,
                                        const std::vector<const types::Field*>* only) const {
  std::vector<const types::Field*> fields;
  for (const types::Field& f : record.fields()) {
    if (only == nullptr || std::find(only->begin(), only->end(), &f) != only->end())
      fields.push_back(&f);
  }
  std::set<std::string> seen{Name(record)}, imports;
  std::vector<types::Type> nested;
  for (const types::Field* f : fields) Nested(f->type, *this, &seen, &nested, &imports);
  std::string out = "syntax = \"proto3\";\n\n";
  for (const std::string& i : imports) out += "import \"" + i + "\";\n";
  if (!imports.empty()) out += "\n";
  // The root first: Confluent's message index {0} names it.
  out += "message " + Name(record) + " {\n";
  for (size_t i = 0; i < fields.size(); ++i) out += FieldLine(*this, *fields[i], i + 1);
  out += "}\n";
  for (const types::Type& t : nested) {
    out += "\nmessage " + Name(t) + " {\n";
    for (size_t i = 0; i < t.fields().size(); ++i) out += FieldLine(*this, t.fields()[i], i + 1);
    out += "}\n";
  }
  return out;
}

void RecordTypes::EmitProtobufRead(Writer& w, const std::vector<const types::Field*>& fields,
                                   const std::string& indent) const {
  for (size_t i = 0; i < fields.size(); ++i) {
    w.Line(indent + "::flow::rt::ProtoReset(out->" + MangleIdent(fields[i]->name) + ", m, " +
           std::to_string(i) + ");");
  }
  w.Line(indent +
         "return in.Message(m, [&](int32_t j, const ::flow::rt::ProtoField& f) -> "
         "::flow::rt::Status {");
  w.Line(indent + "  ::flow::rt::Status s;");
  w.Line(indent + "  switch (j) {");
  for (size_t i = 0; i < fields.size(); ++i) {
    w.Line(indent + "    case " + std::to_string(i) + ": s = " + ProtobufCodec(fields[i]->type) +
           "::Read(in, f, &out->" + MangleIdent(fields[i]->name) +
           "); if (!s.ok()) [[unlikely]] return ::flow::rt::ProtoFieldError(" +
           CppStringLiteral(fields[i]->Wire()) + ", s); break;");
  }
  w.Line(indent + "    default: (void)f; break;");
  w.Line(indent + "  }");
  w.Line(indent + "  return s;");
  w.Line(indent + "});");
}

void RecordTypes::EmitProtobufWrite(Writer& w, const std::string& value,
                                    const std::vector<const types::Field*>& fields,
                                    const std::string& indent) const {
  for (size_t i = 0; i < fields.size(); ++i) {
    w.Line(indent + "::flow::rt::ProtoWriteField<" + ProtobufCodec(fields[i]->type) + ">(" +
           std::to_string(i + 1) + ", " + value + "." + MangleIdent(fields[i]->name) + ", out);");
  }
}

void RecordTypes::EmitProtobufWriteAs(Writer& w, const std::string& value,
                                      const std::vector<const types::Field*>& fields,
                                      const std::string& plan, const std::string& indent) const {
  for (size_t i = 0; i < fields.size(); ++i) {
    w.Line(indent + "::flow::rt::ProtoWriteFieldAs<" + ProtobufCodec(fields[i]->type) + ">(" +
           plan + ".fields[" + std::to_string(i) + "], " + value + "." +
           MangleIdent(fields[i]->name) + ", out);");
  }
}

void RecordTypes::EmitProtobufCodecs(Writer& w) const {
  for (const Entry& e : entries_) {
    std::vector<const types::Field*> all;
    for (const types::Field& f : e.type.fields()) all.push_back(&f);
    w.Line("");
    w.Line("struct Proto" + e.name + " : ::flow::rt::ProtoRecord<Proto" + e.name +
           ", rec::" + e.name + "> {");
    w.Line(
        "  static ::flow::rt::Status ReadBody(::flow::rt::ProtoIn& in, const "
        "::flow::rt::ProtoMessage& m, rec::" +
        e.name + "* out) {");
    EmitProtobufRead(w, all, "    ");
    w.Line("  }");
    w.Line("  static void WriteBody(const rec::" + e.name + "& v, ::flow::rt::ProtoOut& out) {");
    if (all.empty()) w.Line("    (void)v; (void)out;");
    EmitProtobufWrite(w, "v", all, "    ");
    w.Line("  }");
    w.Line("  static void WriteBodyAs(const rec::" + e.name +
           "& v, const ::flow::rt::ProtoWritePlan& p, ::flow::rt::ProtoOut& out) {");
    if (all.empty()) w.Line("    (void)v; (void)p; (void)out;");
    EmitProtobufWriteAs(w, "v", all, "p", "    ");
    w.Line("  }");
    w.Line("};");
  }
}

}  // namespace flow::codegen
