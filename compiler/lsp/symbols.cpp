// textDocument/documentSymbol: the outline: params, schemas (with their fields), extern fns,
// streams and sink pipelines, in source order.
#include <algorithm>

#include "lsp/features.h"

namespace flow::lsp {
namespace {

// SymbolKind values from the protocol.
constexpr int kSymField = 8, kSymFunction = 12, kSymVariable = 13, kSymConstant = 14,
              kSymStruct = 23, kSymEvent = 24;

Json Symbol(const LineIndex& lines, const std::string& name, const std::string& detail, int kind,
            const diag::SourceRange& whole, const diag::SourceRange& selection) {
  Json s = Json::MakeObject();
  s.Set("name", name.empty() ? std::string("(unnamed)") : name);
  if (!detail.empty()) s.Set("detail", detail);
  s.Set("kind", kind);
  // selectionRange must lie inside range.
  uint32_t begin = std::min(whole.begin, selection.begin);
  uint32_t end = std::max({whole.end, selection.end, begin});
  s.Set("range", RangeJson(lines, begin, end));
  s.Set("selectionRange", RangeJson(lines, selection.begin, selection.end));
  return s;
}

}  // namespace

Json DocumentSymbols(const Document& doc) {
  Json out = Json::MakeArray();
  const Analysis& a = *doc.analysis;
  if (!a.program) return out;
  const LineIndex& lines = *a.lines;
  for (const ast::DeclPtr& d : a.program->program.decls) {
    if (auto* p = ast::As<ast::ParamDecl>(d.get())) {
      out.Push(Symbol(lines, p->name.name, p->resolved.ToString(), kSymConstant, p->range,
                      p->name.range));
    } else if (auto* s = ast::As<ast::SchemaDecl>(d.get())) {
      Json sym = Symbol(lines, s->name.name, "schema", kSymStruct, s->range, s->name.range);
      Json children = Json::MakeArray();
      for (const ast::FieldDecl& f : s->fields) {
        const types::Field* rf = s->resolved.kind() == types::Kind::kRecord
                                     ? s->resolved.FindField(f.name.name)
                                     : nullptr;
        children.Push(Symbol(lines, f.name.name, rf ? rf->type.ToString() : "", kSymField,
                             f.name.range, f.name.range));
      }
      sym.Set("children", std::move(children));
      out.Push(std::move(sym));
    } else if (auto* fn = ast::As<ast::ExternFnDecl>(d.get())) {
      out.Push(Symbol(lines, fn->name.name, "extern fn", kSymFunction, fn->range, fn->name.range));
    } else if (auto* st = ast::As<ast::StreamDecl>(d.get())) {
      out.Push(Symbol(lines, st->name.name, "stream", kSymVariable, st->range, st->name.range));
    } else if (auto* pl = ast::As<ast::PipelineStmt>(d.get())) {
      std::string name = "pipeline";
      diag::SourceRange sel = pl->range;
      for (const ast::OpPtr& op : pl->pipeline.ops) {
        if (auto* into = ast::As<ast::IntoOp>(op.get())) {
          name = "into " + into->sink.name.name;
          sel = into->keyword_range;
        }
      }
      out.Push(Symbol(lines, name, "sink", kSymEvent, pl->range, sel));
    }
  }
  return out;
}

}  // namespace flow::lsp
