#pragma once
// KeyHash<K>: the stable 64-bit hash of a key, which decides its key group. It must be identical in
// every process that restores a checkpoint, so it is built on StableHash (never std::hash).
//
// Supported: integers, bool, floating point, std::string, std::pair, std::tuple, std::vector,
// std::optional, and structs providing `uint64_t Hash() const` (generated key structs).
// KeyHasher<K> adapts it for std::unordered_map; KeyEqual is operator==.

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "flow/runtime/common/key_group.h"
#include "flow/runtime/state/serializer.h"

namespace flow::rt {

template <typename T>
struct KeyHash;  // specialised below

template <>
struct KeyHash<bool> {
  uint64_t operator()(bool v) const { return StableHash(v); }
};

template <std::integral T>
struct KeyHash<T> {
  uint64_t operator()(T v) const { return StableHash(static_cast<int64_t>(v)); }
};

template <std::floating_point T>
struct KeyHash<T> {
  uint64_t operator()(T v) const { return StableHash(static_cast<double>(v)); }
};

template <>
struct KeyHash<std::string> {
  uint64_t operator()(const std::string& v) const { return StableHash(std::string_view(v)); }
};

template <typename A, typename B>
struct KeyHash<std::pair<A, B>> {
  uint64_t operator()(const std::pair<A, B>& v) const {
    return HashCombine(KeyHash<A>{}(v.first), KeyHash<B>{}(v.second));
  }
};

template <typename... Ts>
struct KeyHash<std::tuple<Ts...>> {
  uint64_t operator()(const std::tuple<Ts...>& v) const {
    uint64_t h = 0x7475706c65ULL;
    std::apply([&h](const Ts&... e) { ((h = HashCombine(h, KeyHash<Ts>{}(e))), ...); }, v);
    return h;
  }
};

template <typename T>
struct KeyHash<std::vector<T>> {
  uint64_t operator()(const std::vector<T>& v) const {
    uint64_t h = StableHash(static_cast<int64_t>(v.size()));
    for (const T& e : v) h = HashCombine(h, KeyHash<T>{}(e));
    return h;
  }
};

template <typename T>
struct KeyHash<std::optional<T>> {
  uint64_t operator()(const std::optional<T>& v) const {
    return v ? HashCombine(1, KeyHash<T>{}(*v)) : StableHash(false);
  }
};

template <typename T>
requires requires(const T& v) {
  { v.Hash() } -> std::convertible_to<uint64_t>;
}
struct KeyHash<T> {
  uint64_t operator()(const T& v) const { return v.Hash(); }
};

// What keyed state needs of a key (and of a MapState user key).
template <typename K>
concept StateKey = std::copyable<K> && std::equality_comparable<K> && Serializable<K> &&
    requires(const K& k) {
  { KeyHash<K>{}(k) } -> std::convertible_to<uint64_t>;
};

// For std::unordered_map; the stable hash is good enough for buckets too.
template <typename K>
struct KeyHasher {
  size_t operator()(const K& k) const { return static_cast<size_t>(KeyHash<K>{}(k)); }
};

template <typename K>
uint32_t KeyGroupOf(const K& key, uint32_t max_parallelism) {
  return KeyGroupForHash(KeyHash<K>{}(key), max_parallelism);
}

}  // namespace flow::rt
