#pragma once
// What the checked program says about each name in the text: a flat list of occurrences (every
// declaration and every use of a param, schema, schema field, record field, stream, function or
// extern fn, plus each pipeline operator keyword) with its type and, when known, where it is
// defined. Hover, go-to-definition and document symbols read this list instead of walking the
// AST themselves.
//
// Built from a sema::CheckedProgram after Check (types and resolutions are annotated in place).
// Parts with errors still produce occurrences where their names resolved. Walks are bounded by
// the parser's expression depth limit. Threading: plain data.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "diag/source_range.h"
#include "sema/checker.h"
#include "stdlib/registry/registry.h"

namespace flow::lsp {

enum class SymbolKind {
  kParam,
  kSchema,
  kSchemaField,  // a field as declared in a schema
  kField,        // a field of the record flowing at that point (select output, join side, ...)
  kStream,
  kExternFn,
  kFunction,   // a stdlib function or aggregate
  kOperator,   // a pipeline operator keyword: its type is the record it produces
  kConnector,  // a connector name; `owner` is "source" or "sink"
  kFormat,     // a format name
};

struct Occurrence {
  SymbolKind kind = SymbolKind::kParam;
  std::string name;
  uint32_t begin = 0;  // byte range of the name in the text
  uint32_t end = 0;
  types::Type type;       // value type; record type for schemas, streams and operators
  std::string owner;      // the schema or stream a field belongs to, when known
  std::string wire_name;  // a field's name in the data, when it differs from `name`
  const stdlib::FunctionSpec* function = nullptr;
  const ast::ExternFnDecl* extern_fn = nullptr;
  std::optional<diag::SourceRange> definition;  // where the name is declared
  bool is_declaration = false;
};

std::vector<Occurrence> CollectOccurrences(const sema::CheckedProgram& program);

// The innermost occurrence whose range contains `offset` (the end counts: a cursor just after a
// name still means it), or nullptr.
const Occurrence* FindOccurrence(const std::vector<Occurrence>& occurrences, uint32_t offset);

// The record type flowing into the pipeline operator that `offset` falls in (or, past an
// operator, the record it produces), for field completion. Error when unknown.
types::Type RecordAt(const sema::CheckedProgram& program, uint32_t offset, std::string_view text);

// The record type a pipeline's head produces: its source's schema (or nexmark event) or the
// record of the stream it reads. Error when unknown.
types::Type HeadRecord(const sema::CheckedProgram& program, const ast::Pipeline& pipeline);

}  // namespace flow::lsp
