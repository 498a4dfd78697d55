#include "sema/message_metadata.h"

namespace flow::sema {

std::string ParseMessageMetadata(std::string_view entry, bool sink, MessageMetadata* out) {
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
    out->what = MessageMetadata::What::kKey;
  } else if (what == "timestamp") {
    out->what = MessageMetadata::What::kTimestamp;
  } else if (what == "partition" || what == "offset") {
    if (sink) {
      return bad("a sink cannot choose the " + std::string(what) +
                 ": the broker assigns it (the key picks the partition)");
    }
    out->what =
        what == "partition" ? MessageMetadata::What::kPartition : MessageMetadata::What::kOffset;
  } else if (what.starts_with("header:") && what.size() > 7) {
    out->what = MessageMetadata::What::kHeader;
    out->header = std::string(what.substr(7));
  } else {
    return bad(sink ? "the metadata of a sink is one of key, timestamp or header:<name>"
                    : "the metadata is one of key, timestamp, partition, offset or header:<name>");
  }
  return "";
}

std::vector<MessageMetadata> MessageMetadataOf(const ast::ConnectorCall& connector, bool sink) {
  std::vector<MessageMetadata> out;
  for (const ast::NamedArg& a : connector.args) {
    const auto* list = a.name.name == "metadata" ? ast::As<ast::ListExpr>(a.value.get()) : nullptr;
    if (list == nullptr) continue;
    for (const ast::ExprPtr& item : list->items) {
      const auto* lit = ast::As<ast::LiteralExpr>(item.get());
      MessageMetadata m;
      if (lit != nullptr && lit->literal == ast::LiteralKind::kString &&
          ParseMessageMetadata(lit->string_value, sink, &m).empty()) {
        out.push_back(std::move(m));
      }
    }
  }
  return out;
}

bool IsMetadataField(const std::vector<MessageMetadata>& metadata, const std::string& field) {
  for (const MessageMetadata& m : metadata) {
    if (m.field == field) return true;
  }
  return false;
}

}  // namespace flow::sema
