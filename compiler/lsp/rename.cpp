// textDocument/prepareRename and textDocument/rename: every occurrence of the symbol under the
// cursor (as References finds them) gets the new name. Whether the new name is acceptable is
// decided by the front end itself, not by a second list of keywords: the renamed text is
// analysed, and a rename that adds an error (a keyword, not a name, a clash) is refused with it.
#include <algorithm>
#include <set>

#include "lsp/features.h"

namespace flow::lsp {
namespace {

bool Renamable(const Occurrence& o) {
  switch (o.kind) {
    case SymbolKind::kParam:
    case SymbolKind::kSchema:
    case SymbolKind::kSchemaField:
    case SymbolKind::kField:
    case SymbolKind::kStream:
      return o.definition.has_value() && o.definition->valid();
    // An extern fn's name is the C++ function's; the others are the language's own words.
    case SymbolKind::kExternFn:
    case SymbolKind::kFunction:
    case SymbolKind::kOperator:
    case SymbolKind::kConnector:
    case SymbolKind::kFormat:
      return false;
  }
  return false;
}

const Occurrence* At(const Analysis& a, Position pos) {
  if (!a.program) return nullptr;
  const Occurrence* o =
      FindOccurrence(a.occurrences, static_cast<uint32_t>(a.lines->ToOffset(pos)));
  return o != nullptr && Renamable(*o) ? o : nullptr;
}

struct Edit {
  uint32_t begin, end;
  std::string text;
};

size_t ErrorCount(const Analysis& a) {
  return static_cast<size_t>(std::count_if(
      a.diagnostics.begin(), a.diagnostics.end(),
      [](const diag::Diagnostic& d) { return d.severity == diag::Severity::kError; }));
}

}  // namespace

Json PrepareRename(const Document& doc, Position pos) {
  const Analysis& a = *doc.analysis;
  const Occurrence* o = At(a, pos);
  if (o == nullptr) return Json();
  Json out = Json::MakeObject();
  out.Set("range", RangeJson(*a.lines, o->begin, o->end));
  out.Set("placeholder", o->name);
  return out;
}

std::optional<Json> Rename(const Document& doc, Position pos, const std::string& new_name,
                           std::string* error) {
  const Analysis& a = *doc.analysis;
  const Occurrence* target = At(a, pos);
  if (target == nullptr) {
    *error = "nothing that can be renamed here (params, schemas, fields and streams can)";
    return std::nullopt;
  }
  if (new_name == target->name) return Json::MakeObject();
  std::vector<Edit> edits;
  for (const Occurrence* o : Matches(a, pos)) {
    std::string text = new_name;
    // A schema field's name is also its name in the data, unless it has a wire name: keep the
    // data's name by giving it one.
    if (o->kind == SymbolKind::kSchemaField && o->is_declaration && o->wire_name.empty()) {
      text = "\"" + o->name + "\" as " + new_name;
    }
    edits.push_back({o->begin, o->end, std::move(text)});
  }
  std::sort(edits.begin(), edits.end(),
            [](const Edit& x, const Edit& y) { return x.begin < y.begin; });
  // One name can be several occurrences (a schema field is also the field it declares).
  edits.erase(std::unique(edits.begin(), edits.end(),
                          [](const Edit& x, const Edit& y) { return x.begin == y.begin; }),
              edits.end());
  std::string renamed = a.text();
  for (auto it = edits.rbegin(); it != edits.rend(); ++it)
    renamed.replace(it->begin, it->end - it->begin, it->text);
  auto after = Analyze(doc.path, renamed);
  if (ErrorCount(*after) > ErrorCount(a) || (a.program && !after->program)) {
    *error = "renaming `" + target->name + "` to `" + new_name + "` would make the script invalid";
    for (const diag::Diagnostic& d : after->diagnostics) {
      if (d.severity == diag::Severity::kError) {
        *error += ": " + d.message;
        break;
      }
    }
    return std::nullopt;
  }
  // Valid is not enough: the renamed names must still mean the one symbol, and no other name
  // may start meaning it (a param renamed to a field's name is shadowed by the field).
  std::vector<uint32_t> now;  // where each renamed name starts in the renamed text
  int64_t shift = 0;
  for (const Edit& e : edits) {
    now.push_back(static_cast<uint32_t>(e.begin + shift) +
                  static_cast<uint32_t>(e.text.size() - new_name.size()));
    shift += static_cast<int64_t>(e.text.size()) - static_cast<int64_t>(e.end - e.begin);
  }
  std::optional<diag::SourceRange> meaning;
  bool same = after->program != nullptr;
  for (uint32_t at : now) {
    const Occurrence* o = same ? FindOccurrence(after->occurrences, at) : nullptr;
    if (o == nullptr || o->name != new_name || !o->definition) {
      same = false;
      break;
    }
    if (!meaning) meaning = o->definition;
    same = same && o->definition->begin == meaning->begin;
  }
  std::set<uint32_t> meaning_it;  // where names meaning the symbol start, after the rename
  if (same) {
    for (const Occurrence& o : after->occurrences) {
      if (o.function == nullptr && o.definition && o.definition->begin == meaning->begin)
        meaning_it.insert(o.begin);
    }
  }
  if (!same || meaning_it != std::set<uint32_t>(now.begin(), now.end())) {
    *error = "renaming `" + target->name + "` to `" + new_name +
             "` would change what names in the script refer to";
    return std::nullopt;
  }
  Json changes = Json::MakeArray();
  for (const Edit& e : edits) {
    Json edit = Json::MakeObject();
    edit.Set("range", RangeJson(*a.lines, e.begin, e.end));
    edit.Set("newText", e.text);
    changes.Push(std::move(edit));
  }
  Json by_uri = Json::MakeObject();
  by_uri.Set(doc.uri, std::move(changes));
  Json out = Json::MakeObject();
  out.Set("changes", std::move(by_uri));
  return out;
}

}  // namespace flow::lsp
