#pragma once
// Internal to flow::sema: the Checker and the state it threads through a pipeline.

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sema/checker.h"

namespace flow::sema {

// One named input visible in expressions: the record of a stream, or one side of a join.
struct Side {
  std::string name;  // qualifier (`a` in `a.user`); empty when the input has no name
  types::Type record;
  diag::SourceRange declared;  // where the stream was defined, for notes
};

// What is known about the records flowing at a point of a pipeline.
struct FlowState {
  std::vector<Side> sides;  // one side, or two right after a join
  types::Type record;       // the record type (merged for joins)
  bool event_time = false;
  bool window_fields = false;     // window_start/window_end are in scope (window join)
  std::vector<std::string> keys;  // key field names after `key by`; empty when not keyed
  std::vector<types::Type> key_types;
  bool keyed = false;
  const ast::WindowOp* window = nullptr;  // a window waiting for its aggregate
  bool broken = false;                    // the record is unknown; suppress follow-on field errors
};

// Where an expression appears; decides what it may contain.
struct ExprContext {
  const FlowState* state = nullptr;  // null: only params and literals (param defaults, args)
  bool aggregates_allowed = false;   // inside `aggregate`
  bool in_aggregate = false;         // inside an aggregate call's arguments
  const char* where = "here";        // for messages: "in `where`", ...
  std::set<std::string>* enum_values = nullptr;  // bare names accepted as enum values
};

class Checker {
 public:
  Checker(const diag::SourceManager& sm, diag::DiagnosticEngine& diags, CheckedProgram& out)
      : sm_(sm), diags_(diags), out_(out) {}

  void Run();

  // checker_decls.cpp
  void CollectDecls();
  void CheckSchema(ast::SchemaDecl& s);
  void CheckParam(ast::ParamDecl& p);
  void CheckExtern(ast::ExternFnDecl& f);
  types::Type ResolveType(const ast::TypeRef& t, bool allow_records);
  void ReportUnused();

  // checker_pipeline.cpp
  FlowState CheckPipeline(ast::Pipeline& p, bool is_stream, const ast::StreamDecl* self);
  FlowState CheckHead(ast::Pipeline& p, const ast::StreamDecl* self);
  void CheckOp(ast::Op& op, FlowState& st, bool is_last, bool is_stream);
  void CheckAggregate(ast::AggregateOp& op, FlowState& st);
  void CheckSelect(ast::SelectOp& op, FlowState& st);
  void CheckJoin(ast::JoinOp& op, FlowState& st);
  void CheckUnion(ast::UnionOp& op, FlowState& st);
  void CheckWindowSpec(const ast::WindowSpec& w, const FlowState& st, const diag::SourceRange& at);
  void CheckDuration(const ast::DurationRef& d, const char* what);
  void CheckZone(const ast::WindowSpec& w);
  // A stream referenced by name from a pipeline; null (after reporting) when unusable.
  const StreamInfo* UseStream(const ast::Ident& name, const ast::StreamDecl* self);

  // connectors.cpp
  types::Type CheckSource(ast::Source& s, bool* event_time);
  void CheckSink(ast::IntoOp& into, const types::Type& record);
  // `on late into ...` of a window: an event-time window's sink for its input records.
  void CheckLateSink(ast::WindowOp& window, const FlowState& st);
  void CheckConnectorArgs(ast::ConnectorCall& c, bool source);
  // check_metadata.cpp: a kafka source's or sink's `metadata:` against its records' type.
  void CheckMetadata(const ast::ConnectorCall& c, const types::Type& record, bool sink);
  // `format protobuf`: a registry or a readable .proto file with a message (check_protobuf.cpp).
  void CheckProtobufArgs(const ast::FormatClause& format, const ast::ConnectorCall& c);
  // `format protobuf`: the record's fields have Protobuf types (check_protobuf.cpp).
  void CheckProtobuf(const ast::FormatClause& format, const ast::ConnectorCall& c,
                     const types::Type& record, bool sink);
  void CheckFormat(const std::optional<ast::FormatClause>& f, const ast::ConnectorCall& c,
                   bool source);

  // expr_checker.cpp
  types::Type CheckExpr(ast::Expr& e, const ExprContext& cx);
  types::Type CheckName(ast::NameExpr& e, const ExprContext& cx);
  types::Type CheckField(ast::FieldExpr& e, const ExprContext& cx);
  types::Type CheckBinary(ast::BinaryExpr& e, const ExprContext& cx);
  types::Type CheckCall(ast::CallExpr& e, const ExprContext& cx);
  types::Type CheckCast(ast::CastExpr& e, const ExprContext& cx);
  types::Type CheckCase(ast::CaseExpr& e, const ExprContext& cx);
  // Reports condition-not-bool unless `t` is bool, bool? or Error.
  void RequireBool(const types::Type& t, const diag::SourceRange& at, const char* what);

  const diag::SourceManager& sm_;
  diag::DiagnosticEngine& diags_;
  CheckedProgram& out_;
  // Top-level names in definition order, for "did you mean" and duplicate notes.
  std::map<std::string, diag::SourceRange> top_level_;
  std::map<std::string, size_t> stream_index_;       // position of each stream decl in the program
  size_t current_decl_ = 0;                          // index of the statement being checked
  const ast::StreamDecl* current_stream_ = nullptr;  // the stream being defined, if any
  // Strongly connected component of each stream (by name); streams on a cycle share one with
  // another stream or read themselves. Cycles already reported, by component.
  std::map<std::string, size_t> component_;
  std::set<size_t> cyclic_components_;
  std::set<size_t> reported_cycles_;
  std::set<std::string> referenced_;  // stream names read anywhere, even out of order
  void FindCycles();
};

// "did you mean `x`?" for the closest candidate, or nullopt.
std::optional<std::string> DidYouMean(const std::string& name,
                                      const std::vector<std::string>& candidates);
// Names of a record's fields.
std::vector<std::string> FieldNames(const types::Type& record);

}  // namespace flow::sema
