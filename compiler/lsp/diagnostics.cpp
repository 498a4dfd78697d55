// textDocument/publishDiagnostics: the front end's diagnostics in LSP form. Severity, range and
// message map directly; `code` is the diagnostic kind id (as in `flowc check`), notes with a
// location become relatedInformation and the help line is appended to the message.
#include "diag/kinds.h"
#include "lsp/features.h"

namespace flow::lsp {

Json PositionJson(Position p) {
  Json j = Json::MakeObject();
  j.Set("line", p.line);
  j.Set("character", p.character);
  return j;
}

Json RangeJson(const LineIndex& lines, uint32_t begin, uint32_t end) {
  Json j = Json::MakeObject();
  j.Set("start", PositionJson(lines.ToPosition(begin)));
  j.Set("end", PositionJson(lines.ToPosition(std::max(begin, end))));
  return j;
}

namespace {

int SeverityCode(diag::Severity s) {
  switch (s) {
    case diag::Severity::kError:
      return 1;
    case diag::Severity::kWarning:
      return 2;
    case diag::Severity::kNote:
      return 3;
  }
  return 1;
}

}  // namespace

Json PublishDiagnosticsParams(const Document& doc) {
  Json params = Json::MakeObject();
  params.Set("uri", doc.uri);
  params.Set("version", doc.version);
  Json list = Json::MakeArray();
  const Analysis& a = *doc.analysis;
  for (const diag::Diagnostic& d : a.diagnostics) {
    Json j = Json::MakeObject();
    j.Set("range", d.range.valid() ? RangeJson(*a.lines, d.range.begin, d.range.end)
                                   : RangeJson(*a.lines, 0, 0));
    j.Set("severity", SeverityCode(d.severity));
    j.Set("code", std::string(diag::KindId(d.kind)));
    j.Set("source", "flowc");
    std::string message = d.message;
    if (d.help) message += "\nhelp: " + *d.help;
    Json related = Json::MakeArray();
    for (const diag::Note& n : d.notes) {
      if (!n.range.valid()) {
        message += "\nnote: " + n.message;
        continue;
      }
      Json location = Json::MakeObject();
      location.Set("uri", doc.uri);
      location.Set("range", RangeJson(*a.lines, n.range.begin, n.range.end));
      Json info = Json::MakeObject();
      info.Set("location", std::move(location));
      info.Set("message", n.message);
      related.Push(std::move(info));
    }
    j.Set("message", message);
    if (!related.as_array().empty()) j.Set("relatedInformation", std::move(related));
    list.Push(std::move(j));
  }
  params.Set("diagnostics", std::move(list));
  return params;
}

}  // namespace flow::lsp
