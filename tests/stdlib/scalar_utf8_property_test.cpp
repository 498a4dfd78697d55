// Randomised checks of the code-point based string functions against a reference that works on a
// vector of characters (each a std::string), written independently here.

#include <gtest/gtest.h>

#include <random>

#include "flow/stdlib/scalar.h"

namespace flow::fn {
namespace {

using Chars = std::vector<std::string>;

const Chars kAlphabet = {"a", "b", ",", " ", "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80"};

Chars RandomChars(std::mt19937& rng, size_t max_len) {
  std::uniform_int_distribution<size_t> len(0, max_len);
  std::uniform_int_distribution<size_t> pick(0, kAlphabet.size() - 1);
  Chars out(len(rng));
  for (auto& c : out) c = kAlphabet[pick(rng)];
  return out;
}

std::string Join(const Chars& cs, size_t from = 0, size_t to = std::string::npos) {
  std::string s;
  for (size_t i = from; i < cs.size() && i < to; ++i) s += cs[i];
  return s;
}

// SQL substring: characters at 1-based positions p with start <= p < start + len and 1 <= p <= n.
std::string RefSubstr(const Chars& cs, int64_t start, int64_t len) {
  std::string s;
  for (int64_t p = 1; p <= static_cast<int64_t>(cs.size()); ++p) {
    if (p >= start && p < start + len) s += cs[static_cast<size_t>(p - 1)];
  }
  return s;
}

std::string RefPad(const Chars& cs, int64_t len, const Chars& pad, bool left) {
  if (len <= 0) return "";
  if (static_cast<int64_t>(cs.size()) >= len) return Join(cs, 0, static_cast<size_t>(len));
  if (pad.empty()) return Join(cs);
  std::string fill;
  for (int64_t i = 0; i < len - static_cast<int64_t>(cs.size()); ++i) {
    fill += pad[static_cast<size_t>(i) % pad.size()];
  }
  return left ? fill + Join(cs) : Join(cs) + fill;
}

TEST(StdlibUtf8Property, SubstrLengthReversePadMatchReference) {
  std::mt19937 rng(31);
  std::uniform_int_distribution<int64_t> pos(-4, 14);
  std::uniform_int_distribution<int64_t> len(-2, 14);
  for (int iter = 0; iter < 3000; ++iter) {
    Chars cs = RandomChars(rng, 10);
    std::string s = Join(cs);
    ASSERT_EQ(Length(s), static_cast<int64_t>(cs.size())) << s;
    int64_t start = pos(rng);
    int64_t n = len(rng);
    ASSERT_EQ(Substr(s, start, n), RefSubstr(cs, start, n)) << s << " " << start << " " << n;
    ASSERT_EQ(Substr(s, start), RefSubstr(cs, start, 1000)) << s << " " << start;
    Chars reversed(cs.rbegin(), cs.rend());
    ASSERT_EQ(Reverse(s), Join(reversed)) << s;
    Chars pad = RandomChars(rng, 3);
    ASSERT_EQ(Lpad(s, n, Join(pad)), RefPad(cs, n, pad, true)) << s;
    ASSERT_EQ(Rpad(s, n, Join(pad)), RefPad(cs, n, pad, false)) << s;
    ASSERT_EQ(Upper(s), [&] {
      std::string u;
      for (const auto& c : cs) u += c == "a" ? "A" : c == "b" ? "B" : c;
      return u;
    }()) << s;
  }
}

TEST(StdlibUtf8Property, SplitOnCommaMatchesReference) {
  std::mt19937 rng(32);
  for (int iter = 0; iter < 3000; ++iter) {
    Chars cs = RandomChars(rng, 12);
    std::string s = Join(cs);
    std::vector<std::string> expected;
    if (!cs.empty()) {
      expected.emplace_back();
      for (const auto& c : cs) {
        if (c == ",") {
          expected.emplace_back();
        } else {
          expected.back() += c;
        }
      }
    }
    ASSERT_EQ(Split(s, std::string(",")), expected) << s;
    ASSERT_EQ(Split(s, std::string("")), cs) << s;
  }
}

}  // namespace
}  // namespace flow::fn
