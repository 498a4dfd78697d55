#pragma once
// Internal to flow::parse: builds the AST from ANTLR's parse tree. Tolerates the partial trees
// ANTLR leaves after error recovery (any child may be missing). Expression recursion is bounded by
// ParseLimits::max_expr_depth.

#include "FlowParser.h"
#include "ast/decl.h"
#include "parse/context.h"
#include "parse/parser.h"

namespace flow::parse {

class AstBuilder {
 public:
  AstBuilder(Context& ctx, const ParseLimits& limits) : ctx_(ctx), limits_(limits) {}

  ast::Program Build(FlowParser::ProgramContext* tree);

 private:
  // builder_decl.cpp
  ast::DeclPtr BuildStatement(FlowParser::StatementContext* s);
  ast::DeclPtr BuildParam(FlowParser::ParamDeclContext* p);
  ast::DeclPtr BuildSchema(FlowParser::SchemaDeclContext* s);
  ast::DeclPtr BuildExternFn(FlowParser::ExternFnDeclContext* f);
  ast::TypeRef BuildType(FlowParser::TypeRefContext* t, size_t depth = 0);
  ast::Ident BuildIdent(FlowParser::IdentContext* i);
  void BuildField(FlowParser::FieldDeclContext* f, ast::SchemaDecl& schema);
  // The decoded text of a STRING token; a bad escape is reported at its exact place.
  std::string DecodeString(antlr4::tree::TerminalNode* s);

  // builder_pipeline.cpp
  ast::Pipeline BuildPipeline(FlowParser::PipelineContext* p);
  ast::Source BuildSource(FlowParser::SourceContext* s);
  ast::ConnectorCall BuildConnector(FlowParser::ConnectorContext* c);
  ast::FormatClause BuildFormat(FlowParser::FormatClauseContext* f);
  std::vector<ast::NamedArg> BuildArgs(const std::vector<FlowParser::NamedArgContext*>& args);
  ast::DurationRef BuildDuration(FlowParser::DurationRefContext* d);
  ast::WindowSpec BuildWindow(FlowParser::WindowSpecContext* w);
  ast::ZoneRef BuildZone(FlowParser::ZoneRefContext* z);
  ast::OpPtr BuildOp(FlowParser::PipeOpContext* op);
  ast::NamedExpr BuildNamed(FlowParser::ExprContext* e, FlowParser::IdentContext* alias);

  // builder_expr.cpp
  ast::ExprPtr BuildExpr(FlowParser::ExprContext* e);
  ast::ExprPtr BuildExprAt(FlowParser::ExprContext* e, size_t depth);
  ast::ExprPtr BuildPrimary(FlowParser::PrimaryContext* p, size_t depth);
  ast::ExprPtr Literal(FlowParser::PrimaryContext* p);
  ast::ExprPtr Error(antlr4::ParserRuleContext* at);

  Context& ctx_;
  ParseLimits limits_;
  bool depth_reported_ = false;  // one nesting-too-deep per expression is enough
};

}  // namespace flow::parse
