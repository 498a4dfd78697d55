#pragma once
// Null propagation for generated code. Generated code represents a nullable Flow value as
// std::optional<T>; every scalar function in flow::fn is a `Lifted` function object, so the same
// call works on plain and optional arguments:
//   - all arguments plain            -> the plain result of the implementation;
//   - any argument is std::optional  -> std::optional<R>: empty if any optional argument is empty
//                                       (SQL: a null argument gives a null result), else the value.
//                                       An implementation that already returns std::optional<R>
//                                       is not wrapped twice.
// A literal `null` must be passed as a typed empty optional (`std::optional<std::string>()`).
// Threading: stateless; callable from any thread.

#include <optional>
#include <type_traits>
#include <utility>

namespace flow::fn {

// Tags telling the Flow type of an argument when the C++ type alone cannot (timestamp, duration
// and int are all int64_t). Codegen passes one where the registry's template says {tagN}.
namespace tag {
struct Plain {};
struct Timestamp {};
struct Duration {};
struct Bytes {};
}  // namespace tag

template <typename T>
struct IsOptional : std::false_type {};
template <typename T>
struct IsOptional<std::optional<T>> : std::true_type {};
template <typename T>
inline constexpr bool kIsOptional = IsOptional<std::remove_cvref_t<T>>::value;

// The value type inside an optional, or the type itself.
template <typename T>
struct Underlying {
  using type = std::remove_cvref_t<T>;
};
template <typename T>
struct Underlying<std::optional<T>> {
  using type = T;
};
template <typename T>
using UnderlyingT = typename Underlying<std::remove_cvref_t<T>>::type;

namespace detail {

template <typename A>
bool Present(const A& a) {
  if constexpr (kIsOptional<A>) {
    return a.has_value();
  } else {
    return true;
  }
}

template <typename A>
const auto& Value(const A& a) {
  if constexpr (kIsOptional<A>) {
    return *a;
  } else {
    return a;
  }
}

template <typename R>
struct AsOptional {
  using type = std::optional<R>;
};
template <typename R>
struct AsOptional<std::optional<R>> {
  using type = std::optional<R>;
};

// The order of comparable Flow values: operator<, except that NaN sorts above every other float
// (as in PostgreSQL), so min/max/greatest/least do not depend on the order of their inputs.
template <typename T>
bool FlowLess(const T& a, const T& b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (a != a) return false;  // NaN is never less
    if (b != b) return true;   // everything else is less than NaN
  }
  return a < b;
}

template <typename Impl>
struct Lifted {
  template <typename... A>
  auto operator()(const A&... a) const {
    if constexpr ((kIsOptional<A> || ...)) {
      using R = decltype(Impl{}(Value(a)...));
      using Out = typename AsOptional<R>::type;
      if (!(Present(a) && ...)) return Out();
      return Out(Impl{}(Value(a)...));
    } else {
      return Impl{}(a...);
    }
  }
};

}  // namespace detail
}  // namespace flow::fn
