#pragma once
// flow::parse: source text -> ast::Program. The only phase that sees ANTLR.
//
// Errors: invalid UTF-8, lexical and syntax errors are reported to `diags` (several per run; the
// parser recovers at tokens and statements). The returned Program holds every statement that
// could be built; pieces that could not are replaced by ErrorExpr or left out.
// Robustness: brackets, `case`, `list<` and prefix operators nested deeper than
// `max_nesting` are rejected before parsing (nesting-too-deep), and the AST builder stops
// descending past `max_expr_depth`, so no input makes the parser or a tree walker recurse without
// bound. Threading: each call is independent; no shared mutable state.

#include <cstddef>
#include <cstdint>

#include "ast/decl.h"
#include "diag/diagnostic.h"
#include "diag/source_manager.h"

namespace flow::parse {

struct ParseLimits {
  size_t max_nesting = 256;      // Default: 256
  size_t max_expr_depth = 1000;  // Default: 1000 (AST depth of one expression, e.g. long a+b+c...)
};

ast::Program Parse(const diag::SourceManager& sm, uint32_t file, diag::DiagnosticEngine& diags,
                   const ParseLimits& limits = {});

// Reports the first invalid UTF-8 sequence (invalid-utf8, naming the byte offset) and returns
// false; true when the text is valid.
bool CheckUtf8(const diag::SourceManager& sm, uint32_t file, diag::DiagnosticEngine& diags);

}  // namespace flow::parse
