// String functions of flow::fn that are too large to inline. UTF-8 is handled by code point;
// malformed bytes never fail, they count as one character each.

#include <charconv>
#include <cmath>

#include "flow/stdlib/scalar.h"

namespace flow::fn::impl {
namespace {

bool IsContinuation(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

// Splits `s` into code points (a lead byte plus its continuation bytes).
std::vector<std::string_view> CodePointViews(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = i + 1;
    while (j < s.size() && IsContinuation(s[j])) ++j;
    out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

// Pad lengths above this are treated as this, so a bad `len` cannot exhaust memory.
constexpr int64_t kMaxPadLength = int64_t{1} << 20;

std::string_view TrimView(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && IsSpace(s[b])) ++b;
  while (e > b && IsSpace(s[e - 1])) --e;
  return s.substr(b, e - b);
}

}  // namespace

int64_t CodePoints(std::string_view s) {
  int64_t n = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    // A continuation byte at the very start still counts, so malformed text has a length.
    if (i == 0 || !IsContinuation(s[i])) ++n;
  }
  return n;
}

size_t ByteOffsetOf(std::string_view s, int64_t index) {
  if (index <= 0) return 0;
  int64_t seen = 0;
  for (size_t i = 1; i < s.size(); ++i) {
    if (!IsContinuation(s[i]) && ++seen == index) return i;
  }
  return s.size();
}

std::string SubstrImpl::operator()(std::string_view s, int64_t start) const {
  return std::string(s.substr(ByteOffsetOf(s, std::max<int64_t>(start, 1) - 1)));
}

std::string SubstrImpl::operator()(std::string_view s, int64_t start, int64_t len) const {
  if (len < 0) return "";
  // The window [start, start + len) in 1-based positions, clipped to the string (SQL rules).
  int64_t end = len > std::numeric_limits<int64_t>::max() - std::max<int64_t>(start, 0)
                    ? std::numeric_limits<int64_t>::max()
                    : start + len;
  int64_t first = std::max<int64_t>(start, 1);
  if (end <= first) return "";
  size_t b = ByteOffsetOf(s, first - 1);
  size_t e = ByteOffsetOf(s, end - 1);
  return std::string(s.substr(b, e - b));
}

std::string ReplaceImpl::operator()(std::string_view s, std::string_view from,
                                    std::string_view to) const {
  if (from.empty()) return std::string(s);
  std::string out;
  size_t pos = 0;
  while (true) {
    size_t hit = s.find(from, pos);
    if (hit == std::string_view::npos) break;
    out.append(s.substr(pos, hit - pos));
    out.append(to);
    pos = hit + from.size();
  }
  out.append(s.substr(pos));
  return out;
}

std::vector<std::string> SplitImpl::operator()(std::string_view s, std::string_view sep) const {
  std::vector<std::string> out;
  if (s.empty()) return out;
  if (sep.empty()) {
    for (std::string_view cp : CodePointViews(s)) out.emplace_back(cp);
    return out;
  }
  size_t pos = 0;
  while (true) {
    size_t hit = s.find(sep, pos);
    if (hit == std::string_view::npos) break;
    out.emplace_back(s.substr(pos, hit - pos));
    pos = hit + sep.size();
  }
  out.emplace_back(s.substr(pos));
  return out;
}

std::string PadImpl::operator()(std::string_view s, int64_t len, std::string_view pad) const {
  len = std::min(len, kMaxPadLength);
  if (len <= 0) return "";
  int64_t n = CodePoints(s);
  if (n >= len) return std::string(s.substr(0, ByteOffsetOf(s, len)));
  if (pad.empty()) return std::string(s);
  std::vector<std::string_view> pad_cps = CodePointViews(pad);
  std::string fill;
  for (int64_t i = 0; i < len - n; ++i)
    fill.append(pad_cps[static_cast<size_t>(i) % pad_cps.size()]);
  return left ? fill + std::string(s) : std::string(s) + fill;
}

std::string ReverseImpl::operator()(std::string_view s) const {
  std::vector<std::string_view> cps = CodePointViews(s);
  std::string out;
  out.reserve(s.size());
  for (auto it = cps.rbegin(); it != cps.rend(); ++it) out.append(*it);
  return out;
}

std::optional<int64_t> ParseIntImpl::operator()(std::string_view s) const {
  s = TrimView(s);
  if (s.starts_with('+')) s.remove_prefix(1);
  if (s.empty() || s[0] == '+') return std::nullopt;
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> ParseFloatImpl::operator()(std::string_view s) const {
  s = TrimView(s);
  if (s.starts_with('+')) s.remove_prefix(1);
  if (s.empty() || s[0] == '+') return std::nullopt;
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  // Out of range (e.g. "1e999") is not a number we can represent: null rather than a guess.
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string FormatDouble(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  (void)ec;  // 64 bytes always fit the shortest representation of a double
  std::string out(buf, end);
  // Keep floats recognisable as floats: 3.0, not 3.
  if (out.find_first_of(".e") == std::string::npos) out += ".0";
  return out;
}

double RoundImpl::operator()(double x, int64_t digits) const {
  if (!std::isfinite(x)) return x;
  if (digits > 15) return x;  // beyond double precision: nothing to round
  if (digits < -308) return 0.0 * x;
  double scale = std::pow(10.0, static_cast<double>(digits));
  double r = std::round(x * scale) / scale;
  return std::isfinite(r) ? r : x;
}

int64_t RoundImpl::operator()(int64_t x, int64_t digits) const {
  if (digits >= 0) return x;
  if (digits < -18) return 0;
  int64_t p = 1;
  for (int64_t i = 0; i < -digits; ++i) p *= 10;
  int64_t q = x / p;
  int64_t r = x % p;
  // Half away from zero; compare |r| with p/2 without overflow.
  if (r >= 0 ? r >= p - r : -r >= p + r) q += x < 0 ? -1 : 1;
  // The rounded magnitude may not fit (near INT64_MAX): keep the truncated value then.
  if (q > std::numeric_limits<int64_t>::max() / p || q < std::numeric_limits<int64_t>::min() / p) {
    q = x / p;
  }
  return q * p;
}

}  // namespace flow::fn::impl
