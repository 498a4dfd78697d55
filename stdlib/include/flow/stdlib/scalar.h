#pragma once
// flow::fn: the C++ implementations of Flow's scalar functions, called by generated code through
// the templates in the stdlib registry (stdlib/registry/registry.h, field `cpp`).
//
// Value representation in generated code:
//   int -> int64_t, float -> double, bool -> bool, string/bytes -> std::string,
//   timestamp/duration -> int64_t milliseconds (UTC epoch), list<T> -> std::vector<T>,
//   nullable T -> std::optional<T>.
// Every function below is a function object (see lift.h): pass plain or std::optional arguments;
// with any optional argument the result is optional and empty when an argument is null — except
// Coalesce and NullIf, which handle nulls themselves (registry: nullable_in_propagates = false).
// Strings are UTF-8: lengths and positions count code points; case mapping is ASCII-only and never
// touches the bytes of multibyte characters. Malformed UTF-8 is never an error: a character is a
// byte that is not a continuation byte (10xxxxxx) plus the continuation bytes after it, so
// functions never split a character but may keep stray bytes with their neighbour.
//
// Documented edge cases (no function throws or aborts on any input):
//   mod(a, 0) = 0 for int, NaN for float; mod(INT64_MIN, -1) = 0. abs(INT64_MIN) = INT64_MIN.
//   sqrt/ln/log10 of a negative number = NaN; ln(0) = -Infinity.
//   An invalid regular expression matches nothing (regexp_extract gives null); the checker can
//   reject invalid literal patterns at compile time (registry CheckLiteralArgument).
//   date_trunc with an unknown unit returns the timestamp unchanged; truncating below INT64_MIN
//   clamps to INT64_MIN.
//   lpad/rpad lengths above 1,048,576 characters are capped there (bounded memory).
// Threading: all functions are safe to call concurrently; regex caches are per thread.

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "flow/stdlib/hash.h"
#include "flow/stdlib/lift.h"

