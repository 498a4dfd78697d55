// Statements and declarations.
#include <antlr4-runtime.h>

#include <algorithm>
#include <cctype>
#include <string>

#include "FlowLexer.h"
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
    if (f != nullptr) BuildField(f, *d);
  }
  return d;
}

namespace {

// True when scripts can write `text` as a name: it lexes as exactly the grammar's `ident` (so
// hard keywords such as `from` and anything with blanks, comments or punctuation are not).
bool IsScriptIdent(const std::string& text) {
  antlr4::ANTLRInputStream input(text);
  FlowLexer lexer(&input);
  lexer.removeErrorListeners();
  antlr4::CommonTokenStream tokens(&lexer);
  FlowParser parser(&tokens);
  parser.removeErrorListeners();
  FlowParser::IdentContext* id = parser.ident();
  return parser.getNumberOfSyntaxErrors() == 0 && tokens.LA(1) == antlr4::Token::EOF &&
         id != nullptr && id->getText() == text;
}

// A name scripts can use for `wire`, for the help text: runs of other characters become one `_`.
std::string SuggestIdent(const std::string& wire) {
  std::string s;
  for (unsigned char c : wire) {
    bool word = std::isalnum(c) != 0 && c < 0x80;
    if (word)
      s.push_back(static_cast<char>(c));
    else if (!s.empty() && s.back() != '_')
      s.push_back('_');
  }
  while (!s.empty() && s.back() == '_') s.pop_back();
  if (s.empty()) return "field";
  if (std::isdigit(static_cast<unsigned char>(s[0]))) s = "f_" + s;
  return IsScriptIdent(s) ? s : s + "_";
}

}  // namespace

void AstBuilder::BuildField(FlowParser::FieldDeclContext* f, ast::SchemaDecl& schema) {
  ast::FieldDecl field;
  field.type = BuildType(f->typeRef());
  antlr4::tree::TerminalNode* quoted = f->STRING();
  if (quoted == nullptr) {
    field.name = BuildIdent(f->ident());
    schema.fields.push_back(std::move(field));
    return;
  }
  field.wire_range = ctx_.Range(quoted->getSymbol());
  field.wire_name = DecodeString(quoted);
  const std::string& wire = field.wire_name;
  // Generated decoders hold wire names in C++ string_views made from literals, which end at NUL;
  // an empty one would read as "no wire name" (types::Field).
  if (wire.empty() || wire.find('\0') != std::string::npos) {
    ctx_.diags().Report(diag::Kind::kInvalidFieldName, field.wire_range,
                        wire.empty() ? "a field name cannot be empty"
                                     : "a field name cannot contain a NUL character");
  }
  if (f->ident() != nullptr) {
    field.name = BuildIdent(f->ident());
  } else {
    // `"plain": int`: the string is the script name too. Otherwise the field keeps the text as
    // its name (no script can refer to it, so there is no cascade of unknown-field errors).
    field.name = {wire, field.wire_range};
    if (!wire.empty() && !IsScriptIdent(wire)) {
      bool word = std::all_of(wire.begin(), wire.end(), [](unsigned char c) {
        return c < 0x80 && (std::isalnum(c) != 0 || c == '_');
      });
      ctx_.diags()
          .Report(diag::Kind::kInvalidFieldName, field.wire_range,
                  "field name " + types::FlowStringLiteral(wire) + " is " +
                      (word ? "a keyword, not an identifier" : "not an identifier"))
          .Help("add `as <name>` to give it a name scripts can use, e.g. `" + quoted->getText() +
                " as " + SuggestIdent(wire) + "`");
    }
  }
  schema.fields.push_back(std::move(field));
}

std::string AstBuilder::DecodeString(antlr4::tree::TerminalNode* s) {
  std::string out, error;
  size_t at = 0;
  if (!UnescapeString(s->getText(), &out, &error, &at)) {
    uint32_t begin = ctx_.Range(s->getSymbol()).begin + static_cast<uint32_t>(at);
    ctx_.diags().Report(diag::Kind::kInvalidEscape, ctx_.sm().Range(ctx_.file(), begin, begin + 2),
                        error);
  }
  return out;
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
    d->header = DecodeString(s);
  }
  return d;
}

}  // namespace flow::parse
