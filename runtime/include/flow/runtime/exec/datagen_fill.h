#pragma once
// Helpers for the generated fill function of a `datagen` source (generators/datagen.h). The
// generated code draws every schema field in schema order from the record's DatagenRng, one
// expression per Flow type (docs/language.md, "datagen"); the types without a one-call draw are
// here.

#include <cstdint>
#include <string>

#include "flow/runtime/generators/datagen.h"

namespace flow::exec {

// `bytes`: 8 random bytes.
inline std::string DatagenBytes(rt::DatagenRng& rng) {
  uint64_t v = rng.NextU64();
  std::string out(8, '\0');
  for (size_t i = 0; i < 8; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return out;
}

// `duration`: uniform in [0, 60s), in milliseconds.
inline int64_t DatagenDuration(rt::DatagenRng& rng) {
  return rng.NextInt(0, 59999);
}

}  // namespace flow::exec
