#pragma once
// Internal to flow::parse: maps ANTLR positions (code point indices) to our byte-offset ranges.

#include <antlr4-runtime.h>

#include <vector>

#include "diag/diagnostic.h"
#include "diag/source_manager.h"

namespace flow::parse {

class Context {
 public:
  Context(const diag::SourceManager& sm, uint32_t file, diag::DiagnosticEngine& diags);

  const diag::SourceManager& sm() const { return sm_; }
  uint32_t file() const { return file_; }
  diag::DiagnosticEngine& diags() { return diags_; }

  // Byte offset of a code point index (clamped).
  uint32_t Byte(size_t cp_index) const;
  diag::SourceRange RangeOfChars(size_t begin_cp, size_t end_cp) const;
  diag::SourceRange Range(const antlr4::Token* t) const;
  diag::SourceRange Range(antlr4::ParserRuleContext* ctx) const;
  // From the start of `a` to the end of `b`.
  diag::SourceRange Span(const diag::SourceRange& a, const diag::SourceRange& b) const;
  // An empty range just after token `t` (for "expected `)`" after the last good token).
  diag::SourceRange After(const antlr4::Token* t) const;

 private:
  const diag::SourceManager& sm_;
  uint32_t file_;
  diag::DiagnosticEngine& diags_;
  std::vector<uint32_t> cp_to_byte_;  // size = code points + 1
};

}  // namespace flow::parse
