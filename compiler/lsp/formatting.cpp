// textDocument/formatting: the canonical layout from flow::format (the engine behind `flowc fmt`),
// sent as one edit replacing the whole document. The client's tabSize sets the indent; the
// formatter refuses scripts with syntax errors, which becomes a RequestFailed error.
#include "lsp/features.h"

#include "format/format.h"

namespace flow::lsp {

std::optional<Json> Formatting(const Document& doc, int tab_size, std::string* error) {
  format::FormatOptions options;
  if (tab_size >= 1 && tab_size <= 16) options.indent = tab_size;
  format::FormatResult r = format::FormatSource(doc.path, doc.text, options);
  if (!r.ok) {
    *error = "cannot format: the script has syntax errors\n" + r.diagnostics;
    return std::nullopt;
  }
  Json edits = Json::MakeArray();
  if (r.text == doc.text) return edits;
  LineIndex lines(doc.text);
  Json edit = Json::MakeObject();
  edit.Set("range", RangeJson(lines, 0, static_cast<uint32_t>(doc.text.size())));
  edit.Set("newText", r.text);
  edits.Push(std::move(edit));
  return edits;
}

}  // namespace flow::lsp
