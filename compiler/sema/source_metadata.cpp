#include "sema/source_metadata.h"

namespace flow::sema {

std::string ParseSourceMetadata(std::string_view entry, SourceMetadata* out) {
  auto bad = [&](std::string_view why) {
    return "`metadata` entry \"" + std::string(entry) + "\": " + std::string(why);
  };
  size_t eq = entry.rfind('=');
  if (eq == std::string_view::npos || eq + 1 == entry.size()) {
    return bad("want `what=field`, e.g. \"key=user_id\" or \"header:trace-id=trace\"");
  }
  std::string_view what = entry.substr(0, eq);
  out->field = std::string(entry.substr(eq + 1));
  out->header.clear();
  if (what == "key") {
    out->what = SourceMetadata::What::kKey;
  } else if (what == "timestamp") {
    out->what = SourceMetadata::What::kTimestamp;
  } else if (what == "partition") {
    out->what = SourceMetadata::What::kPartition;
  } else if (what == "offset") {
    out->what = SourceMetadata::What::kOffset;
  } else if (what.starts_with("header:") && what.size() > 7) {
    out->what = SourceMetadata::What::kHeader;
    out->header = std::string(what.substr(7));
  } else {
    return bad("the metadata is one of key, timestamp, partition, offset or header:<name>");
  }
  return "";
}

std::vector<SourceMetadata> SourceMetadataOf(const ast::Source& source) {
  std::vector<SourceMetadata> out;
  for (const ast::NamedArg& a : source.connector.args) {
    const auto* list = a.name.name == "metadata" ? ast::As<ast::ListExpr>(a.value.get()) : nullptr;
    if (list == nullptr) continue;
    for (const ast::ExprPtr& item : list->items) {
      const auto* lit = ast::As<ast::LiteralExpr>(item.get());
      SourceMetadata m;
      if (lit != nullptr && lit->literal == ast::LiteralKind::kString &&
          ParseSourceMetadata(lit->string_value, &m).empty()) {
        out.push_back(std::move(m));
      }
    }
  }
  return out;
}

}  // namespace flow::sema
