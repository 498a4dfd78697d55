#include "parse/context.h"

namespace flow::parse {

Context::Context(const diag::SourceManager& sm, uint32_t file, diag::DiagnosticEngine& diags)
    : sm_(sm), file_(file), diags_(diags) {
  const std::string& text = sm.text(file);
  cp_to_byte_.reserve(text.size() + 1);
  for (uint32_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) cp_to_byte_.push_back(i);
  }
  cp_to_byte_.push_back(static_cast<uint32_t>(text.size()));
}

uint32_t Context::Byte(size_t cp_index) const {
  if (cp_index >= cp_to_byte_.size()) return cp_to_byte_.back();
  return cp_to_byte_[cp_index];
}

diag::SourceRange Context::RangeOfChars(size_t begin_cp, size_t end_cp) const {
  return sm_.Range(file_, Byte(begin_cp), Byte(end_cp));
}

diag::SourceRange Context::Range(const antlr4::Token* t) const {
  if (t == nullptr) return {};
  if (t->getType() == antlr4::Token::EOF) {
    uint32_t end = cp_to_byte_.back();
    return sm_.Range(file_, end, end);
  }
  size_t start = t->getStartIndex();
  size_t stop = t->getStopIndex();
  if (start == INVALID_INDEX) return {};
  if (stop == INVALID_INDEX || stop < start) return RangeOfChars(start, start);
  return RangeOfChars(start, stop + 1);
}

diag::SourceRange Context::Range(antlr4::ParserRuleContext* ctx) const {
  if (ctx == nullptr) return {};
  diag::SourceRange a = Range(ctx->getStart());
  diag::SourceRange b = Range(ctx->getStop());
  if (!b.valid() || b.end < a.begin) return a;
  return Span(a, b);
}

diag::SourceRange Context::Span(const diag::SourceRange& a, const diag::SourceRange& b) const {
  if (!a.valid()) return b;
  if (!b.valid()) return a;
  return sm_.Range(file_, a.begin, std::max(a.end, b.end));
}

diag::SourceRange Context::After(const antlr4::Token* t) const {
  diag::SourceRange r = Range(t);
  if (!r.valid()) return r;
  return sm_.Range(file_, r.end, r.end);
}

}  // namespace flow::parse
