#pragma once
// `cast(x as T)` for generated code: Cast<From, To>(value) with the Flow kinds of both sides (int,
// timestamp and duration share int64_t, so the C++ type alone cannot tell them apart). The
// result is always std::optional: null input, an unparsable string, or a float out of int range
// (or NaN) give null. Rules: docs/language.md "cast".
// Threading: pure functions.

#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "flow/runtime/common/time.h"
#include "flow/runtime/engine/options.h"
#include "flow/runtime/exec/ops.h"

namespace flow::exec {

enum class CastKind { kBool, kInt, kFloat, kString, kBytes, kTimestamp, kDuration, kOther };

namespace cast_detail {

template <CastKind K>
struct Repr;
template <>
struct Repr<CastKind::kBool> {
  using type = bool;
};
template <>
struct Repr<CastKind::kInt> {
  using type = int64_t;
};
template <>
struct Repr<CastKind::kTimestamp> {
  using type = int64_t;
};
template <>
struct Repr<CastKind::kDuration> {
  using type = int64_t;
};
template <>
struct Repr<CastKind::kFloat> {
  using type = double;
};
template <>
struct Repr<CastKind::kString> {
  using type = std::string;
};
template <>
struct Repr<CastKind::kBytes> {
  using type = std::string;
};

inline std::optional<int64_t> ParseInt(std::string_view s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}
inline std::optional<double> ParseFloat(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return v;
}
inline std::optional<bool> ParseBool(std::string_view s) {
  auto eq = [&](std::string_view w) {
    if (s.size() != w.size()) return false;
    for (size_t i = 0; i < s.size(); ++i) {
      char c = s[i];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      if (c != w[i]) return false;
    }
    return true;
  };
  if (eq("true") || s == "1") return true;
  if (eq("false") || s == "0") return false;
  return std::nullopt;
}

template <CastKind From, CastKind To, typename V>
std::optional<typename Repr<To>::type> CastValue(const V& v) {
  using R = typename Repr<To>::type;
  if constexpr (To == CastKind::kString || To == CastKind::kBytes) {
    if constexpr (From == CastKind::kString || From == CastKind::kBytes) {
      return R(v);
    } else if constexpr (From == CastKind::kBool) {
      return R(v ? "true" : "false");
    } else if constexpr (From == CastKind::kTimestamp) {
      return rt::FormatTimestamp(v);
    } else if constexpr (From == CastKind::kInt || From == CastKind::kDuration) {
      return std::to_string(v);
    } else if constexpr (From == CastKind::kFloat) {
      return fmt::format("{}", v);
    } else {
      return std::nullopt;
    }
  } else if constexpr (From == CastKind::kString || From == CastKind::kBytes) {
    if constexpr (To == CastKind::kInt) {
      return ParseInt(v);
    } else if constexpr (To == CastKind::kFloat) {
      return ParseFloat(v);
    } else if constexpr (To == CastKind::kBool) {
      return ParseBool(v);
    } else if constexpr (To == CastKind::kTimestamp) {
      rt::TimestampMs t = 0;
      if (!rt::ParseTimestamp(v, &t)) return std::nullopt;
      return t;
    } else {
      rt::DurationMs d = 0;
      if (!rt::ParseDuration(v, &d)) return std::nullopt;
      return d;
    }
  } else if constexpr (From == CastKind::kFloat && To != CastKind::kFloat) {
    // Truncates toward zero; NaN and values beyond int64 are null.
    if (!(v > -9223372036854775808.0 && v < 9223372036854775808.0)) return std::nullopt;
    return static_cast<R>(static_cast<int64_t>(v));
  } else {
    return static_cast<R>(v);
  }
}

}  // namespace cast_detail

template <CastKind From, CastKind To, typename V>
auto Cast(const V& v) {
  using R = typename cast_detail::Repr<To>::type;
  if constexpr (ops::kIsOptional<V>) {
    if (!v.has_value()) return std::optional<R>();
    return cast_detail::CastValue<From, To>(*v);
  } else {
    return cast_detail::CastValue<From, To>(v);
  }
}

}  // namespace flow::exec