namespace flow::fn {
namespace impl {

inline bool IsSpace(char c) {
  return c == ' ' || (c >= '\t' && c <= '\r');
}
// Number of UTF-8 code points (bytes that are not continuation bytes).
int64_t CodePoints(std::string_view s);
// Byte offset of code point `index` (0-based), or s.size() if past the end.
size_t ByteOffsetOf(std::string_view s, int64_t index);

// ---- string ----
struct LowerImpl {
  std::string operator()(std::string_view s) const {
    std::string out(s);
    for (char& c : out) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    return out;
  }
};
struct UpperImpl {
  std::string operator()(std::string_view s) const {
    std::string out(s);
    for (char& c : out) {
      if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    }
    return out;
  }
};
struct LengthImpl {
  int64_t operator()(std::string_view s) const { return CodePoints(s); }
};
struct TrimImpl {
  bool left = true;
  bool right = true;
  std::string operator()(std::string_view s) const {
    size_t b = 0, e = s.size();
    while (left && b < e && IsSpace(s[b])) ++b;
    while (right && e > b && IsSpace(s[e - 1])) --e;
    return std::string(s.substr(b, e - b));
  }
};
struct LtrimImpl {
  std::string operator()(std::string_view s) const { return TrimImpl{true, false}(s); }
};
struct RtrimImpl {
  std::string operator()(std::string_view s) const { return TrimImpl{false, true}(s); }
};
struct SubstrImpl {
  std::string operator()(std::string_view s, int64_t start) const;
  std::string operator()(std::string_view s, int64_t start, int64_t len) const;
};
struct ConcatImpl {
  template <typename... S>
  std::string operator()(const S&... parts) const {
    std::string out;
    out.reserve((std::string_view(parts).size() + ... + 0));
    (out.append(std::string_view(parts)), ...);
    return out;
  }
};
struct ReplaceImpl {
  std::string operator()(std::string_view s, std::string_view from, std::string_view to) const;
};
struct StartsWithImpl {
  bool operator()(std::string_view s, std::string_view p) const { return s.starts_with(p); }
};
struct EndsWithImpl {
  bool operator()(std::string_view s, std::string_view p) const { return s.ends_with(p); }
};
struct ContainsImpl {
  bool operator()(std::string_view s, std::string_view p) const {
    return s.find(p) != std::string_view::npos;
  }
};
struct SplitImpl {
  std::vector<std::string> operator()(std::string_view s, std::string_view sep) const;
};
struct RegexpLikeImpl {
  bool operator()(std::string_view s, std::string_view pattern) const;
};
struct RegexpExtractImpl {
  std::optional<std::string> operator()(std::string_view s, std::string_view pattern,
                                        int64_t group = 0) const;
};
struct PadImpl {
  bool left;
  std::string operator()(std::string_view s, int64_t len, std::string_view pad = " ") const;
};
struct LpadImpl {
  template <typename... A>
  std::string operator()(const A&... a) const {
    return PadImpl{true}(a...);
  }
};
struct RpadImpl {
  template <typename... A>
  std::string operator()(const A&... a) const {
    return PadImpl{false}(a...);
  }
};
struct ReverseImpl {
  std::string operator()(std::string_view s) const;
};
struct ParseIntImpl {
  std::optional<int64_t> operator()(std::string_view s) const;
};
struct ParseFloatImpl {
  std::optional<double> operator()(std::string_view s) const;
};

std::string FormatDouble(double v);
std::string FormatTimestampRfc3339(int64_t ms);

struct ToStringImpl {
  template <typename V, typename Tag = tag::Plain>
  std::string operator()(const V& v, Tag t = {}) const {
    if constexpr (std::same_as<V, bool>) {
      return v ? "true" : "false";
    } else if constexpr (std::integral<V> && std::same_as<Tag, tag::Timestamp>) {
      return FormatTimestampRfc3339(v);
    } else if constexpr (std::integral<V> && std::same_as<Tag, tag::Duration>) {
      return std::to_string(v) + "ms";
    } else if constexpr (std::integral<V>) {
      return std::to_string(v);
    } else if constexpr (std::floating_point<V>) {
      return FormatDouble(v);
    } else if constexpr (std::convertible_to<const V&, std::string_view>) {
      return std::string(std::string_view(v));
    } else if constexpr (kIsOptional<V>) {
      return v.has_value() ? (*this)(*v, t) : "null";
    } else {
      std::string out = "[";
      bool first = true;
      for (const auto& e : v) {
        if (!first) out += ", ";
        first = false;
        out += (*this)(e);
      }
      return out + "]";
    }
  }
};

// ---- math ----
struct AbsImpl {
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::integral<T>) {
      // Through unsigned so INT64_MIN wraps instead of overflowing.
      return x < 0 ? static_cast<T>(0 - static_cast<std::make_unsigned_t<T>>(x)) : x;
    } else {
      return std::fabs(x);
    }
  }
};
struct RoundImpl {
  double operator()(double x, int64_t digits = 0) const;
  int64_t operator()(int64_t x, int64_t digits = 0) const;
  template <std::integral T>
  requires(!std::same_as<T, int64_t>) int64_t operator()(T x, int64_t digits = 0) const {
    return (*this)(static_cast<int64_t>(x), digits);
  }
};
struct FloorImpl {
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::integral<T>)
      return x;
    else
      return std::floor(x);
  }
};
struct CeilImpl {
  template <typename T>
  T operator()(T x) const {
    if constexpr (std::integral<T>)
      return x;
    else
      return std::ceil(x);
  }
};
struct SqrtImpl {
  double operator()(double x) const { return std::sqrt(x); }
};
struct PowImpl {
  double operator()(double b, double e) const { return std::pow(b, e); }
};
struct LnImpl {
  double operator()(double x) const { return std::log(x); }
};
struct Log10Impl {
  double operator()(double x) const { return std::log10(x); }
};
struct ExpImpl {
  double operator()(double x) const { return std::exp(x); }
};
struct ModImpl {
  template <typename A, typename B>
  auto operator()(A a, B b) const {
    using C = std::common_type_t<A, B>;
    if constexpr (std::integral<C>) {
      if (b == 0 || (std::is_signed_v<C> && b == static_cast<B>(-1))) return C(0);
      return static_cast<C>(static_cast<C>(a) % static_cast<C>(b));
    } else {
      if (b == 0) return std::numeric_limits<C>::quiet_NaN();
      return static_cast<C>(std::fmod(static_cast<C>(a), static_cast<C>(b)));
    }
  }
};
struct GreatestImpl {
  template <typename A, typename... R>
  auto operator()(const A& a, const R&... r) const {
    using C = std::common_type_t<A, R...>;
    C best = a;
    ((best = (detail::FlowLess(best, C(r)) ? C(r) : best)), ...);
    return best;
  }
};
struct LeastImpl {
  template <typename A, typename... R>
  auto operator()(const A& a, const R&... r) const {
    using C = std::common_type_t<A, R...>;
    C best = a;
    ((best = (detail::FlowLess(C(r), best) ? C(r) : best)), ...);
    return best;
  }
};
struct SignImpl {
  template <typename T>
  int64_t operator()(T x) const {
    return x > 0 ? 1 : x < 0 ? -1 : 0;
  }
};

