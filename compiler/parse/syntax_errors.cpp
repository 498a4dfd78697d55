#include "parse/syntax_errors.h"

#include <algorithm>
#include <set>

#include "FlowParser.h"

namespace flow::parse {
namespace {

constexpr size_t kMaxExpectedListed = 6;

bool IsSoftKeyword(size_t type) {
  switch (type) {
    case FlowParser::TIME:
    case FlowParser::KEY:
    case FlowParser::EVENT:
    case FlowParser::ERROR:
    case FlowParser::FAIL:
    case FlowParser::SKIP_:
    case FlowParser::SESSION:
    case FlowParser::TUMBLING:
    case FlowParser::SLIDING:
    case FlowParser::EVERY:
    case FlowParser::LATENESS:
    case FlowParser::PROCESSING:
    case FlowParser::WATERMARK:
    case FlowParser::IDLE:
    case FlowParser::FORMAT:
    case FlowParser::WITHIN:
    case FlowParser::TIMESTAMP:
    case FlowParser::DEAD_LETTER:
    case FlowParser::ZONE:
      return true;
    default:
      return false;
  }
}

std::string TypeName(size_t type, const antlr4::dfa::Vocabulary& vocab) {
  switch (type) {
    case antlr4::Token::EOF:
      return "end of file";
    case FlowParser::IDENT:
      return "a name";
    case FlowParser::STRING:
      return "a string";
    case FlowParser::INT:
      return "an integer";
    case FlowParser::FLOAT:
      return "a float";
    case FlowParser::DURATION:
      return "a duration such as `5s`";
    default:
      break;
  }
  std::string lit = vocab.getLiteralName(type);
  if (lit.size() >= 2 && lit.front() == '\'') return "`" + lit.substr(1, lit.size() - 2) + "`";
  return vocab.getDisplayName(type);
}

// The printable form of a token's text, shortened.
std::string Shorten(const std::string& text) {
  std::string out;
  size_t cps = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = text[i];
    if ((c & 0xC0) != 0x80 && ++cps > 30) {
      out += "...";
      break;
    }
    out += c == '\n' ? ' ' : static_cast<char>(c);
  }
  return out;
}

bool IsStatementStart(const antlr4::misc::IntervalSet& set) {
  return set.contains(static_cast<size_t>(FlowParser::PARAM)) &&
         set.contains(static_cast<size_t>(FlowParser::SCHEMA)) &&
         set.contains(static_cast<size_t>(FlowParser::STREAM));
}

}  // namespace

std::string DescribeToken(const antlr4::Token* t) {
  if (t == nullptr || t->getType() == antlr4::Token::EOF) return "end of file";
  return "`" + Shorten(t->getText()) + "`";
}

std::string DescribeExpected(const antlr4::misc::IntervalSet& set,
                             const antlr4::dfa::Vocabulary& vocab) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  bool has_ident = set.contains(static_cast<size_t>(FlowParser::IDENT));
  for (size_t type : set.toList()) {
    if (has_ident && IsSoftKeyword(type)) continue;
    if (type == antlr4::Token::EPSILON) continue;
    std::string n = TypeName(type, vocab);
    if (seen.insert(n).second) names.push_back(n);
  }
  if (set.contains(static_cast<size_t>(FlowParser::INT)) &&
      set.contains(static_cast<size_t>(FlowParser::STRING)) &&
      set.contains(static_cast<size_t>(FlowParser::CASE))) {
    return "expected an expression";
  }
  if (names.empty() || names.size() > kMaxExpectedListed) return "";
  std::string out = "expected ";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

void ReportingLexer::notifyListeners(const antlr4::LexerNoViableAltException& e) {
  size_t start = tokenStartCharIndex;
  size_t stop = std::max(start + 1, _input->index());
  diag::SourceRange r = ctx_.RangeOfChars(start, start + 1);
  std::string text = ctx_.sm().text(ctx_.file()).substr(r.begin, r.end - r.begin);
  unsigned char c = text.empty() ? 0 : text[0];
  std::string shown;
  if (c < 0x20 || c == 0x7f) {
    static const char* kHex = "0123456789ABCDEF";
    shown = std::string("U+00") + kHex[c >> 4] + kHex[c & 15];
  } else {
    shown = "`" + text + "`";
  }
  (void)stop;
  auto& d = ctx_.diags().Report(diag::Kind::kInvalidCharacter, r, "unexpected character " + shown);
  if (c == '\'') d.Help("strings use double quotes: \"text\"");
  if (c == '!') d.Help("use `not` for negation and `!=` for inequality");
  if (c == '&') d.Help("use `and`");
  if (c == '#') d.Help("comments start with `//`");
  if (ctx_.diags().saturated()) throw antlr4::ParseCancellationException();
}

