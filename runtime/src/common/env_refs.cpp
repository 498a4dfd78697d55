#include "flow/runtime/common/env_refs.h"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

namespace flow::rt {
namespace {

bool IsNameChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

}  // namespace

Result<std::string> ExpandEnvRefs(std::string_view raw, std::string_view what,
                                  const std::function<const char*(const char*)>& getenv) {
  std::string value;
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] != '$') {
      value.push_back(raw[i]);
      continue;
    }
    if (i + 1 < raw.size() && raw[i + 1] == '$') {
      value.push_back('$');
      ++i;
      continue;
    }
    if (i + 1 >= raw.size() || raw[i + 1] != '{') {
      value.push_back('$');
      continue;
    }
    const size_t close = raw.find('}', i + 2);
    const std::string name(raw.substr(i + 2, close == std::string_view::npos ? 0 : close - i - 2));
    if (close == std::string_view::npos || name.empty() ||
        !std::all_of(name.begin(), name.end(), IsNameChar)) {
      return Status::InvalidArgument(fmt::format(
          "{}: write ${{NAME}} with NAME of letters, digits and '_' ($$ for a $)", what));
    }
    const char* v = getenv ? getenv(name.c_str()) : std::getenv(name.c_str());
    if (v == nullptr) {
      return Status::InvalidArgument(
          fmt::format("{} names the environment variable {}, which is not set", what, name));
    }
    value += v;
    i = close;
  }
  return value;
}

}  // namespace flow::rt