// ---- time (timestamps are int64_t ms since the epoch, UTC) ----
struct ToTimestampImpl {
  int64_t operator()(int64_t ms) const { return ms; }
};
struct ToMillisImpl {
  int64_t operator()(int64_t ts) const { return ts; }
};
// The forms with a `zone` read the wall clock of that IANA zone (flow/runtime/common/time_zone.h);
// an unknown zone name is UTC (flowc refuses unknown names written as literals).
struct DateTruncImpl {
  int64_t operator()(std::string_view unit, int64_t ts) const;
  int64_t operator()(std::string_view unit, int64_t ts, std::string_view zone) const;
};
enum class TimePart { kYear, kMonth, kDay, kHour, kMinute, kSecond, kDayOfWeek };
int64_t ExtractPart(int64_t ts, TimePart part);
int64_t ExtractZonedPart(int64_t ts, TimePart part, std::string_view zone);
template <TimePart P>
struct PartImpl {
  int64_t operator()(int64_t ts) const { return ExtractPart(ts, P); }
  int64_t operator()(int64_t ts, std::string_view zone) const {
    return ExtractZonedPart(ts, P, zone);
  }
};
struct FormatTimestampImpl {
  std::string operator()(int64_t ts, std::string_view pattern) const;
  std::string operator()(int64_t ts, std::string_view pattern, std::string_view zone) const;
};
struct ParseTimestampImpl {
  std::optional<int64_t> operator()(std::string_view s) const;
  // A text without an offset is a wall-clock time in `zone`; one with an offset or Z is as it says.
  std::optional<int64_t> operator()(std::string_view s, std::string_view zone) const;
};

// ---- collections ----
struct CardinalityImpl {
  template <typename E>
  int64_t operator()(const std::vector<E>& v) const {
    return static_cast<int64_t>(v.size());
  }
};
struct ElementAtImpl {
  // 1-based; negative counts from the end; 0 or out of range -> null.
  template <typename E>
  typename detail::AsOptional<E>::type operator()(const std::vector<E>& v, int64_t index) const {
    int64_t n = static_cast<int64_t>(v.size());
    int64_t i = index > 0 ? index - 1 : n + index;
    if (index == 0 || i < 0 || i >= n) return {};
    return v[static_cast<size_t>(i)];
  }
};
struct ArrayContainsImpl {
  template <typename E, typename X>
  bool operator()(const std::vector<E>& v, const X& x) const {
    for (const E& e : v) {
      if (detail::Present(e) && detail::Value(e) == x) return true;
    }
    return false;
  }
};
struct HashImpl {
  template <typename T>
  int64_t operator()(const T& v) const {
    return static_cast<int64_t>(HashValue(v));
  }
};

}  // namespace impl

inline constexpr detail::Lifted<impl::LowerImpl> Lower{};
inline constexpr detail::Lifted<impl::UpperImpl> Upper{};
inline constexpr detail::Lifted<impl::LengthImpl> Length{};
inline constexpr detail::Lifted<impl::TrimImpl> Trim{};
inline constexpr detail::Lifted<impl::LtrimImpl> Ltrim{};
inline constexpr detail::Lifted<impl::RtrimImpl> Rtrim{};
inline constexpr detail::Lifted<impl::SubstrImpl> Substr{};
inline constexpr detail::Lifted<impl::ConcatImpl> Concat{};
inline constexpr detail::Lifted<impl::ReplaceImpl> Replace{};
inline constexpr detail::Lifted<impl::StartsWithImpl> StartsWith{};
inline constexpr detail::Lifted<impl::EndsWithImpl> EndsWith{};
inline constexpr detail::Lifted<impl::ContainsImpl> Contains{};
inline constexpr detail::Lifted<impl::SplitImpl> Split{};
inline constexpr detail::Lifted<impl::RegexpLikeImpl> RegexpLike{};
inline constexpr detail::Lifted<impl::RegexpExtractImpl> RegexpExtract{};
inline constexpr detail::Lifted<impl::LpadImpl> Lpad{};
inline constexpr detail::Lifted<impl::RpadImpl> Rpad{};
inline constexpr detail::Lifted<impl::ReverseImpl> Reverse{};
inline constexpr detail::Lifted<impl::ToStringImpl> ToString{};
inline constexpr detail::Lifted<impl::ParseIntImpl> ParseInt{};
inline constexpr detail::Lifted<impl::ParseFloatImpl> ParseFloat{};

