#pragma once
// Internal to flow::format: prints a parsed program in the canonical layout through a Layout.
// Literals are printed as written (their source text), names and keywords canonically, and
// parentheses only where precedence needs them. The layout rules are listed in docs/compiler.md.

#include <cstdint>
#include <string>
#include <string_view>

#include "ast/decl.h"
#include "format/layout.h"

namespace flow::format {

class Printer {
 public:
  Printer(std::string_view source, Layout& out) : src_(source), out_(out) {}

  void Program(const ast::Program& program);

 private:
  // printer_decl.cpp
  void Decl(const ast::Decl& d);
  void Schema(const ast::SchemaDecl& s);
  void FieldName(const ast::FieldDecl& f);
  void Type(const ast::TypeRef& t);
  void Ident(const ast::Ident& id);
  void Duration(const ast::DurationRef& d);
  void Zone(const ast::ZoneRef& z);

  // printer_pipeline.cpp
  void Pipeline(const ast::Pipeline& p);
  void SourceHead(const ast::Source& s);  // `from connector [format ...] [as S]`
  void SourceClauses(const ast::Source& s, bool flat);
  void EventTime(const ast::EventTimeClause& e);
  void OnError(const ast::ErrorPolicy& e);
  void Connector(const ast::ConnectorCall& c);
  void Format(const ast::FormatClause& f);
  void Args(const std::vector<ast::NamedArg>& args);
  void Op(const ast::Op& op);
  void Window(const ast::WindowSpec& w);
  void Named(const ast::NamedExpr& n);

  // printer_expr.cpp
  void Expr(const ast::Expr& e, int min_prec = 0);
  void ExprBody(const ast::Expr& e);
  std::string LiteralText(const ast::LiteralExpr& e) const;
  size_t SkipBlanksAndComments(size_t pos, size_t end) const;
  size_t StringTokenEnd(size_t pos) const;

  // The source text of [begin, end).
  std::string_view Src(uint32_t begin, uint32_t end) const {
    return src_.substr(begin, end > begin ? end - begin : 0);
  }
  int I(int levels) const { return levels * out_.indent_unit(); }

  std::string_view src_;
  Layout& out_;
  uint32_t next_decl_begin_ = UINT32_MAX;  // where the statement after the current one starts
  int nest_ = 0;  // expressions entered: their line breaks are taken after those between items
};

// Binding strength of an expression as the grammar parses it (higher binds tighter).
int Precedence(const ast::Expr& e);

}  // namespace flow::format
