// `metadata:` of kafka sources and sinks (sema/message_metadata.h): entries are string literals
// naming fields of the records' type, each field at most once, of a type the metadata can carry.

#include <set>

#include "sema/checker_impl.h"
#include "sema/message_metadata.h"

namespace flow::sema {

void Checker::CheckMetadata(const ast::ConnectorCall& c, const types::Type& record, bool sink) {
  const char* entries =
      sink ? "entries are \"key=F\", \"timestamp=F\" or \"header:NAME=F\""
           : "entries are \"key=F\", \"timestamp=F\", \"partition=F\", \"offset=F\" or "
             "\"header:NAME=F\"";
  std::set<std::string> used;
  for (const ast::NamedArg& a : c.args) {
    if (a.name.name != "metadata") continue;
    const auto* list = ast::As<ast::ListExpr>(a.value.get());
    if (list == nullptr) {
      diags_
          .Report(diag::Kind::kInvalidArgument, a.value->range,
                  "`metadata` must be a list of string literals")
          .Help(sink ? "e.g. `metadata: [\"key=user_id\", \"header:trace-id=trace\"]`"
                     : "e.g. `metadata: [\"key=user_id\", \"timestamp=kafka_ts\"]`");
      continue;
    }
    for (const ast::ExprPtr& item : list->items) {
      const auto* lit = ast::As<ast::LiteralExpr>(item.get());
      MessageMetadata m;
      std::string problem = lit == nullptr || lit->literal != ast::LiteralKind::kString
                                ? "`metadata` entries must be string literals"
                                : ParseMessageMetadata(lit->string_value, sink, &m);
      if (!problem.empty()) {
        diags_.Report(diag::Kind::kInvalidArgument, item->range, problem).Help(entries);
        continue;
      }
      const types::Field* f = record.FindField(m.field);
      if (f == nullptr) {
        auto& d = diags_.Report(
            diag::Kind::kUnknownField, item->range,
            (sink ? "the records written have no field `" : "the schema has no field `") + m.field +
                "`");
        d.Help(
            sink ? "select the value under that name before `into`, e.g. `| select ..., expr as " +
                       m.field + "`"
                 : "add the field to the schema; the message's metadata fills it instead of the "
                   "payload");
        continue;
      }
      if (!used.insert(m.field).second) {
        diags_.Report(diag::Kind::kInvalidArgument, item->range,
                      "field `" + m.field +
                          (sink ? "` is named by two `metadata` entries"
                                : "` is filled by two `metadata` entries"));
        continue;
      }
      types::Type t = f->type.AsNonNullable();
      bool ok = false;
      std::string want;
      switch (m.what) {
        case MessageMetadata::What::kKey:
        case MessageMetadata::What::kHeader:
          ok = t == types::Type::String() || t == types::Type::Bytes();
          want = sink ? "string or bytes (nullable: null writes no key or header)"
                      : "string or bytes (nullable: null when the message has none)";
          break;
        case MessageMetadata::What::kTimestamp:
          ok = t == types::Type::Timestamp();
          want = sink ? "timestamp (nullable: null keeps the record's event time)" : "timestamp";
          break;
        case MessageMetadata::What::kPartition:
        case MessageMetadata::What::kOffset:
          ok = t == types::Type::Int();
          want = "int";
          break;
      }
      if (!ok) {
        diags_.Report(
            diag::Kind::kTypeMismatch, item->range,
            "field `" + m.field + "` is " + f->type.ToString() + "; this metadata needs " + want);
      }
    }
  }
}

}  // namespace flow::sema
