#include "plan/fold_eval.h"

#include <type_traits>
#include <utility>

#include "flow/runtime/exec/cast.h"
#include "flow/runtime/exec/ops.h"
#include "flow/stdlib/scalar.h"

namespace flow::plan::fold {
namespace {

namespace ops = exec::ops;
using exec::CastKind;
using types::Kind;

template <typename T>
using Plain = fn::UnderlyingT<T>;
template <typename T>
inline constexpr bool kNumber = std::is_same_v<T, int64_t> || std::is_same_v<T, double>;
template <typename T>
inline constexpr bool kNullConstant = std::is_same_v<std::remove_cvref_t<T>, std::monostate>;

// A runtime result (plain or std::optional) as a constant.
template <typename R>
Constant ToConstant(const R& r) {
  if constexpr (fn::kIsOptional<R>) {
    if (!r.has_value()) return Constant();
    return ToConstant(*r);
  } else if constexpr (std::is_same_v<R, bool>) {
    return Constant(std::in_place_type<bool>, r);
  } else if constexpr (std::is_integral_v<R>) {
    return Constant(std::in_place_type<int64_t>, static_cast<int64_t>(r));
  } else if constexpr (std::is_floating_point_v<R>) {
    return Constant(std::in_place_type<double>, static_cast<double>(r));
  } else {
    return Constant(std::in_place_type<std::string>, std::string(r));
  }
}

// Calls f with both operands as generated code would pass them: a null operand becomes an empty
// std::optional of the other operand's type, so the runtime's own null rules apply.
template <typename A, typename B, typename F>
std::optional<Constant> WithNulls(const A& a, const B& b, F f) {
  if constexpr (kNullConstant<A> && kNullConstant<B>) {
    return Constant();  // every operator gives null for two nulls (and/or included)
  } else if constexpr (kNullConstant<A>) {
    return f(std::optional<B>(), b);
  } else if constexpr (kNullConstant<B>) {
    return f(a, std::optional<A>());
  } else {
    return f(a, b);
  }
}

template <typename L, typename R>
bool IsIntegerDivisionByZero(const L& l, const R& r) {
  if constexpr (std::is_same_v<Plain<L>, int64_t> && std::is_same_v<Plain<R>, int64_t>) {
    return fn::detail::Present(l) && fn::detail::Present(r) && fn::detail::Value(r) == 0;
  } else {
    return false;
  }
}

// The operator on two operands whose C++ types the checker allows together; nullopt otherwise
// (the folder then leaves the expression alone).
template <typename L, typename R>
std::optional<Constant> Apply(ast::BinaryOp op, const L& l, const R& r) {
  using ast::BinaryOp;
  using PL = Plain<L>;
  using PR = Plain<R>;
  constexpr bool numbers = kNumber<PL> && kNumber<PR>;
  constexpr bool same = std::is_same_v<PL, PR>;
  constexpr bool strings = same && std::is_same_v<PL, std::string>;
  constexpr bool bools = same && std::is_same_v<PL, bool>;
  switch (op) {
    case BinaryOp::kAdd:
      if constexpr (numbers || strings) return ToConstant(ops::Add(l, r));
      break;
    case BinaryOp::kSub:
      if constexpr (numbers) return ToConstant(ops::Sub(l, r));
      break;
    case BinaryOp::kMul:
      if constexpr (numbers) return ToConstant(ops::Mul(l, r));
      break;
    case BinaryOp::kDiv:
      if constexpr (numbers) {
        if (IsIntegerDivisionByZero(l, r)) return std::nullopt;  // the run-time error stays
        return ToConstant(ops::Div(l, r, "constant"));
      }
      break;
    case BinaryOp::kMod:
      if constexpr (numbers) {
        if (IsIntegerDivisionByZero(l, r)) return std::nullopt;
        return ToConstant(ops::Mod(l, r, "constant"));
      }
      break;
    case BinaryOp::kEq:
      if constexpr (numbers || same) return ToConstant(ops::Eq(l, r));
      break;
    case BinaryOp::kNe:
      if constexpr (numbers || same) return ToConstant(ops::Ne(l, r));
      break;
    case BinaryOp::kLt:
      if constexpr (numbers || same) return ToConstant(ops::Lt(l, r));
      break;
    case BinaryOp::kLe:
      if constexpr (numbers || same) return ToConstant(ops::Le(l, r));
      break;
    case BinaryOp::kGt:
      if constexpr (numbers || same) return ToConstant(ops::Gt(l, r));
      break;
    case BinaryOp::kGe:
      if constexpr (numbers || same) return ToConstant(ops::Ge(l, r));
      break;
    case BinaryOp::kAnd:
      if constexpr (bools) return ToConstant(ops::And(l, r));
      break;
    case BinaryOp::kOr:
      if constexpr (bools) return ToConstant(ops::Or(l, r));
      break;
  }
  return std::nullopt;
}

template <CastKind F, CastKind T>
std::optional<Constant> CastAs(const Constant& x) {
  using From = typename exec::cast_detail::Repr<F>::type;
  const From* v = std::get_if<From>(&x);
  if (v == nullptr) return std::nullopt;
  return ToConstant(exec::Cast<F, T>(*v));
}

template <CastKind F>
std::optional<Constant> CastFrom(const Constant& x, CastKind to) {
  switch (to) {
    case CastKind::kBool:
      return CastAs<F, CastKind::kBool>(x);
    case CastKind::kInt:
      return CastAs<F, CastKind::kInt>(x);
    case CastKind::kFloat:
      return CastAs<F, CastKind::kFloat>(x);
    case CastKind::kString:
      return CastAs<F, CastKind::kString>(x);
    case CastKind::kTimestamp:
      return CastAs<F, CastKind::kTimestamp>(x);
    case CastKind::kDuration:
      return CastAs<F, CastKind::kDuration>(x);
    default:
      return std::nullopt;
  }
}

const std::string& Text(const Constant& c) {
  return std::get<std::string>(c);
}

// One string function of N string arguments, as generated code calls it.
template <const auto& F, size_t N>
std::optional<Constant> OnStrings(const std::vector<Constant>& a) {
  if (a.size() != N) return std::nullopt;
  if constexpr (N == 1) {
    return ToConstant(F(Text(a[0])));
  } else if constexpr (N == 2) {
    return ToConstant(F(Text(a[0]), Text(a[1])));
  } else {
    return ToConstant(F(Text(a[0]), Text(a[1]), Text(a[2])));
  }
}

std::optional<Constant> ConcatAll(const std::vector<Constant>& a) {
  if (a.empty()) return std::nullopt;
  std::string out;
  for (const Constant& c : a) out = fn::Concat(out, Text(c));
  return Constant(std::move(out));
}

struct StringFunction {
  const char* name;
  std::optional<Constant> (*eval)(const std::vector<Constant>&);
};
// The pure built-ins whose arguments are all strings. Others (regexes, time zones, hashing) stay
// for the job: they are not worth a compile-time dependency on their libraries.
constexpr StringFunction kStringFunctions[] = {
    {"lower", OnStrings<fn::Lower, 1>},
    {"upper", OnStrings<fn::Upper, 1>},
    {"length", OnStrings<fn::Length, 1>},
    {"trim", OnStrings<fn::Trim, 1>},
    {"ltrim", OnStrings<fn::Ltrim, 1>},
    {"rtrim", OnStrings<fn::Rtrim, 1>},
    {"starts_with", OnStrings<fn::StartsWith, 2>},
    {"ends_with", OnStrings<fn::EndsWith, 2>},
    {"contains", OnStrings<fn::Contains, 2>},
    {"replace", OnStrings<fn::Replace, 3>},
    {"concat", ConcatAll},
};

}  // namespace

std::optional<Constant> Binary(ast::BinaryOp op, const Constant& x, const Constant& y) {
  return std::visit(
      [op](const auto& a, const auto& b) {
        return WithNulls(a, b, [op](const auto& l, const auto& r) { return Apply(op, l, r); });
      },
      x, y);
}

std::optional<Constant> Unary(ast::UnaryOp op, const Constant& x) {
  if (op == ast::UnaryOp::kNot) {
    if (IsNull(x)) return ToConstant(ops::Not(std::optional<bool>()));
    if (const bool* b = std::get_if<bool>(&x)) return ToConstant(ops::Not(*b));
    return std::nullopt;
  }
  if (IsNull(x)) return ToConstant(ops::Neg(std::optional<int64_t>()));
  if (const int64_t* i = std::get_if<int64_t>(&x)) return ToConstant(ops::Neg(*i));
  if (const double* f = std::get_if<double>(&x)) return ToConstant(ops::Neg(*f));
  return std::nullopt;
}

CastKind CastKindOf(Kind k) {
  switch (k) {
    case Kind::kBool:
      return CastKind::kBool;
    case Kind::kInt:
      return CastKind::kInt;
    case Kind::kFloat:
      return CastKind::kFloat;
    case Kind::kString:
      return CastKind::kString;
    case Kind::kBytes:
      return CastKind::kBytes;
    case Kind::kTimestamp:
      return CastKind::kTimestamp;
    case Kind::kDuration:
      return CastKind::kDuration;
    default:
      return CastKind::kOther;
  }
}

std::optional<Constant> Cast(const Constant& x, Kind from, Kind to) {
  if (IsNull(x)) return Constant();  // exec::Cast of an empty optional
  // Bytes have no literal and lists and records are not cast: CastFrom's default.
  CastKind f = CastKindOf(from), t = CastKindOf(to);
  switch (f) {
    case CastKind::kBool:
      return CastFrom<CastKind::kBool>(x, t);
    case CastKind::kInt:
      return CastFrom<CastKind::kInt>(x, t);
    case CastKind::kFloat:
      return CastFrom<CastKind::kFloat>(x, t);
    case CastKind::kString:
      return CastFrom<CastKind::kString>(x, t);
    case CastKind::kTimestamp:
      return CastFrom<CastKind::kTimestamp>(x, t);
    case CastKind::kDuration:
      return CastFrom<CastKind::kDuration>(x, t);
    default:
      return std::nullopt;
  }
}

std::optional<Constant> Call(const std::string& name, const std::vector<Constant>& args) {
  for (const StringFunction& f : kStringFunctions) {
    if (name != f.name) continue;
    for (const Constant& a : args) {
      if (IsNull(a)) return Constant();  // each of them gives null for a null argument
      if (!std::holds_alternative<std::string>(a)) return std::nullopt;
    }
    return f.eval(args);
  }
  return std::nullopt;
}

}  // namespace flow::plan::fold
