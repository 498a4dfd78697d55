#pragma once
// flow::sema: checks an ast::Program and produces a CheckedProgram: every name resolved, every
// expression typed (annotated in place on the AST), every stream's output record known.
//
// Errors: reported to `diags`; after an error the checker substitutes types::Type::Error() and
// goes on, and anything involving an Error type is accepted silently, so one mistake gives one
// diagnostic. The result is always returned; it is only safe to generate code from it when no
// errors were reported. Threading: independent calls may run concurrently.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ast/decl.h"
#include "diag/diagnostic.h"
#include "diag/source_manager.h"

namespace flow::sema {

struct StreamInfo {
  const ast::StreamDecl* decl = nullptr;
  types::Type record;       // output record type (Error when the definition had errors)
  bool event_time = false;  // records carry event time and watermarks
  bool used = false;        // read by another stream or a sink pipeline
};

struct CheckedProgram {
  ast::Program program;
  std::map<std::string, const ast::ParamDecl*> params;
  std::map<std::string, const ast::SchemaDecl*> schemas;
  std::map<std::string, const ast::ExternFnDecl*> externs;
  std::map<std::string, StreamInfo> streams;
  std::vector<const ast::PipelineStmt*> sinks;  // top-level pipelines ending in `into`
};

std::unique_ptr<CheckedProgram> Check(ast::Program program, const diag::SourceManager& sm,
                                      diag::DiagnosticEngine& diags);

}  // namespace flow::sema
