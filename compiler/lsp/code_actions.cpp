// textDocument/codeAction: quick fixes from the front end's "did you mean `x`?" hints. A fix is
// offered only when the diagnostic's range is exactly one identifier (the misspelled name), so
// the edit replaces that name and nothing else.
#include "lsp/features.h"

namespace flow::lsp {
namespace {

bool IsIdentifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s) {
    bool word =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!word) return false;
  }
  return true;
}

// The `x` of "did you mean `x`?", or "".
std::string Suggestion(const std::string& help) {
  constexpr std::string_view kPrefix = "did you mean `";
  size_t at = help.find(kPrefix);
  if (at == std::string::npos) return "";
  size_t begin = at + kPrefix.size();
  size_t end = help.find('`', begin);
  if (end == std::string::npos) return "";
  std::string name = help.substr(begin, end - begin);
  return IsIdentifier(name) ? name : "";
}

}  // namespace

Json CodeActions(const Document& doc, const Range& range) {
  Json out = Json::MakeArray();
  const Analysis& a = *doc.analysis;
  size_t from = a.lines->ToOffset(range.start);
  size_t to = a.lines->ToOffset(range.end);
  for (const diag::Diagnostic& d : a.diagnostics) {
    if (!d.help || !d.range.valid()) continue;
    if (d.range.end < from || d.range.begin > to) continue;  // not at the requested range
    std::string replacement = Suggestion(*d.help);
    std::string_view current =
        std::string_view(a.text()).substr(d.range.begin, d.range.end - d.range.begin);
    if (replacement.empty() || !IsIdentifier(current) || current == replacement) continue;
    Json edit = Json::MakeObject();
    edit.Set("range", RangeJson(*a.lines, d.range.begin, d.range.end));
    edit.Set("newText", replacement);
    Json edits = Json::MakeArray();
    edits.Push(std::move(edit));
    Json changes = Json::MakeObject();
    changes.Set(doc.uri, std::move(edits));
    Json workspace_edit = Json::MakeObject();
    workspace_edit.Set("changes", std::move(changes));
    Json action = Json::MakeObject();
    action.Set("title", "Replace `" + std::string(current) + "` with `" + replacement + "`");
    action.Set("kind", "quickfix");
    action.Set("isPreferred", true);
    action.Set("edit", std::move(workspace_edit));
    out.Push(std::move(action));
  }
  return out;
}

}  // namespace flow::lsp