inline constexpr detail::Lifted<impl::AbsImpl> Abs{};
inline constexpr detail::Lifted<impl::RoundImpl> Round{};
inline constexpr detail::Lifted<impl::FloorImpl> Floor{};
inline constexpr detail::Lifted<impl::CeilImpl> Ceil{};
inline constexpr detail::Lifted<impl::SqrtImpl> Sqrt{};
inline constexpr detail::Lifted<impl::PowImpl> Pow{};
inline constexpr detail::Lifted<impl::LnImpl> Ln{};
inline constexpr detail::Lifted<impl::Log10Impl> Log10{};
inline constexpr detail::Lifted<impl::ExpImpl> Exp{};
inline constexpr detail::Lifted<impl::ModImpl> Mod{};
inline constexpr detail::Lifted<impl::GreatestImpl> Greatest{};
inline constexpr detail::Lifted<impl::LeastImpl> Least{};
inline constexpr detail::Lifted<impl::SignImpl> Sign{};

// Processing (wall-clock) time in ms since the epoch.
int64_t Now();
inline constexpr detail::Lifted<impl::ToTimestampImpl> ToTimestamp{};
inline constexpr detail::Lifted<impl::ToMillisImpl> ToMillis{};
inline constexpr detail::Lifted<impl::DateTruncImpl> DateTrunc{};
inline constexpr detail::Lifted<impl::PartImpl<impl::TimePart::kYear>> Year{};
inline constexpr detail::Lifted<impl::PartImpl<impl::TimePart::kMonth>> Month{};
inline constexpr detail::Lifted<impl::PartImpl<impl::TimePart::kDay>> Day{};
inline constexpr detail::Lifted<impl::PartImpl<impl::TimePart::kHour>> Hour{};
inline constexpr detail::Lifted<impl::PartImpl<impl::TimePart::kMinute>> Minute{};
inline constexpr detail::Lifted<impl::PartImpl<impl::TimePart::kSecond>> Second{};
inline constexpr detail::Lifted<impl::PartImpl<impl::TimePart::kDayOfWeek>> DayOfWeek{};
inline constexpr detail::Lifted<impl::FormatTimestampImpl> FormatTimestamp{};
inline constexpr detail::Lifted<impl::ParseTimestampImpl> ParseTimestamp{};

inline constexpr detail::Lifted<impl::CardinalityImpl> Cardinality{};
inline constexpr detail::Lifted<impl::ElementAtImpl> ElementAt{};
inline constexpr detail::Lifted<impl::ArrayContainsImpl> ArrayContains{};
inline constexpr detail::Lifted<impl::HashImpl> Hash{};

// coalesce: the first present argument. The result is std::optional only when every argument is
// optional (then empty if all are); otherwise a plain value of the common type.
template <typename... A>
auto Coalesce(const A&... a) {
  static_assert(sizeof...(A) > 0, "coalesce needs at least one argument");
  using C = std::common_type_t<UnderlyingT<A>...>;
  std::optional<C> out;
  ((!out.has_value() && detail::Present(a) ? void(out.emplace(detail::Value(a))) : void()), ...);
  if constexpr ((kIsOptional<A> && ...)) {
    return out;
  } else {
    return *out;  // a plain argument is always present
  }
}

// nullif: empty when `a` equals `b` (or `a` is null), otherwise `a`.
template <typename A, typename B>
std::optional<std::common_type_t<UnderlyingT<A>, UnderlyingT<B>>> NullIf(const A& a, const B& b) {
  if (!detail::Present(a)) return std::nullopt;
  if (detail::Present(b) && detail::Value(a) == detail::Value(b)) return std::nullopt;
  return detail::Value(a);
}

// A POSIX extended regular expression compiled once. Generated code may hold one per call site
// (e.g. a function-local static) when the pattern is a literal; RegexpLike/RegexpExtract with a
// pattern argument use a small per-thread cache instead. Matching is thread-safe.
class CachedRegex {
 public:
  explicit CachedRegex(std::string_view pattern);
  ~CachedRegex();
  CachedRegex(const CachedRegex&) = delete;
  CachedRegex& operator=(const CachedRegex&) = delete;

  // Empty when the pattern compiled; else the compiler's message.
  const std::string& error() const { return error_; }
  bool Matches(std::string_view s) const;
  // Group `group` of the first match; empty if no match, no such group, or an invalid pattern.
  std::optional<std::string> Extract(std::string_view s, int64_t group = 0) const;

 private:
  struct Compiled;
  Compiled* compiled_ = nullptr;  // null when the pattern is invalid
  std::string error_;
};

}  // namespace flow::fn
