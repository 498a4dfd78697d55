#pragma once
// flow::exec::ops: the operators of Flow expressions as generated code calls them. Values use the
// representation of flow/stdlib/scalar.h (int64_t, double, bool, std::string, std::vector,
// std::optional for nullable). Every function accepts plain or std::optional operands and follows
// docs/language.md: a null operand gives null, `and`/`or` are three-valued, integer arithmetic
// wraps, an integer division or remainder by zero records an error (see Fail) and yields 0.
//
// Threading: pure functions; the pending error is thread-local (one per subtask thread).

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "flow/runtime/common/status.h"
#include "flow/stdlib/lift.h"

namespace flow::exec::ops {

using fn::kIsOptional;
using fn::UnderlyingT;
using fn::detail::Present;
using fn::detail::Value;

// Records the first run-time expression error of this thread (`where` names the .flow line).
void Fail(const char* where, const char* what);
// The pending error as a Status (kInvalidArgument), clearing it; OK when none.
[[nodiscard]] rt::Status TakeError();
// True when an error is pending (cheap; checked after each record).
bool HasError();

// Converts between value representations: T -> T?, T? -> T (null -> T{}), int -> float, and the
// same through optionals. Generated code wraps values whose C++ type may differ from the one the
// checker gave the expression.
template <typename To, typename From>
To As(const From& v) {
  using F = std::remove_cvref_t<From>;
  if constexpr (std::is_same_v<To, F>) {
    return v;
  } else if constexpr (kIsOptional<To>) {
    using TV = typename To::value_type;
    if constexpr (kIsOptional<F>) {
      if (!v.has_value()) return To();
      return To(As<TV>(*v));
    } else if constexpr (std::is_same_v<F, std::nullopt_t>) {
      return To();
    } else {
      return To(As<TV>(v));
    }
  } else if constexpr (kIsOptional<F>) {
    if (!v.has_value()) return To{};
    return As<To>(*v);
  } else if constexpr (std::is_same_v<To, std::string>) {
    return std::string(v);
  } else if constexpr (std::is_arithmetic_v<To> && std::is_arithmetic_v<F>) {
    return static_cast<To>(v);
  } else if constexpr (std::is_constructible_v<To, const F&>) {
    return To(v);
  } else {
    static_assert(sizeof(To) == 0, "no conversion between these value representations");
  }
}

// Applies f to the values when every optional operand is present; else null.
template <typename F, typename... A>
auto Lift(F f, const A&... a) {
  if constexpr ((kIsOptional<A> || ...)) {
    using R = decltype(f(Value(a)...));
    using Out = std::conditional_t<kIsOptional<R>, R, std::optional<R>>;
    if (!(Present(a) && ...)) return Out();
    return Out(f(Value(a)...));
  } else {
    return f(a...);
  }
}

namespace detail {
inline int64_t WrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
inline int64_t WrapSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
inline int64_t WrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
template <typename A, typename B>
inline constexpr bool kBothInt =
    std::is_integral_v<A>&& std::is_integral_v<B> && !std::is_same_v<A, bool>;
}  // namespace detail

template <typename A, typename B>
auto Add(const A& a, const B& b) {
  return Lift(
      [](const auto& x, const auto& y) {
        using X = std::remove_cvref_t<decltype(x)>;
        using Y = std::remove_cvref_t<decltype(y)>;
        if constexpr (std::is_same_v<X, std::string>) {
          std::string s;
          s.reserve(x.size() + y.size());
          s.append(x).append(y);
          return s;
        } else if constexpr (detail::kBothInt<X, Y>) {
          return detail::WrapAdd(x, y);
        } else {
          return static_cast<double>(x) + static_cast<double>(y);
        }
      },
      a, b);
}

template <typename A, typename B>
auto Sub(const A& a, const B& b) {
  return Lift(
      [](const auto& x, const auto& y) {
        using X = std::remove_cvref_t<decltype(x)>;
        using Y = std::remove_cvref_t<decltype(y)>;
        if constexpr (detail::kBothInt<X, Y>) {
          return detail::WrapSub(x, y);
        } else {
          return static_cast<double>(x) - static_cast<double>(y);
        }
      },
      a, b);
}

template <typename A, typename B>
auto Mul(const A& a, const B& b) {
  return Lift(
      [](const auto& x, const auto& y) {
        using X = std::remove_cvref_t<decltype(x)>;
        using Y = std::remove_cvref_t<decltype(y)>;
        if constexpr (detail::kBothInt<X, Y>) {
          return detail::WrapMul(x, y);
        } else {
          return static_cast<double>(x) * static_cast<double>(y);
        }
      },
      a, b);
}

// `where` names the expression for the division-by-zero error.
template <typename A, typename B>
auto Div(const A& a, const B& b, const char* where) {
  return Lift(
      [where](const auto& x, const auto& y) {
        using X = std::remove_cvref_t<decltype(x)>;
        using Y = std::remove_cvref_t<decltype(y)>;
        if constexpr (detail::kBothInt<X, Y>) {
          if (y == 0) {
            Fail(where, "integer division by zero");
            return int64_t{0};
          }
          if (x == std::numeric_limits<int64_t>::min() && y == -1) return x;  // wraps
          return static_cast<int64_t>(x / y);
        } else {
          return static_cast<double>(x) / static_cast<double>(y);
        }
      },
      a, b);
}

template <typename A, typename B>
auto Mod(const A& a, const B& b, const char* where) {
  return Lift(
      [where](const auto& x, const auto& y) {
        using X = std::remove_cvref_t<decltype(x)>;
        using Y = std::remove_cvref_t<decltype(y)>;
        if constexpr (detail::kBothInt<X, Y>) {
          if (y == 0) {
            Fail(where, "integer remainder by zero");
            return int64_t{0};
          }
          if (y == -1) return int64_t{0};
          return static_cast<int64_t>(x % y);
        } else {
          return std::fmod(static_cast<double>(x), static_cast<double>(y));
        }
      },
      a, b);
}

template <typename A>
auto Neg(const A& a) {
  return Lift(
      [](const auto& x) {
        using X = std::remove_cvref_t<decltype(x)>;
        if constexpr (std::is_integral_v<X>) {
          return detail::WrapSub(0, x);
        } else {
          return -x;
        }
      },
      a);
}

namespace detail {
// Numbers of different types compare as doubles; everything else with its own operators.
template <typename X, typename Y>
int Compare(const X& x, const Y& y) {
  if constexpr (std::is_arithmetic_v<X> && std::is_arithmetic_v<Y> && !std::is_same_v<X, Y>) {
    double a = static_cast<double>(x), b = static_cast<double>(y);
    return a < b ? -1 : (b < a ? 1 : 0);
  } else {
    return x < y ? -1 : (y < x ? 1 : 0);
  }
}
template <typename X, typename Y>
bool Equal(const X& x, const Y& y) {
  if constexpr (std::is_arithmetic_v<X> && std::is_arithmetic_v<Y> && !std::is_same_v<X, Y>) {
    return static_cast<double>(x) == static_cast<double>(y);
  } else {
    return x == y;
  }
}
}  // namespace detail

template <typename A, typename B>
auto Eq(const A& a, const B& b) {
  return Lift([](const auto& x, const auto& y) { return detail::Equal(x, y); }, a, b);
}
template <typename A, typename B>
auto Ne(const A& a, const B& b) {
  return Lift([](const auto& x, const auto& y) { return !detail::Equal(x, y); }, a, b);
}
template <typename A, typename B>
auto Lt(const A& a, const B& b) {
  return Lift([](const auto& x, const auto& y) { return detail::Compare(x, y) < 0; }, a, b);
}
template <typename A, typename B>
auto Le(const A& a, const B& b) {
  return Lift([](const auto& x, const auto& y) { return detail::Compare(x, y) <= 0; }, a, b);
}
template <typename A, typename B>
auto Gt(const A& a, const B& b) {
  return Lift([](const auto& x, const auto& y) { return detail::Compare(x, y) > 0; }, a, b);
}
template <typename A, typename B>
auto Ge(const A& a, const B& b) {
  return Lift([](const auto& x, const auto& y) { return detail::Compare(x, y) >= 0; }, a, b);
}

// Three-valued logic. Plain bools stay plain.
template <typename A, typename B>
auto And(const A& a, const B& b) {
  if constexpr (kIsOptional<A> || kIsOptional<B>) {
    if ((Present(a) && !Value(a)) || (Present(b) && !Value(b))) return std::optional<bool>(false);
    if (Present(a) && Present(b)) return std::optional<bool>(true);
    return std::optional<bool>();
  } else {
    return a && b;
  }
}
template <typename A, typename B>
auto Or(const A& a, const B& b) {
  if constexpr (kIsOptional<A> || kIsOptional<B>) {
    if ((Present(a) && Value(a)) || (Present(b) && Value(b))) return std::optional<bool>(true);
    if (Present(a) && Present(b)) return std::optional<bool>(false);
    return std::optional<bool>();
  } else {
    return a || b;
  }
}
template <typename A>
auto Not(const A& a) {
  return Lift([](bool x) { return !x; }, a);
}
// `where` and `case when`: only a true condition counts (null is not true).
template <typename A>
bool IsTrue(const A& a) {
  return Present(a) && static_cast<bool>(Value(a));
}
template <typename A>
bool IsNull(const A& a) {
  return !Present(a);
}

// `x in (items...)`: null when x is null; true when some non-null item equals x.
template <typename A, typename... Items>
auto In(const A& a, const Items&... items) {
  auto test = [&](const auto& x) {
    return ((Present(items) && detail::Equal(x, Value(items))) || ...);
  };
  if constexpr (kIsOptional<A>) {
    if (!a.has_value()) return std::optional<bool>();
    return std::optional<bool>(test(*a));
  } else {
    return test(a);
  }
}

// list[i] (0-based): null when out of range or either operand is null.
template <typename L, typename I>
auto Index(const L& list, const I& index) {
  using E = typename UnderlyingT<L>::value_type;
  if (!Present(list) || !Present(index)) return std::optional<E>();
  const auto& l = Value(list);
  int64_t i = Value(index);
  if (i < 0 || static_cast<uint64_t>(i) >= l.size()) return std::optional<E>();
  return std::optional<E>(l[static_cast<size_t>(i)]);
}

}  // namespace flow::exec::ops
