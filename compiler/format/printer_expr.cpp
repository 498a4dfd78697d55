// Expressions: minimal parentheses from the grammar's precedence, literals as written.
#include <cctype>

#include "format/printer.h"

namespace flow::format {
namespace {

// Levels from loosest to tightest, as in grammar/Flow.g4's `expr` rule.
enum Level : int {
  kOr = 1,
  kAnd,
  kNot,
  kIsNull,
  kIn,
  kCompare,
  kAdd,
  kMul,
  kNeg,
  kPostfix,
  kPrimary
};

int BinaryLevel(ast::BinaryOp op) {
  switch (op) {
    case ast::BinaryOp::kOr:
      return kOr;
    case ast::BinaryOp::kAnd:
      return kAnd;
    case ast::BinaryOp::kEq:
    case ast::BinaryOp::kNe:
    case ast::BinaryOp::kLt:
    case ast::BinaryOp::kLe:
    case ast::BinaryOp::kGt:
    case ast::BinaryOp::kGe:
      return kCompare;
    case ast::BinaryOp::kAdd:
    case ast::BinaryOp::kSub:
      return kAdd;
    case ast::BinaryOp::kMul:
    case ast::BinaryOp::kDiv:
    case ast::BinaryOp::kMod:
      return kMul;
  }
  return kPrimary;
}

}  // namespace

int Precedence(const ast::Expr& e) {
  switch (e.kind) {
    case ast::ExprKind::kBinary:
      return BinaryLevel(static_cast<const ast::BinaryExpr&>(e).op);
    case ast::ExprKind::kUnary:
      return static_cast<const ast::UnaryExpr&>(e).op == ast::UnaryOp::kNot ? kNot : kNeg;
    case ast::ExprKind::kIn:
      return kIn;
    case ast::ExprKind::kIsNull:
      return kIsNull;
    case ast::ExprKind::kField:
    case ast::ExprKind::kIndex:
      return kPostfix;
    default:
      return kPrimary;
  }
}

void Printer::Expr(const ast::Expr& e, int min_prec) {
  out_.Anchor(e.range.begin);
  bool parens = Precedence(e) < min_prec;
  if (parens) out_.Text("(");
  ++nest_;
  ExprBody(e);
  --nest_;
  if (parens) out_.Text(")");
}

void Printer::ExprBody(const ast::Expr& e) {
  switch (e.kind) {
    case ast::ExprKind::kError:
      // Only built after a reported syntax error, and such programs are never printed.
      out_.Text(Src(e.range.begin, e.range.end));
      return;
    case ast::ExprKind::kLiteral:
      out_.Text(LiteralText(static_cast<const ast::LiteralExpr&>(e)));
      return;
    case ast::ExprKind::kName:
      out_.Text(static_cast<const ast::NameExpr&>(e).name);
      return;
    case ast::ExprKind::kField: {
      const auto& f = static_cast<const ast::FieldExpr&>(e);
      Expr(*f.base, kPostfix);
      out_.Text(".");
      Ident(f.field);
      return;
    }
    case ast::ExprKind::kIndex: {
      const auto& x = static_cast<const ast::IndexExpr&>(e);
      Expr(*x.base, kPostfix);
      out_.Text("[");
      Expr(*x.index);
      out_.Text("]");
      return;
    }
    case ast::ExprKind::kUnary: {
      const auto& u = static_cast<const ast::UnaryExpr&>(e);
      if (u.op == ast::UnaryOp::kNot) {
        out_.Text("not ");
        Expr(*u.operand, kNot);
      } else {
        out_.Text("-");
        // `- -x` and `- -5`: keep the two minus signs apart.
        const ast::Expr* inner = u.operand.get();
        bool nested_minus = Precedence(*inner) >= kNeg && inner->kind == ast::ExprKind::kUnary;
        if (nested_minus) out_.Text(" ");
        Expr(*u.operand, kNeg);
      }
      return;
    }
    case ast::ExprKind::kBinary: {
      const auto& b = static_cast<const ast::BinaryExpr&>(e);
      int level = BinaryLevel(b.op);
      Expr(*b.lhs, level);
      out_.Anchor(b.op_range.begin);
      if (b.op == ast::BinaryOp::kAnd || b.op == ast::BinaryOp::kOr) {
        out_.Soft(nest_);
      } else {
        out_.Text(" ");
      }
      out_.Text(ast::Spelling(b.op));
      out_.Text(" ");
      Expr(*b.rhs, level + 1);
      return;
    }
    case ast::ExprKind::kIn: {
      const auto& x = static_cast<const ast::InExpr&>(e);
      Expr(*x.operand, kIn);
      out_.Text(x.negated ? " not in (" : " in (");
      for (size_t i = 0; i < x.items.size(); ++i) {
        if (i > 0) {
          out_.Text(",");
          out_.Soft(nest_);
        }
        Expr(*x.items[i]);
      }
      out_.Text(")");
      return;
    }
    case ast::ExprKind::kIsNull: {
      const auto& x = static_cast<const ast::IsNullExpr&>(e);
      Expr(*x.operand, kIsNull);
      out_.Text(x.negated ? " is not null" : " is null");
      return;
    }
    case ast::ExprKind::kCall: {
      const auto& c = static_cast<const ast::CallExpr&>(e);
      Ident(c.name);
      out_.Text("(");
      bool any = false;
      if (c.star) {
        out_.Text("*");
        any = true;
      }
      for (const ast::ExprPtr& a : c.args) {
        if (any) {
          out_.Text(",");
          out_.Soft(nest_);
        }
        Expr(*a);
        any = true;
      }
      out_.Text(")");
      return;
    }
    case ast::ExprKind::kCast: {
      const auto& c = static_cast<const ast::CastExpr&>(e);
      out_.Text("cast(");
      Expr(*c.operand);
      out_.Text(" as ");
      Type(c.target);
      out_.Text(")");
      return;
    }
    case ast::ExprKind::kCase: {
      const auto& c = static_cast<const ast::CaseExpr&>(e);
      out_.Text("case");
      for (const ast::CaseExpr::When& w : c.whens) {
        out_.Soft(nest_);
        out_.Text("when ");
        Expr(*w.condition);
        out_.Text(" then ");
        Expr(*w.value);
      }
      if (c.else_value) {
        out_.Soft(nest_);
        out_.Text("else ");
        Expr(*c.else_value);
      }
      out_.Text(" end");
      return;
    }
    case ast::ExprKind::kList: {
      const auto& l = static_cast<const ast::ListExpr&>(e);
      out_.Text("[");
      for (size_t i = 0; i < l.items.size(); ++i) {
        if (i > 0) {
          out_.Text(",");
          out_.Soft(nest_);
        }
        Expr(*l.items[i]);
      }
      out_.Text("]");
      return;
    }
  }
}

size_t Printer::SkipBlanksAndComments(size_t pos, size_t end) const {
  while (pos < end) {
    char c = src_[pos];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '(') {
      ++pos;
    } else if (src_.substr(pos, 2) == "//") {
      size_t nl = src_.find('\n', pos);
      pos = nl == std::string_view::npos ? end : nl;
    } else if (src_.substr(pos, 2) == "/*") {
      size_t close = src_.find("*/", pos + 2);
      pos = close == std::string_view::npos ? end : close + 2;
    } else {
      break;
    }
  }
  return pos;
}

