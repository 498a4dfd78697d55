// textDocument/hover: the type of the name under the cursor, in Markdown: a field's type, a
// stream's record, a param's type, a schema, a function's signature and doc line from the stdlib
// registry, an extern fn's declaration, or the record an operator produces.
#include "lsp/features.h"
#include "sema/connectors.h"

namespace flow::lsp {

std::string RecordText(const types::Type& type) {
  if (type.kind() != types::Kind::kRecord) return type.ToString();
  std::string out = type.record_name().empty() ? "{" : type.record_name() + " {";
  if (type.fields().empty()) return out + "}";
  for (size_t i = 0; i < type.fields().size(); ++i) {
    const types::Field& f = type.fields()[i];
    std::string wire = f.wire_name.empty() ? "" : types::FlowStringLiteral(f.wire_name) + " as ";
    out += "\n  " + wire + f.name + ": " + f.type.ToString() +
           (i + 1 < type.fields().size() ? "," : "");
  }
  return out + "\n}";
}

namespace {

std::string Code(const std::string& text) {
  return "```flow\n" + text + "\n```";
}

std::string ExternText(const ast::ExternFnDecl& fn) {
  std::string out = "extern fn " + fn.name.name + "(";
  for (size_t i = 0; i < fn.params.size(); ++i) {
    std::string type = i < fn.param_types.size() && !fn.param_types[i].is_error()
                           ? fn.param_types[i].ToString()
                           : fn.params[i].type.name.name;
    out += (i ? ", " : "") + fn.params[i].name.name + ": " + type;
  }
  out += ") -> " + (fn.return_type.is_error() ? fn.returns.name.name : fn.return_type.ToString());
  std::string header;
  AppendJsonString(fn.header, &header);  // a C-like quoted spelling
  return out + " from " + header;
}

std::string ArgsText(const std::vector<sema::ArgSpec>& args) {
  std::string out;
  for (const sema::ArgSpec& a : args) {
    out += (out.empty() ? "" : ", ") + a.name + (a.required ? "" : "?") + ": " + a.type.ToString();
  }
  return out;
}

std::string ChoicesText(const std::vector<sema::ArgSpec>& args) {
  std::string out;
  for (const sema::ArgSpec& a : args) {
    if (a.choices.empty()) continue;
    out += "\n\n`" + a.name + "`: one of";
    for (const std::string& c : a.choices) out += " `" + c + "`";
  }
  return out;
}

// Where a field's data name differs from its script name, hover says so in both forms.
std::string WireNameText(const Occurrence& o) {
  if (o.wire_name.empty()) return "";
  return "\n\nnamed " + types::FlowStringLiteral(o.wire_name) + " in the data";
}

std::string HoverText(const Occurrence& o) {
  auto type_or_unknown = [](const types::Type& t) {
    return t.is_error() ? std::string("(unknown: the definition has errors)") : t.ToString();
  };
  switch (o.kind) {
    case SymbolKind::kParam:
      return Code("param " + o.name + ": " + type_or_unknown(o.type));
    case SymbolKind::kSchema:
      return Code("schema " + RecordText(o.type));
    case SymbolKind::kSchemaField:
      return Code(o.name + ": " + type_or_unknown(o.type)) + "\n\nfield of schema `" + o.owner +
             "`" + WireNameText(o);
    case SymbolKind::kField: {
      std::string text = Code(o.name + ": " + type_or_unknown(o.type));
      if (o.owner == "window") return text + "\n\nwindow bound (event time, ms)";
      if (!o.owner.empty()) return text + "\n\nfield of `" + o.owner + "`" + WireNameText(o);
      return text + "\n\nfield" + WireNameText(o);
    }
    case SymbolKind::kStream:
      return Code("stream " + o.name + ": " +
                  (o.type.is_error() ? type_or_unknown(o.type) : RecordText(o.type)));
    case SymbolKind::kExternFn:
      return o.extern_fn ? Code(ExternText(*o.extern_fn)) : "";
    case SymbolKind::kFunction: {
      if (o.function == nullptr) return "";
      const stdlib::FunctionSpec& fn = *o.function;
      std::string text = Code(stdlib::Signature(fn));
      text += fn.kind == stdlib::FunctionKind::kAggregate ? "\n\naggregate: " : "\n\n";
      text += fn.summary;
      if (!fn.example.empty()) text += "\n\nExample: `" + fn.example + "`";
      return text;
    }
    case SymbolKind::kConnector: {
      const sema::ConnectorSpec* c = sema::FindConnector(o.name, o.owner == "source");
      if (c == nullptr) return "";
      std::string text = Code(c->name + "(" + ArgsText(c->args) + ")") + "\n\n" + o.owner +
                         " connector (`?`: optional)" + ChoicesText(c->args);
      if (c->source && c->schema == sema::Need::kRequired) text += "\n\nneeds `as Schema`";
      if (!c->source && c->exactly_once) text += "\n\nsupports `exactly_once`";
      if (!c->example.empty()) text += "\n\nExample: `" + c->example + "`";
      return text;
    }
    case SymbolKind::kFormat: {
      const sema::FormatSpec* f = sema::FindFormat(o.name);
      if (f == nullptr) return "";
      return Code("format " + f->name + (f->args.empty() ? "" : "(" + ArgsText(f->args) + ")")) +
             "\n\nrecord format" + ChoicesText(f->args);
    }
    case SymbolKind::kOperator:
      if (o.type.is_error()) return "";
      return Code("| " + o.name + " -> " + RecordText(o.type)) +
             "\n\nthe records this step produces";
  }
  return "";
}

// Drops the ```flow fences and backticks of the Markdown form.
std::string PlainText(const std::string& markdown) {
  std::string out;
  size_t i = 0;
  while (i < markdown.size()) {
    if (markdown.compare(i, 8, "```flow\n") == 0) {
      i += 8;
    } else if (markdown.compare(i, 4, "\n```") == 0) {
      i += 4;
    } else if (markdown[i] == '`') {
      ++i;
    } else {
      out.push_back(markdown[i++]);
    }
  }
  return out;
}

}  // namespace

Json Hover(const Document& doc, Position pos, bool markdown) {
  const Analysis& a = *doc.analysis;
  if (!a.program) return Json();
  uint32_t offset = static_cast<uint32_t>(a.lines->ToOffset(pos));
  const Occurrence* o = FindOccurrence(a.occurrences, offset);
  if (o == nullptr) return Json();
  std::string text = HoverText(*o);
  if (text.empty()) return Json();
  Json contents = Json::MakeObject();
  contents.Set("kind", markdown ? "markdown" : "plaintext");
  contents.Set("value", markdown ? text : PlainText(text));
  Json result = Json::MakeObject();
  result.Set("contents", std::move(contents));
  result.Set("range", RangeJson(*a.lines, o->begin, o->end));
  return result;
}

}  // namespace flow::lsp
