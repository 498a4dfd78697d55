#include "codegen/node_text.h"

#include <filesystem>

#include "codegen/escape.h"

namespace flow::codegen {

std::string CppDuration(const ast::DurationRef& d) {
  if (d.is_param) return "P." + MangleIdent(d.param);
  return "int64_t{" + std::to_string(d.millis) + "}";
}

std::string CppZone(const ast::ZoneRef& z) {
  if (z.is_param) return "P." + MangleIdent(z.param);
  return CppStringLiteral(z.name);
}

void NodeHeader(Writer& w, const plan::Node& n, const std::string& what,
                const std::string& flow_file) {
  w.Line("");
  w.Line("// " + CommentText(n.stream, 60) + ": " + what + " (" +
         CommentText(std::filesystem::path(flow_file).filename().string(), 60) + " line " +
         std::to_string(n.range.line) + ")");
}

}  // namespace flow::codegen
