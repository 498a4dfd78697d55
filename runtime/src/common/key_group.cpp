#include "flow/runtime/common/key_group.h"

#include <cstring>

namespace flow::rt {

uint64_t StableHash(std::string_view bytes) {
  // FNV-1a over the bytes, then mixed: stable across builds and platforms.
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return MixHash(h ^ bytes.size());
}

uint64_t StableHash(double value) {
  if (value == 0.0) value = 0.0;  // -0.0 and 0.0 are equal keys
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return MixHash(bits);
}

}  // namespace flow::rt
