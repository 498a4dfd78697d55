#pragma once
// flow::diag::Kind: the one list of every diagnostic flowc can emit. Each kind has a stable id
// (shown as `[unknown-field]`, used by --diagnostics-format json, golden tests and
// docs/compiler.md) and a default severity. Add new kinds at the end of their group and to
// kinds.cpp's table.

#include <string_view>
#include <vector>

namespace flow::diag {

enum class Severity { kError, kWarning, kNote };

enum class Kind {
  // Reading and lexing.
  kIoError,
  kInvalidUtf8,
  kInvalidCharacter,
  kUnterminatedString,
  kUnterminatedComment,
  kInvalidEscape,
  kInvalidLiteral,
  // Parsing.
  kSyntaxError,
  kNestingTooDeep,
  kTooManyErrors,
  // Names.
  kDuplicateDefinition,
  kUnknownStream,
  kUseBeforeDefinition,
  kStreamCycle,
  kUnknownType,
  kUnknownField,
  kUnknownName,
  kAmbiguousName,
  kUnknownFunction,
  kDuplicateField,
  kInvalidFieldName,
  // Connectors, formats, clauses.
  kUnknownConnector,
  kUnknownArgument,
  kMissingArgument,
  kDuplicateArgument,
  kInvalidArgument,
  kUnknownFormat,
  kMissingFormat,
  kMissingSchema,
  kDuplicateClause,
  kNotConstant,
  // Types.
  kTypeMismatch,
  kInvalidOperands,
  kConditionNotBool,
  kInvalidCast,
  kBadCall,
  kEventTimeType,
  kExplodeNotList,
  kInvalidKeyType,
  kSelectNeedsName,
  // Streams.
  kAggregateNotAllowed,
  kNestedAggregate,
  kFieldNotAggregated,
  kWindowNeedsTime,
  kWindowWithoutAggregate,
  kWindowFieldUnavailable,
  kJoinCondition,
  kJoinNeedsTime,
  kUnionSchemaMismatch,
  kExactlyOnceUnsupported,
  kPipelineWithoutSink,
  kSinkInStream,
  kOperatorAfterSink,
  kUnusedStream,
  // Plan and code generation (found after checking, reported by `flowc check` too).
  kUnsupported,
  kAlwaysFalse,
  kCount,
};

struct KindInfo {
  Kind kind;
  std::string_view id;       // stable, kebab-case
  Severity severity;         // default severity
  std::string_view summary;  // one line, for docs and `flowc help diagnostics`
};

const KindInfo& Info(Kind kind);
std::string_view KindId(Kind kind);
// Every kind in declaration order (excluding kCount).
const std::vector<KindInfo>& AllKinds();

}  // namespace flow::diag
