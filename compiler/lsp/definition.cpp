// textDocument/definition: where the name under the cursor is declared: streams, schemas,
// params, extern fns, and for a field the schema field or alias that brought it into the record
// (followed through the pipeline, see query.cpp). Builtin functions and unresolved names have no
// definition: the result is null.
#include "lsp/features.h"

namespace flow::lsp {

Json Definition(const Document& doc, Position pos) {
  const Analysis& a = *doc.analysis;
  if (!a.program) return Json();
  uint32_t offset = static_cast<uint32_t>(a.lines->ToOffset(pos));
  const Occurrence* o = FindOccurrence(a.occurrences, offset);
  if (o == nullptr || !o->definition || !o->definition->valid()) return Json();
  Json location = Json::MakeObject();
  location.Set("uri", doc.uri);
  location.Set("range", RangeJson(*a.lines, o->definition->begin, o->definition->end));
  return location;
}

}  // namespace flow::lsp
