#pragma once
// HashValue: the stable 64-bit hash of a Flow value (flow::rt::StableHash underneath), identical in
// every process and build. Used by hash(), count_distinct and approx_distinct.
// Supported: bool, integers (timestamps/durations are int64_t), double, strings, std::optional
// (null hashes to a fixed constant), std::vector (order-sensitive). Generated record structs are
// hashed through an ADL-found `uint64_t FlowHash(const Record&)` that codegen provides.

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flow/runtime/common/key_group.h"
#include "flow/stdlib/lift.h"

namespace flow::fn {

inline constexpr uint64_t kNullHash = 0x6e756c6c6e756c6cULL;  // "nullnull"

template <typename T>
uint64_t HashValue(const T& v) {
  if constexpr (std::same_as<T, bool>) {
    return rt::StableHash(v);
  } else if constexpr (std::integral<T>) {
    return rt::StableHash(static_cast<int64_t>(v));
  } else if constexpr (std::floating_point<T>) {
    return rt::StableHash(static_cast<double>(v));
  } else if constexpr (std::convertible_to<const T&, std::string_view>) {
    return rt::StableHash(std::string_view(v));
  } else if constexpr (kIsOptional<T>) {
    return v.has_value() ? HashValue(*v) : kNullHash;
  } else if constexpr (requires {
                         v.begin();
                         v.end();
                         v.size();
                       }) {
    uint64_t h = rt::StableHash(static_cast<int64_t>(v.size()));
    for (const auto& e : v) h = rt::HashCombine(h, HashValue(e));
    return h;
  } else {
    return FlowHash(v);
  }
}

// A hasher for std::unordered_set / std::unordered_map keyed by Flow values.
struct StableHasher {
  template <typename T>
  size_t operator()(const T& v) const {
    return static_cast<size_t>(HashValue(v));
  }
};

}  // namespace flow::fn
