#pragma once
// UTF-8 decoding: the length of the sequence at a position, and whole-text validation. The one
// copy for the runtime and the compiler (source checks, diagnostics, the language server).
// Header-only: the JSON encoder calls it per non-ASCII character.

#include <cstddef>
#include <string_view>

namespace flow::rt {

// How closely a byte sequence must follow UTF-8 to count as one character.
enum class Utf8Check {
  // RFC 3629: no overlong forms, no UTF-16 surrogates (U+D800-U+DFFF), nothing above U+10FFFF.
  // For text that is checked or written on (source files, record fields, JSON output).
  kStrict,
  // Only the shape: a lead byte 110xxxxx, 1110xxxx or 11110xxx and as many continuation bytes.
  // For display and position arithmetic, where an ill-formed but complete sequence still takes one
  // column (diagnostic snippets, editor positions) and must count the same on every pass.
  kShape,
};

// Length (1-4) of the UTF-8 sequence that starts at s[i] (i < s.size()), or 0 when the bytes
// there do not start one (a stray continuation byte, a truncated sequence, and under kStrict an
// overlong form, a surrogate or a code point above U+10FFFF).
inline size_t Utf8SequenceLength(std::string_view s, size_t i,
                                 Utf8Check check = Utf8Check::kStrict) {
  auto at = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = at(i);
  if (c < 0x80) return 1;
  const size_t n = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
  if (n == 0 || s.size() - i < n) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((at(i + k) & 0xC0) != 0x80) return 0;
  }
  if (check == Utf8Check::kShape) return n;
  // The ranges of RFC 3629's table: the second byte bounds what the lead byte alone cannot.
  const unsigned char c1 = at(i + 1);
  if (c < 0xC2) return 0;                              // C0, C1: overlong two-byte forms
  if (c == 0xE0 && c1 < 0xA0) return 0;                // overlong three-byte forms
  if (c == 0xED && c1 > 0x9F) return 0;                // UTF-16 surrogates
  if (c == 0xF0 && c1 < 0x90) return 0;                // overlong four-byte forms
  if (c > 0xF4 || (c == 0xF4 && c1 > 0x8F)) return 0;  // above U+10FFFF
  return n;
}

// True when all of `s` is valid UTF-8 (kStrict).
inline bool IsValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = Utf8SequenceLength(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

}  // namespace flow::rt
