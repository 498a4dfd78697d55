// textDocument/semanticTokens/full: the names the analysis resolved, typed by what they name, so
// an editor colours a field, a param and a stream differently even where the grammar cannot tell
// (a bare name in `where` is a field or a param). Keywords, literals and comments are left to the
// editor's grammar (TextMate / tree-sitter), which sees them without an analysis.
#include <algorithm>

#include "lsp/features.h"

namespace flow::lsp {
namespace {

enum TokenType : int {
  kParameter,
  kType,
  kProperty,
  kVariable,
  kFunction,
  kKeyword,
  kNamespace,
  kEnumMember
};
constexpr int kDeclarationModifier = 1;  // bit 0 of the legend's modifiers

int TypeOf(SymbolKind kind) {
  switch (kind) {
    case SymbolKind::kParam:
      return kParameter;
    case SymbolKind::kSchema:
      return kType;
    case SymbolKind::kSchemaField:
    case SymbolKind::kField:
      return kProperty;
    case SymbolKind::kStream:
      return kVariable;
    case SymbolKind::kExternFn:
    case SymbolKind::kFunction:
      return kFunction;
    case SymbolKind::kOperator:
      return kKeyword;
    case SymbolKind::kConnector:
      return kNamespace;
    case SymbolKind::kFormat:
      return kEnumMember;
  }
  return kVariable;
}

}  // namespace

const std::vector<std::string>& SemanticTokenTypes() {
  static const std::vector<std::string> types = {"parameter", "type",    "property",  "variable",
                                                 "function",  "keyword", "namespace", "enumMember"};
  return types;
}

Json SemanticTokens(const Document& doc) {
  Json data = Json::MakeArray();
  Json out = Json::MakeObject();
  const Analysis& a = *doc.analysis;
  if (!a.program) {
    out.Set("data", std::move(data));
    return out;
  }
  std::vector<const Occurrence*> sorted;
  for (const Occurrence& o : a.occurrences) {
    if (o.end > o.begin) sorted.push_back(&o);
  }
  // By position; at one position the declaration first (a schema field is also a field).
  std::stable_sort(sorted.begin(), sorted.end(), [](const Occurrence* x, const Occurrence* y) {
    if (x->begin != y->begin) return x->begin < y->begin;
    return x->is_declaration && !y->is_declaration;
  });
  Position previous{0, 0};
  uint32_t covered_to = 0;
  for (const Occurrence* o : sorted) {
    if (o->begin < covered_to) continue;  // tokens may not overlap
    const Position start = a.lines->ToPosition(o->begin);
    const Position end = a.lines->ToPosition(o->end);
    if (end.line != start.line) continue;  // nor span lines
    covered_to = o->end;
    data.Push(static_cast<int64_t>(start.line - previous.line));
    data.Push(static_cast<int64_t>(
        start.line == previous.line ? start.character - previous.character : start.character));
    data.Push(static_cast<int64_t>(end.character - start.character));
    data.Push(static_cast<int64_t>(TypeOf(o->kind)));
    data.Push(static_cast<int64_t>(o->is_declaration ? kDeclarationModifier : 0));
    previous = start;
  }
  out.Set("data", std::move(data));
  return out;
}

}  // namespace flow::lsp
