// `format protobuf`: every payload field of the records must have a Protobuf field type
// (sema/protobuf_types.h).

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sema/checker_impl.h"
#include "sema/message_metadata.h"
#include "sema/protobuf_types.h"

namespace flow::sema {

namespace {

bool IsIdentifier(const std::string& name) {
  bool ok = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
  for (char c : name) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  return ok;
}

// Record types nest only as deep as the script writes them, but a bound keeps this safe.
std::string Problem(const types::Field& f, bool sink, int depth) {
  const std::string& name = f.Wire();
  if (!IsIdentifier(name)) {
    return "field name \"" + name +
           "\" cannot be a Protobuf field name: Protobuf names are letters, digits and `_`, not "
           "starting with a digit";
  }
  types::Type t = f.type.AsNonNullable();
  if (t.kind() == types::Kind::kList) {
    const types::Type& e = t.element();
    if (e.kind() == types::Kind::kList) {
      return "field `" + name +
             "` is a list of lists, which has no Protobuf field type (repeated fields cannot "
             "nest)";
    }
    if (sink && e.nullable()) {
      return "field `" + name +
             "` is a list with nullable elements, which Protobuf cannot write (repeated fields "
             "hold no nulls)";
    }
    t = e.AsNonNullable();
  }
  if (t.kind() == types::Kind::kRecord && depth < 64) {
    for (const types::Field& g : t.fields()) {
      std::string p = Problem(g, sink, depth + 1);
      if (!p.empty()) return p;
    }
  }
  return "";
}

}  // namespace

std::string ProtobufFieldProblem(const types::Field& f, bool sink) {
  return Problem(f, sink, 0);
}

bool ReadProtoFile(const std::string& script, const std::string& path, std::string* text,
                   std::string* error) {
  std::filesystem::path p(path);
  if (p.is_relative()) p = std::filesystem::path(script).parent_path() / p;
  std::ifstream in(p, std::ios::binary);
  std::ostringstream body;
  if (in) body << in.rdbuf();
  if (!in || in.bad()) {
    *error = "cannot read the .proto file `" + p.string() +
             "`: " + (std::filesystem::exists(p) ? "not readable" : "no such file");
    return false;
  }
  if (text != nullptr) *text = body.str();
  return true;
}

void Checker::CheckProtobufArgs(const ast::FormatClause& format, const ast::ConnectorCall& c) {
  const ast::NamedArg *registry = nullptr, *proto = nullptr, *message = nullptr;
  std::vector<const ast::NamedArg*> registry_only;
  for (const ast::NamedArg& a : format.args) {
    const std::string& n = a.name.name;
    if (n == "registry") registry = &a;
    if (n == "proto") proto = &a;
    if (n == "message") message = &a;
    if (n == "subject" || n == "credentials") registry_only.push_back(&a);
  }
  if ((registry == nullptr) == (proto == nullptr)) {
    diags_
        .Report(registry ? diag::Kind::kInvalidArgument : diag::Kind::kMissingArgument,
                registry ? registry->name.range : format.range,
                registry ? "`format protobuf` takes `registry` or `proto`, not both"
                         : "`format protobuf` needs `registry` or `proto`")
        .Help(registry ? "with a registry, the job finds each message's schema there and "
                         "registers its own; remove `proto` and `message`"
                       : "add `registry: url` (Confluent's wire format) or `proto: \"file.proto\", "
                         "message: \"pkg.Message\"` (plain Protobuf messages)");
    return;
  }
  if (registry != nullptr) {
    if (message != nullptr) {
      diags_
          .Report(diag::Kind::kInvalidArgument, message->name.range,
                  "`message` goes with `proto`; with a registry it is not used (a record names "
                  "its schema and message, a sink registers the script's own)")
          .Help("remove `message: ...`");
    }
    return;
  }
  for (const ast::NamedArg* a : registry_only) {
    diags_
        .Report(diag::Kind::kInvalidArgument, a->name.range,
                "`" + a->name.name + "` is for a schema registry, and this format reads `proto`")
        .Help("remove `" + a->name.name + ": ...`");
  }
  if (message == nullptr) {
    diags_
        .Report(diag::Kind::kMissingArgument, proto->name.range,
                "`proto` needs `message`: which message of the file the records are")
        .Help("add `message: \"pkg.Message\"` (the full name, package first)");
  }
  const auto* lit = ast::As<ast::LiteralExpr>(proto->value.get());
  if (lit == nullptr || lit->literal != ast::LiteralKind::kString) {
    diags_
        .Report(diag::Kind::kNotConstant, proto->value->range,
                "`proto` must be a string literal: the file is read when the job is compiled")
        .Help("write the path, relative to this script's folder");
    return;
  }
  std::string error;
  if (ReadProtoFile(sm_.name(c.range.file), lit->string_value, nullptr, &error)) return;
  diags_.Report(diag::Kind::kIoError, proto->value->range, error)
      .Help("the path is relative to this script's folder");
}

void Checker::CheckProtobuf(const ast::FormatClause& format, const ast::ConnectorCall& c,
                            const types::Type& record, bool sink) {
  if (record.kind() != types::Kind::kRecord) return;
  std::vector<MessageMetadata> metadata =
      c.name.name == "kafka" ? MessageMetadataOf(c, sink) : std::vector<MessageMetadata>{};
  for (const types::Field& f : record.fields()) {
    if (IsMetadataField(metadata, f.name)) continue;  // not in the message
    std::string problem = ProtobufFieldProblem(f, sink);
    if (problem.empty()) continue;
    const char* help = !IsIdentifier(f.Wire())
                           ? (sink ? "rename the field with `select ... as name`"
                                   : "a .proto field has such a name: write it as the .proto does")
                       : problem.find("list of lists") != std::string::npos
                           ? "wrap the inner list in a record"
                           : "make the elements non-nullable, e.g. with `coalesce` in a `select`";
    diags_.Report(diag::Kind::kTypeMismatch, format.range, problem).Help(help);
  }
}

}  // namespace flow::sema
