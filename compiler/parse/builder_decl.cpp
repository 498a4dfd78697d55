// Statements and declarations.
#include <string>

#include "parse/builder.h"
#include "parse/literals.h"

namespace flow::parse {

ast::Program AstBuilder::Build(FlowParser::ProgramContext* tree) {
  ast::Program program;
  program.file = ctx_.file();
  if (tree == nullptr) return program;
  for (auto* s : tree->statement()) {
    if (ast::DeclPtr d = BuildStatement(s)) program.decls.push_back(std::move(d));
  }
  return program;
}

ast::DeclPtr AstBuilder::BuildStatement(FlowParser::StatementContext* s) {
  if (s == nullptr) return nullptr;
  if (s->paramDecl()) return BuildParam(s->paramDecl());
  if (s->schemaDecl()) return BuildSchema(s->schemaDecl());
  if (s->externFnDecl()) return BuildExternFn(s->externFnDecl());
  if (auto* sd = s->streamDecl()) {
    auto d = std::make_unique<ast::StreamDecl>();
    d->range = ctx_.Range(sd);
    d->name = BuildIdent(sd->ident());
    d->pipeline = BuildPipeline(sd->pipeline());
    return d;
  }
  if (auto* p = s->pipeline()) {
    auto d = std::make_unique<ast::PipelineStmt>();
    d->range = ctx_.Range(p);
    d->pipeline = BuildPipeline(p);
    return d;
  }
  return nullptr;
}

ast::Ident AstBuilder::BuildIdent(FlowParser::IdentContext* i) {
  ast::Ident id;
  if (i == nullptr) return id;
  id.name = i->getText();
  id.range = ctx_.Range(i);
  return id;
}

ast::TypeRef AstBuilder::BuildType(FlowParser::TypeRefContext* t, size_t depth) {
  ast::TypeRef ref;
  if (t == nullptr) return ref;
  ref.range = ctx_.Range(t);
  ref.name = BuildIdent(t->ident());
  ref.nullable = t->QUESTION() != nullptr;
  if (auto* arg = t->typeRef()) {
    // The pre-scan bounds `list<` nesting, so this recursion is bounded too.
    ref.arg = std::make_unique<ast::TypeRef>(BuildType(arg, depth + 1));
  }
  return ref;
}

ast::DeclPtr AstBuilder::BuildParam(FlowParser::ParamDeclContext* p) {
  auto d = std::make_unique<ast::ParamDecl>();
  d->range = ctx_.Range(p);
  d->name = BuildIdent(p->ident());
  d->type = BuildType(p->typeRef());
  if (p->expr()) d->default_value = BuildExpr(p->expr());
  return d;
}

ast::DeclPtr AstBuilder::BuildSchema(FlowParser::SchemaDeclContext* s) {
  auto d = std::make_unique<ast::SchemaDecl>();
  d->range = ctx_.Range(s);
  d->name = BuildIdent(s->ident());
  for (auto* f : s->fieldDecl()) {
    if (f == nullptr) continue;
    d->fields.push_back({BuildIdent(f->ident()), BuildType(f->typeRef())});
  }
  return d;
}

ast::DeclPtr AstBuilder::BuildExternFn(FlowParser::ExternFnDeclContext* f) {
  auto d = std::make_unique<ast::ExternFnDecl>();
  d->range = ctx_.Range(f);
  d->name = BuildIdent(f->ident());
  for (auto* p : f->fnParam()) {
    if (p == nullptr) continue;
    d->params.push_back({BuildIdent(p->ident()), BuildType(p->typeRef())});
  }
  d->returns = BuildType(f->typeRef());
  if (auto* s = f->STRING()) {
    d->header_range = ctx_.Range(s->getSymbol());
    std::string error;
    size_t at = 0;
    if (!UnescapeString(s->getText(), &d->header, &error, &at)) {
      ctx_.diags().Report(
          diag::Kind::kInvalidEscape,
          ctx_.sm().Range(ctx_.file(), d->header_range.begin + static_cast<uint32_t>(at),
                          d->header_range.begin + static_cast<uint32_t>(at) + 2),
          error);
    }
  }
  return d;
}

}  // namespace flow::parse
