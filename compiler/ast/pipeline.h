#pragma once
// Pipelines: a head (a source or a stream name) followed by `|` operators. Sema sets each
// operator's `output` record type and the pipeline's `output`.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ast/common.h"
#include "ast/expr.h"

namespace flow::ast {

struct NamedArg {
  Ident name;
  ExprPtr value;
};

// `kafka(topic: "x", brokers: brokers)`.
struct ConnectorCall {
  Ident name;
  std::vector<NamedArg> args;
  SourceRange range;
};

// `format json` or `format csv(header: true)`.
struct FormatClause {
  Ident name;
  std::vector<NamedArg> args;
  SourceRange range;
};

struct EventTimeClause {
  ExprPtr expr;
  DurationRef watermark;
  std::optional<DurationRef> idle;
  SourceRange range;
};

enum class ErrorPolicyKind { kFail, kSkip, kDeadLetter };

struct ErrorPolicy {
  ErrorPolicyKind kind = ErrorPolicyKind::kFail;
  std::optional<ConnectorCall> sink;   // dead_letter only
  std::optional<FormatClause> format;  // dead_letter only
  SourceRange range;
};

// `from kafka(...) format json as Click event time ts watermark 5s on error skip`.
struct Source {
  ConnectorCall connector;
  std::optional<FormatClause> format;
  std::optional<Ident> schema;
  std::optional<EventTimeClause> event_time;
  std::optional<ErrorPolicy> on_error;
  SourceRange range;
};

enum class OpKind { kWhere, kKeyBy, kWindow, kAggregate, kSelect, kExplode, kUnion, kJoin, kInto };

struct Op {
  explicit Op(OpKind k) : kind(k) {}
  virtual ~Op() = default;
  OpKind kind;
  SourceRange range;  // the whole operator
  SourceRange keyword_range;
  types::Type output;  // record type after this operator (sema)
};
using OpPtr = std::unique_ptr<Op>;

template <class T>
T* As(Op* op) {
  return op && op->kind == T::kKind ? static_cast<T*>(op) : nullptr;
}
template <class T>
const T* As(const Op* op) {
  return op && op->kind == T::kKind ? static_cast<const T*>(op) : nullptr;
}

struct WhereOp : Op {
  static constexpr OpKind kKind = OpKind::kWhere;
  WhereOp() : Op(kKind) {}
  ExprPtr condition;
};

struct KeyByOp : Op {
  static constexpr OpKind kKind = OpKind::kKeyBy;
  KeyByOp() : Op(kKind) {}
  std::vector<ExprPtr> keys;
  std::vector<std::string> key_names;  // output field names of the keys (sema)
};

enum class Delivery { kAtLeastOnce, kExactlyOnce };

struct IntoOp : Op {
  static constexpr OpKind kKind = OpKind::kInto;
  IntoOp() : Op(kKind) {}
  ConnectorCall sink;
  std::optional<FormatClause> format;
  Delivery delivery = Delivery::kAtLeastOnce;
  std::optional<SourceRange> delivery_range;  // set when written explicitly
};

enum class WindowShape { kTumbling, kSliding, kSession };

struct WindowSpec {
  WindowShape shape = WindowShape::kTumbling;
  DurationRef size;                  // tumbling/sliding size, session gap
  std::optional<DurationRef> slide;  // sliding: `every`
  std::optional<ZoneRef> zone;       // tumbling/sliding: aligned to this zone's wall clock
  std::optional<DurationRef> lateness;
  bool processing_time = false;
  SourceRange range;
};

struct WindowOp : Op {
  static constexpr OpKind kKind = OpKind::kWindow;
  WindowOp() : Op(kKind) {}
  WindowSpec spec;
  // `on late into <sink> ...`: the sink late records go to instead of being dropped. Its range
  // spans the clause from `on`; sema sets its `output` to the window's input record. Not in
  // Pipeline::ops: it is a side output of the window, not a step of the pipeline.
  std::unique_ptr<IntoOp> late_sink;
};

// `expr as name`; `output_name` is the alias or, for a plain field, its name (sema).
struct NamedExpr {
  ExprPtr expr;
  std::optional<Ident> alias;
  std::string output_name;
};

struct AggregateOp : Op {
  static constexpr OpKind kKind = OpKind::kAggregate;
  AggregateOp() : Op(kKind) {}
  std::vector<NamedExpr> items;
  bool windowed = false;  // sema: follows a window
};

struct SelectItem {
  bool star = false;  // `*`: every input field
  SourceRange star_range;
  NamedExpr item;
};

struct SelectOp : Op {
  static constexpr OpKind kKind = OpKind::kSelect;
  SelectOp() : Op(kKind) {}
  std::vector<SelectItem> items;
};

struct ExplodeOp : Op {
  static constexpr OpKind kKind = OpKind::kExplode;
  ExplodeOp() : Op(kKind) {}
  ExprPtr list;
  Ident alias;
};

struct UnionOp : Op {
  static constexpr OpKind kKind = OpKind::kUnion;
  UnionOp() : Op(kKind) {}
  std::vector<Ident> streams;
};

struct JoinOp : Op {
  static constexpr OpKind kKind = OpKind::kJoin;
  JoinOp() : Op(kKind) {}
  Ident right;
  ExprPtr condition;
  std::optional<DurationRef> within;  // interval join
  std::optional<WindowSpec> window;   // window join
  std::string left_name;              // qualifier of the left side (sema)
};

struct Pipeline {
  std::optional<Source> source;  // set when the head is `from ...`
  std::optional<Ident> head;     // set when the head is a stream name
  std::vector<OpPtr> ops;
  SourceRange range;
  types::Type output;  // record type at the end (sema)
};

}  // namespace flow::ast
