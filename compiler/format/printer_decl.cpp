// Statements: params, schemas, extern functions, streams and sink pipelines.
#include <algorithm>

#include "format/printer.h"

namespace flow::format {

void Printer::Program(const ast::Program& program) {
  for (size_t i = 0; i < program.decls.size(); ++i) {
    next_decl_begin_ =
        i + 1 < program.decls.size() ? program.decls[i + 1]->range.begin : UINT32_MAX;
    Decl(*program.decls[i]);
  }
}

void Printer::Decl(const ast::Decl& d) {
  // An empty line above the first statement only survives below a leading comment (Layout
  // never starts the output with one).
  bool blank = BlankLineBefore(src_, d.range.begin);
  out_.StartLine(0, I(2), blank, /*top_level=*/true);
  out_.Anchor(d.range.begin);
  switch (d.kind) {
    case ast::DeclKind::kParam: {
      const auto& p = static_cast<const ast::ParamDecl&>(d);
      out_.Text("param ");
      Ident(p.name);
      out_.Text(": ");
      Type(p.type);
      if (p.default_value) {
        out_.Text(" = ");
        Expr(*p.default_value);
      }
      break;
    }
    case ast::DeclKind::kSchema:
      Schema(static_cast<const ast::SchemaDecl&>(d));
      break;
    case ast::DeclKind::kExternFn: {
      const auto& f = static_cast<const ast::ExternFnDecl&>(d);
      out_.Text("extern fn ");
      Ident(f.name);
      out_.Text("(");
      for (size_t i = 0; i < f.params.size(); ++i) {
        if (i > 0) {
          out_.Text(",");
          out_.Soft();
        }
        Ident(f.params[i].name);
        out_.Text(": ");
        Type(f.params[i].type);
      }
      out_.Text(") -> ");
      Type(f.returns);
      out_.Soft();
      out_.Text("from ");
      out_.Anchor(f.header_range.begin);
      out_.Text(Src(f.header_range.begin, f.header_range.end));
      break;
    }
    case ast::DeclKind::kStream: {
      const auto& s = static_cast<const ast::StreamDecl&>(d);
      out_.Text("stream ");
      Ident(s.name);
      out_.Text(" = ");
      Pipeline(s.pipeline);
      break;
    }
    case ast::DeclKind::kPipeline:
      Pipeline(static_cast<const ast::PipelineStmt&>(d).pipeline);
      break;
  }
  out_.FinishLine();
}

void Printer::Schema(const ast::SchemaDecl& s) {
  out_.Text("schema ");
  Ident(s.name);
  size_t open = src_.find('{', s.name.range.end);
  size_t close = s.range.end > 0 ? src_.rfind('}', s.range.end - 1) : std::string_view::npos;
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    open = close = s.name.range.end;  // cannot happen for a program that parsed
  }
  // One line when it was written on one line, has no comments inside and fits; else one field
  // per line with the types in one column.
  size_t first_after = src_.find_first_not_of(" \t\r", open + 1);
  bool written_flat = first_after == std::string_view::npos || src_[first_after] != '\n';
  auto flat = [&] {
    out_.Text(" {");
    for (size_t i = 0; i < s.fields.size(); ++i) {
      out_.Text(i == 0 ? " " : ", ");
      FieldName(s.fields[i]);
      out_.Text(": ");
      Type(s.fields[i].type);
    }
    out_.Text(s.fields.empty() ? "}" : " }");
  };
  if (s.fields.empty() || (written_flat && !out_.HasCommentIn(s.name.range.end, s.range.end) &&
                           out_.CurrentWidth() + out_.Measure(flat) <= out_.max_width())) {
    flat();
    return;
  }
  out_.Text(" {");
  int name_width = 0;
  for (const ast::FieldDecl& f : s.fields)
    name_width = std::max(name_width, out_.Measure([&] { FieldName(f); }));
  for (const ast::FieldDecl& f : s.fields) {
    out_.StartLine(I(1), I(2));
    int width = out_.Measure([&] { FieldName(f); });
    FieldName(f);
    out_.Text(":" + std::string(static_cast<size_t>(name_width - width + 1), ' '));
    Type(f.type);
    out_.Text(",");
  }
  out_.StartLine(I(1), I(2));
  out_.Anchor(static_cast<uint32_t>(close));  // comments after the last field
  out_.StartLine(0, I(2));
  out_.Text("}");
}

// A quoted name keeps its literal as written; it is dropped when it says no more than the
// identifier (`"plain": int` and `"x" as x: int` print as `plain: int` and `x: int`).
void Printer::FieldName(const ast::FieldDecl& f) {
  if (!f.quoted() || f.wire_name == f.name.name) {
    Ident(f.name);
    return;
  }
  out_.Anchor(f.wire_range.begin);
  out_.Text(Src(f.wire_range.begin, f.wire_range.end));
  out_.Text(" as ");
  Ident(f.name);
}

void Printer::Type(const ast::TypeRef& t) {
  out_.Anchor(t.range.begin);
  out_.Text(t.name.name);
  if (t.arg) {
    out_.Text("<");
    Type(*t.arg);
    out_.Text(">");
  }
  if (t.nullable) out_.Text("?");
}

void Printer::Ident(const ast::Ident& id) {
  out_.Anchor(id.range.begin);
  out_.Text(id.name);
}

void Printer::Duration(const ast::DurationRef& d) {
  out_.Anchor(d.range.begin);
  out_.Text(d.is_param ? std::string_view(d.param) : Src(d.range.begin, d.range.end));
}

void Printer::Zone(const ast::ZoneRef& z) {
  out_.Anchor(z.range.begin);
  out_.Text(z.is_param ? std::string_view(z.param) : Src(z.range.begin, z.range.end));
}

}  // namespace flow::format
