#include "flow/runtime/common/job_id.h"

namespace flow::rt {
namespace {
bool IdChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}
}  // namespace

bool IsValidJobId(std::string_view id) {
  if (id.empty() || id.size() > 200) return false;
  for (char c : id) {
    if (!IdChar(c)) return false;
  }
  return true;
}

std::string JobIdFromName(std::string_view name) {
  if (auto slash = name.find_last_of('/'); slash != std::string_view::npos)
    name = name.substr(slash + 1);
  std::string id(name.substr(0, 200));
  for (char& c : id) {
    if (!IdChar(c)) c = '_';
  }
  return id.empty() ? "job" : id;
}

}  // namespace flow::rt