size_t Printer::StringTokenEnd(size_t pos) const {
  size_t i = pos + 1;
  while (i < src_.size() && src_[i] != '"') i += src_[i] == '\\' ? 2 : 1;
  return std::min(i + 1, src_.size());
}

std::string Printer::LiteralText(const ast::LiteralExpr& e) const {
  switch (e.literal) {
    case ast::LiteralKind::kBool:
      return e.bool_value ? "true" : "false";
    case ast::LiteralKind::kNull:
      return "null";
    default:
      break;
  }
  // The range of a parenthesized literal covers its parentheses: find the token inside.
  size_t pos = SkipBlanksAndComments(e.range.begin, e.range.end);
  if (e.literal == ast::LiteralKind::kString) {
    return std::string(src_.substr(pos, StringTokenEnd(pos) - pos));
  }
  if (e.literal == ast::LiteralKind::kTimestamp) {
    pos = SkipBlanksAndComments(pos + std::string_view("timestamp").size(), e.range.end);
    return "timestamp " + std::string(src_.substr(pos, StringTokenEnd(pos) - pos));
  }
  size_t end = pos;
  while (end < e.range.end) {
    char c = src_[end];
    bool exponent_sign =
        (c == '+' || c == '-') && end > pos && (src_[end - 1] == 'e' || src_[end - 1] == 'E');
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && !exponent_sign)
      break;
    ++end;
  }
  return std::string(src_.substr(pos, end - pos));
}

}  // namespace flow::format