void SyntaxErrorStrategy::Report(antlr4::Parser* recognizer, antlr4::Token* at,
                                 const std::string& message) {
  // One syntax error per statement: what follows the first is usually a consequence of it.
  antlr4::ParserRuleContext* statement = recognizer->getContext();
  while (statement && !dynamic_cast<FlowParser::StatementContext*>(statement)) {
    statement = dynamic_cast<antlr4::ParserRuleContext*>(statement->parent);
  }
  if (statement) {
    if (statement == last_statement_) return;
    last_statement_ = statement;
  }
  // Also one per source region: a region starts at a token in column 0 (statements start there by
  // convention; continuation lines are indented), so recovery debris after an error stays quiet.
  size_t region = 0;
  if (at != nullptr) {
    antlr4::TokenStream* tokens = recognizer->getTokenStream();
    for (size_t i = at->getTokenIndex() + 1; i-- > 0;) {
      antlr4::Token* t = tokens->get(i);
      if (t->getChannel() == antlr4::Token::DEFAULT_CHANNEL && t->getCharPositionInLine() == 0) {
        region = i + 1;
        break;
      }
    }
  }
  if (region != 0 && region == last_region_) return;
  last_region_ = region;
  diag::SourceRange range = ctx_.Range(at);
  if (at != nullptr && at->getType() == antlr4::Token::EOF) {
    // Point just after the last real token rather than at an empty line past the end.
    antlr4::Token* last = recognizer->getTokenStream()->LT(-1);
    if (last != nullptr) range = ctx_.After(last);
  }
  ctx_.diags().Report(diag::Kind::kSyntaxError, range, message);
  if (ctx_.diags().saturated()) throw antlr4::ParseCancellationException();
}

void SyntaxErrorStrategy::reportNoViableAlternative(antlr4::Parser* recognizer,
                                                    const antlr4::NoViableAltException& e) {
  antlr4::Token* t = e.getOffendingToken();
  antlr4::misc::IntervalSet expected = e.getExpectedTokens();
  std::string msg = "unexpected " + DescribeToken(t);
  if (IsStatementStart(expected)) {
    msg +=
        "; expected a statement (`param`, `schema`, `stream`, `extern fn`, `from ...` or a stream "
        "name)";
  } else if (std::string exp = DescribeExpected(expected, recognizer->getVocabulary());
             !exp.empty()) {
    msg += ", " + exp;
  }
  Report(recognizer, t, msg);
}

void SyntaxErrorStrategy::reportInputMismatch(antlr4::Parser* recognizer,
                                              const antlr4::InputMismatchException& e) {
  antlr4::Token* t = e.getOffendingToken();
  antlr4::misc::IntervalSet expected = e.getExpectedTokens();
  std::string exp = DescribeExpected(expected, recognizer->getVocabulary());
  std::string msg;
  if (IsStatementStart(expected)) {
    msg = "unexpected " + DescribeToken(t) +
          "; expected a statement (`param`, `schema`, `stream`, `extern fn`, `from ...` or a "
          "stream name)";
  } else if (exp.empty()) {
    msg = "unexpected " + DescribeToken(t);
  } else {
    msg = exp + ", found " + DescribeToken(t);
  }
  Report(recognizer, t, msg);
}

void SyntaxErrorStrategy::reportFailedPredicate(antlr4::Parser* recognizer,
                                                const antlr4::FailedPredicateException& e) {
  Report(recognizer, e.getOffendingToken(), "unexpected " + DescribeToken(e.getOffendingToken()));
}

void SyntaxErrorStrategy::reportUnwantedToken(antlr4::Parser* recognizer) {
  if (inErrorRecoveryMode(recognizer)) return;
  beginErrorCondition(recognizer);
  antlr4::Token* t = recognizer->getCurrentToken();
  std::string msg = "unexpected " + DescribeToken(t);
  antlr4::misc::IntervalSet expected = getExpectedTokens(recognizer);
  if (IsStatementStart(expected)) {
    msg +=
        "; expected a statement (`param`, `schema`, `stream`, `extern fn`, `from ...` or a stream "
        "name)";
  } else if (std::string exp = DescribeExpected(expected, recognizer->getVocabulary());
             !exp.empty()) {
    msg += ", " + exp;
  }
  Report(recognizer, t, msg);
}

void SyntaxErrorStrategy::reportMissingToken(antlr4::Parser* recognizer) {
  if (inErrorRecoveryMode(recognizer)) return;
  beginErrorCondition(recognizer);
  antlr4::Token* t = recognizer->getCurrentToken();
  std::string exp = DescribeExpected(getExpectedTokens(recognizer), recognizer->getVocabulary());
  if (exp.empty()) exp = "something else";
  Report(recognizer, t, exp + ", found " + DescribeToken(t));
}

}  // namespace flow::parse
