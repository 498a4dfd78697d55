#include "diag/kinds.h"

#include <cassert>

namespace flow::diag {
namespace {

using enum Severity;

const std::vector<KindInfo>& Table() {
  static const std::vector<KindInfo> table = {
      {Kind::kIoError, "io-error", kError,
       "a file could not be read (missing, a directory, unreadable)"},
      {Kind::kInvalidUtf8, "invalid-utf8", kError, "the file is not valid UTF-8"},
      {Kind::kInvalidCharacter, "invalid-character", kError,
       "a character that cannot start any token"},
      {Kind::kUnterminatedString, "unterminated-string", kError,
       "a string literal without its closing quote"},
      {Kind::kUnterminatedComment, "unterminated-comment", kError, "a block comment without `*/`"},
      {Kind::kInvalidEscape, "invalid-escape", kError,
       "an unknown escape sequence in a string literal"},
      {Kind::kInvalidLiteral, "invalid-literal", kError,
       "a literal out of range or malformed (int overflow, bad timestamp)"},
      {Kind::kSyntaxError, "syntax-error", kError, "the text does not follow the grammar"},
      {Kind::kNestingTooDeep, "nesting-too-deep", kError,
       "brackets or expressions nested deeper than the compiler allows"},
      {Kind::kTooManyErrors, "too-many-errors", kError,
       "the error limit was reached; later errors are not shown"},
      {Kind::kDuplicateDefinition, "duplicate-definition", kError,
       "a name defined twice at the top level"},
      {Kind::kUnknownStream, "unknown-stream", kError, "a stream name that is never defined"},
      {Kind::kUseBeforeDefinition, "use-before-definition", kError,
       "a stream used above its definition"},
      {Kind::kStreamCycle, "stream-cycle", kError, "streams that depend on themselves"},
      {Kind::kUnknownType, "unknown-type", kError, "a type or schema name that does not exist"},
      {Kind::kUnknownField, "unknown-field", kError, "a field that the record does not have"},
      {Kind::kUnknownName, "unknown-name", kError, "a name that is neither a field nor a param"},
      {Kind::kAmbiguousName, "ambiguous-name", kError,
       "an unqualified name found on both sides of a join"},
      {Kind::kUnknownFunction, "unknown-function", kError,
       "a call to a function that is not in the standard library or declared extern"},
      {Kind::kDuplicateField, "duplicate-field", kError,
       "two fields (or output columns) with the same name, in scripts or in the data"},
      {Kind::kInvalidFieldName, "invalid-field-name", kError,
       "a quoted field name that needs `as <name>`, or that no format can carry (a NUL byte)"},
      {Kind::kUnknownConnector, "unknown-connector", kError,
       "a source or sink kind that does not exist"},
      {Kind::kUnknownArgument, "unknown-argument", kError,
       "a connector or format argument it does not take"},
      {Kind::kMissingArgument, "missing-argument", kError,
       "a required connector argument is missing"},
      {Kind::kDuplicateArgument, "duplicate-argument", kError, "an argument given twice"},
      {Kind::kInvalidArgument, "invalid-argument", kError,
       "an argument of the wrong type or value"},
      {Kind::kUnknownFormat, "unknown-format", kError, "a format other than json, csv, raw"},
      {Kind::kMissingFormat, "missing-format", kError,
       "a connector that needs `format ...` has none"},
      {Kind::kMissingSchema, "missing-schema", kError, "a source that needs `as Schema` has none"},
      {Kind::kDuplicateClause, "duplicate-clause", kError,
       "a source clause (format, as, event time, on error) given twice"},
      {Kind::kNotConstant, "not-constant", kError,
       "an expression that must be known at compile or start time is not"},
      {Kind::kTypeMismatch, "type-mismatch", kError,
       "a value of one type where another is expected"},
      {Kind::kInvalidOperands, "invalid-operands", kError,
       "an operator applied to types it does not accept"},
      {Kind::kConditionNotBool, "condition-not-bool", kError,
       "a `where`, `when` or join condition that is not bool"},
      {Kind::kInvalidCast, "invalid-cast", kError, "a cast between types that cannot be converted"},
      {Kind::kBadCall, "bad-call", kError,
       "a function called with the wrong number or types of arguments"},
      {Kind::kEventTimeType, "event-time-type", kError,
       "an event-time expression that is not a timestamp"},
      {Kind::kExplodeNotList, "explode-not-list", kError,
       "`explode` of something that is not a list"},
      {Kind::kInvalidKeyType, "invalid-key-type", kError,
       "a `key by` expression of a type that cannot be a key"},
      {Kind::kSelectNeedsName, "select-needs-name", kError,
       "a computed output column without `as name`"},
      {Kind::kAggregateNotAllowed, "aggregate-not-allowed", kError,
       "an aggregate function outside `aggregate`"},
      {Kind::kNestedAggregate, "nested-aggregate", kError,
       "an aggregate inside another aggregate's argument"},
      {Kind::kFieldNotAggregated, "field-not-aggregated", kError,
       "a field in `aggregate` that is neither a key nor inside an aggregate"},
      {Kind::kWindowNeedsTime, "window-needs-time", kError,
       "a window on a stream without event time and without `processing time`"},
      {Kind::kWindowWithoutAggregate, "window-without-aggregate", kError,
       "a `window` not directly followed by `aggregate`"},
      {Kind::kWindowFieldUnavailable, "window-field-unavailable", kError,
       "`window_start`/`window_end` used where no window produced them"},
      {Kind::kJoinCondition, "join-condition", kError,
       "a join condition that is not `and`-ed equalities between the two sides"},
      {Kind::kJoinNeedsTime, "join-needs-time", kError,
       "a time-bounded join on a stream without event time"},
      {Kind::kUnionSchemaMismatch, "union-schema-mismatch", kError,
       "`union` of streams whose records differ"},
      {Kind::kExactlyOnceUnsupported, "exactly-once-unsupported", kError,
       "`exactly_once` on a sink that cannot provide it"},
      {Kind::kPipelineWithoutSink, "pipeline-without-sink", kError,
       "a top-level pipeline that does not end in `into`"},
      {Kind::kSinkInStream, "sink-in-stream", kError, "`into` inside a `stream` definition"},
      {Kind::kOperatorAfterSink, "operator-after-sink", kError, "an operator after `into`"},
      {Kind::kUnusedStream, "unused-stream", kWarning, "a stream that nothing reads"},
      {Kind::kUnsupported, "unsupported", kError,
       "a valid construct that `flowc build` cannot compile yet"},
      {Kind::kAlwaysFalse, "always-false", kWarning, "a `where` condition that no record can pass"},
  };
  return table;
}

}  // namespace

const std::vector<KindInfo>& AllKinds() {
  static_assert(static_cast<int>(Kind::kCount) == 56, "update the table in kinds.cpp");
  assert(Table().size() == static_cast<size_t>(Kind::kCount) && "kinds table out of sync");
  return Table();
}

const KindInfo& Info(Kind kind) {
  const KindInfo& info = AllKinds()[static_cast<size_t>(kind)];
  assert(info.kind == kind && "kinds table out of order");
  return info;
}

std::string_view KindId(Kind kind) {
  return Info(kind).id;
}

}  // namespace flow::diag
