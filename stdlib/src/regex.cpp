// Regular expressions: POSIX extended syntax through glibc's regcomp/regexec. Chosen over
// std::regex because libstdc++'s matcher recurses per input character and can overflow the stack
// on long inputs; glibc's matcher does not, and REG_STARTEND lets it match text with NUL bytes.

#include <regex.h>

#include <functional>
#include <memory>
#include <unordered_map>

#include "flow/stdlib/scalar.h"

namespace flow::fn {

struct CachedRegex::Compiled {
  regex_t re;
};

CachedRegex::CachedRegex(std::string_view pattern) {
  auto compiled = std::make_unique<Compiled>();
  std::string p(pattern);
  int rc = regcomp(&compiled->re, p.c_str(), REG_EXTENDED);
  if (rc != 0) {
    char buf[256];
    regerror(rc, &compiled->re, buf, sizeof buf);
    error_ = buf;
    return;
  }
  compiled_ = compiled.release();
}

CachedRegex::~CachedRegex() {
  if (compiled_ != nullptr) {
    regfree(&compiled_->re);
    delete compiled_;
  }
}

bool CachedRegex::Matches(std::string_view s) const {
  if (compiled_ == nullptr) return false;
  if (s.data() == nullptr) s = "";  // regexec needs a valid pointer even for an empty range
  regmatch_t m[1];
  m[0].rm_so = 0;
  m[0].rm_eo = static_cast<regoff_t>(s.size());
  return regexec(&compiled_->re, s.data(), 1, m, REG_STARTEND) == 0;
}

std::optional<std::string> CachedRegex::Extract(std::string_view s, int64_t group) const {
  if (compiled_ == nullptr || group < 0 || static_cast<size_t>(group) > compiled_->re.re_nsub) {
    return std::nullopt;
  }
  if (s.data() == nullptr) s = "";
  std::vector<regmatch_t> m(compiled_->re.re_nsub + 1);
  m[0].rm_so = 0;
  m[0].rm_eo = static_cast<regoff_t>(s.size());
  if (regexec(&compiled_->re, s.data(), m.size(), m.data(), REG_STARTEND) != 0) return std::nullopt;
  const regmatch_t& g = m[static_cast<size_t>(group)];
  if (g.rm_so < 0) return std::nullopt;  // the group did not take part in the match
  return std::string(
      s.substr(static_cast<size_t>(g.rm_so), static_cast<size_t>(g.rm_eo - g.rm_so)));
}

namespace impl {
namespace {

// Patterns compiled by this thread; cleared when it grows past kMaxCached distinct patterns, so
// data-dependent patterns cannot grow it without bound.
constexpr size_t kMaxCached = 64;

// Heterogeneous lookup: finding a pattern does not allocate a std::string per call.
struct PatternHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

const CachedRegex& Cached(std::string_view pattern) {
  thread_local std::unordered_map<std::string, std::unique_ptr<CachedRegex>, PatternHash,
                                  std::equal_to<>>
      cache;
  auto it = cache.find(pattern);
  if (it != cache.end()) return *it->second;
  if (cache.size() >= kMaxCached) cache.clear();
  auto inserted = cache.emplace(std::string(pattern), std::make_unique<CachedRegex>(pattern));
  return *inserted.first->second;
}

}  // namespace

bool RegexpLikeImpl::operator()(std::string_view s, std::string_view pattern) const {
  return Cached(pattern).Matches(s);
}

std::optional<std::string> RegexpExtractImpl::operator()(std::string_view s,
                                                         std::string_view pattern,
                                                         int64_t group) const {
  return Cached(pattern).Extract(s, group);
}

}  // namespace impl
}  // namespace flow::fn
