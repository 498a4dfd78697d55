// textDocument/references and textDocument/documentHighlight: every occurrence that names the same
// thing as the one under the cursor: the same declaration (streams, schemas, params, extern fns,
// fields through the pipeline, aliases) or, for builtin functions, the same registry entry.
// Step keywords, connectors and formats have no references.
#include <algorithm>

#include "lsp/features.h"

namespace flow::lsp {
namespace {

bool SameSymbol(const Occurrence& a, const Occurrence& b) {
  if (a.function != nullptr) return a.function == b.function;
  if (!a.definition || !b.definition) return false;
  return a.definition->begin == b.definition->begin && a.definition->end == b.definition->end;
}

}  // namespace

std::vector<const Occurrence*> Matches(const Analysis& a, Position pos) {
  std::vector<const Occurrence*> out;
  if (!a.program) return out;
  const Occurrence* target =
      FindOccurrence(a.occurrences, static_cast<uint32_t>(a.lines->ToOffset(pos)));
  if (target == nullptr || (target->function == nullptr && !target->definition)) return out;
  for (const Occurrence& o : a.occurrences) {
    if (SameSymbol(*target, o)) out.push_back(&o);
  }
  std::sort(out.begin(), out.end(),
            [](const Occurrence* x, const Occurrence* y) { return x->begin < y->begin; });
  return out;
}

Json References(const Document& doc, Position pos, bool include_declaration) {
  Json out = Json::MakeArray();
  const Analysis& a = *doc.analysis;
  for (const Occurrence* o : Matches(a, pos)) {
    if (o->is_declaration && !include_declaration) continue;
    Json location = Json::MakeObject();
    location.Set("uri", doc.uri);
    location.Set("range", RangeJson(*a.lines, o->begin, o->end));
    out.Push(std::move(location));
  }
  return out;
}

Json DocumentHighlights(const Document& doc, Position pos) {
  constexpr int kRead = 2, kWrite = 3;  // DocumentHighlightKind
  Json out = Json::MakeArray();
  const Analysis& a = *doc.analysis;
  for (const Occurrence* o : Matches(a, pos)) {
    Json h = Json::MakeObject();
    h.Set("range", RangeJson(*a.lines, o->begin, o->end));
    h.Set("kind", o->is_declaration ? kWrite : kRead);
    out.Push(std::move(h));
  }
  return out;
}

}  // namespace flow::lsp
