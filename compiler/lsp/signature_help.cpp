// textDocument/signatureHelp: inside the parentheses of a call to a builtin function or an extern
// fn, its signature with the parameter being typed marked. Read from the text before the cursor,
// so it works while the call is incomplete.
#include "lsp/features.h"

namespace flow::lsp {
namespace {

bool IsWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Finds the innermost unclosed `(` before `pos` and sets the callee name and the index of the
// argument the cursor is in. String literals are not skipped: a bracket or comma inside one can
// mislead it, which at worst shows a wrong parameter or no signature.
bool CallAt(std::string_view text, size_t pos, std::string* callee, size_t* argument) {
  int depth = 0;
  size_t commas = 0;
  size_t stop = pos > 4096 ? pos - 4096 : 0;  // calls are short; bound the scan
  for (size_t i = pos; i-- > stop;) {
    char c = text[i];
    if (c == ')' || c == ']') {
      ++depth;
    } else if (c == '[') {
      if (depth == 0) return false;  // inside a list literal
      --depth;
    } else if (c == '(') {
      if (depth > 0) {
        --depth;
        continue;
      }
      size_t end = i;
      while (end > 0 && (text[end - 1] == ' ' || text[end - 1] == '\t')) --end;
      size_t begin = end;
      while (begin > 0 && IsWordChar(text[begin - 1])) --begin;
      if (begin == end) return false;
      *callee = std::string(text.substr(begin, end - begin));
      *argument = commas;
      return true;
    } else if (c == ',' && depth == 0) {
      ++commas;
    } else if (c == '\n' && depth == 0 && i + 1 < text.size() && text[i + 1] != ' ' &&
               text[i + 1] != '\t' && text[i + 1] != '|') {
      return false;  // a new statement starts: no call is open
    }
  }
  return false;
}

Json Parameter(const std::string& label) {
  Json p = Json::MakeObject();
  p.Set("label", label);
  return p;
}

}  // namespace

Json SignatureHelp(const Document& doc, Position pos) {
  LineIndex lines(doc.text);
  size_t offset = lines.ToOffset(pos);
  std::string callee;
  size_t argument = 0;
  if (!CallAt(doc.text, offset, &callee, &argument)) return Json();

  Json signature = Json::MakeObject();
  Json params = Json::MakeArray();
  size_t count = 0;
  bool variadic = false;
  if (const stdlib::FunctionSpec* fn = stdlib::FindFunction(callee)) {
    signature.Set("label", stdlib::Signature(*fn));
    Json doc_text = Json::MakeObject();
    doc_text.Set("kind", "markdown");
    doc_text.Set("value", fn->summary);
    signature.Set("documentation", std::move(doc_text));
    for (const stdlib::ParamSpec& p : fn->params) params.Push(Parameter(p.name + ": " + p.type));
    count = fn->params.size();
    variadic = fn->variadic;
  } else {
    const Analysis* a = doc.analysis && doc.analysis->complete() ? doc.analysis.get()
                        : doc.last_good                          ? doc.last_good.get()
                                                                 : doc.analysis.get();
    if (a == nullptr || !a->program) return Json();
    auto it = a->program->externs.find(callee);
    if (it == a->program->externs.end()) return Json();
    const ast::ExternFnDecl& ext = *it->second;
    std::string label = ext.name.name + "(";
    for (size_t i = 0; i < ext.params.size(); ++i) {
      std::string p = ext.params[i].name.name + ": " +
                      (i < ext.param_types.size() ? ext.param_types[i].ToString() : "");
      label += (i ? ", " : "") + p;
      params.Push(Parameter(p));
    }
    signature.Set("label", label + ") -> " + ext.return_type.ToString());
    count = ext.params.size();
  }
  signature.Set("parameters", std::move(params));
  if (count == 0) {
    argument = 0;
  } else if (argument >= count) {
    if (!variadic) return Json();  // more arguments than the function takes
    argument = count - 1;
  }
  Json result = Json::MakeObject();
  Json signatures = Json::MakeArray();
  signatures.Push(std::move(signature));
  result.Set("signatures", std::move(signatures));
  result.Set("activeSignature", 0);
  result.Set("activeParameter", argument);
  return result;
}

}  // namespace flow::lsp
