#pragma once
// JavaRandom: a bit-exact reimplementation of java.util.Random (the 48-bit linear congruential
// generator of the Java platform). The Nexmark reference generator draws every field of an event
// from `new Random(eventId)`; reproducing that generator exactly is what makes our Nexmark events
// match the reference's.
//
// Threading: an instance is a small value; use one per thread. Errors: none; NextInt(bound)
// requires bound > 0 (asserted: a bad bound is our bug, never user input).

#include <cassert>
#include <cstdint>

namespace flow::rt {

class JavaRandom {
 public:
  explicit JavaRandom(int64_t seed) { SetSeed(seed); }

  void SetSeed(int64_t seed) { seed_ = (static_cast<uint64_t>(seed) ^ kMultiplier) & kMask; }

  // java.util.Random.next(bits): the top `bits` bits of the next 48-bit state, as a Java int.
  int32_t Next(int bits) {
    seed_ = (seed_ * kMultiplier + kAddend) & kMask;
    return static_cast<int32_t>(static_cast<uint32_t>(seed_ >> (48 - bits)));
  }

  int32_t NextInt() { return Next(32); }

  // Uniform in [0, bound), with Java's rejection loop (including its int overflow test).
  int32_t NextInt(int32_t bound) {
    assert(bound > 0 && "JavaRandom::NextInt: bound must be positive");
    int32_t r = Next(31);
    const int32_t m = bound - 1;
    if ((bound & m) == 0) {
      return static_cast<int32_t>((static_cast<int64_t>(bound) * r) >> 31);
    }
    for (int32_t u = r;; u = Next(31)) {
      r = u % bound;
      // Java computes u - r + m in 32-bit int arithmetic and rejects when it wraps negative.
      const auto sum =
          static_cast<int32_t>(static_cast<uint32_t>(u - r) + static_cast<uint32_t>(m));
      if (sum >= 0) return r;
    }
  }

  int64_t NextLong() {
    const auto hi = static_cast<uint64_t>(static_cast<int64_t>(Next(32)));
    const auto lo = static_cast<uint64_t>(static_cast<int64_t>(Next(32)));
    return static_cast<int64_t>((hi << 32) + lo);
  }

  double NextDouble() {
    const int64_t hi = Next(26);
    const int64_t lo = Next(27);
    return static_cast<double>((hi << 27) + lo) * 0x1.0p-53;
  }

  bool NextBoolean() { return Next(1) != 0; }

 private:
  static constexpr uint64_t kMultiplier = 0x5DEECE66DULL;
  static constexpr uint64_t kAddend = 0xBULL;
  static constexpr uint64_t kMask = (uint64_t{1} << 48) - 1;
  uint64_t seed_ = 0;
};

}  // namespace flow::rt
