#include "flow/runtime/common/key_group.h"

#include <cstring>

namespace flow::rt {
namespace {
// 64-bit finalizer from MurmurHash3 (public domain algorithm): good avalanche for integer keys.
uint64_t Mix(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}
}  // namespace

uint64_t StableHash(std::string_view bytes) {
  // FNV-1a over the bytes, then mixed: stable across builds and platforms.
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return Mix(h ^ bytes.size());
}

uint64_t StableHash(int64_t value) { return Mix(static_cast<uint64_t>(value)); }

uint64_t StableHash(double value) {
  if (value == 0.0) value = 0.0;  // -0.0 and 0.0 are equal keys
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return Mix(bits);
}

uint64_t StableHash(bool value) { return Mix(value ? 1 : 2); }

uint64_t HashCombine(uint64_t seed, uint64_t value) {
  return Mix(seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2)));
}

}  // namespace flow::rt
