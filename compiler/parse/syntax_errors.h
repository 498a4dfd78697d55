#pragma once
// Internal to flow::parse: turns ANTLR's lexer and parser errors into our diagnostics with human
// wording ("expected `)`, found `|`"), and stops parsing once the error limit is reached.

#include <antlr4-runtime.h>

#include "FlowLexer.h"
#include "parse/context.h"

namespace flow::parse {

// The generated lexer with errors reported as invalid-character diagnostics.
class ReportingLexer : public FlowLexer {
 public:
  ReportingLexer(antlr4::CharStream* input, Context& ctx) : FlowLexer(input), ctx_(ctx) {}
  void notifyListeners(const antlr4::LexerNoViableAltException& e) override;

 private:
  Context& ctx_;
};

class SyntaxErrorStrategy : public antlr4::DefaultErrorStrategy {
 public:
  explicit SyntaxErrorStrategy(Context& ctx) : ctx_(ctx) {}

 protected:
  void reportNoViableAlternative(antlr4::Parser* recognizer,
                                 const antlr4::NoViableAltException& e) override;
  void reportInputMismatch(antlr4::Parser* recognizer,
                           const antlr4::InputMismatchException& e) override;
  void reportFailedPredicate(antlr4::Parser* recognizer,
                             const antlr4::FailedPredicateException& e) override;
  void reportUnwantedToken(antlr4::Parser* recognizer) override;
  void reportMissingToken(antlr4::Parser* recognizer) override;

 private:
  void Report(antlr4::Parser* recognizer, antlr4::Token* at, const std::string& message);
  Context& ctx_;
  antlr4::ParserRuleContext* last_statement_ = nullptr;
  size_t last_region_ = 0;  // 1 + token index where the last reported error's region starts
};

// "`)`", "end of file", "a name".
std::string DescribeToken(const antlr4::Token* t);
// "expected `)` or `,`" for small sets; empty when the set is too large to be helpful.
std::string DescribeExpected(const antlr4::misc::IntervalSet& set,
                             const antlr4::dfa::Vocabulary& vocab);

}  // namespace flow::parse
