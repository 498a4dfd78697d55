#pragma once
// The stateful parts of the job file: aggregates (aggregate_emitter.cpp: tumbling, sliding and
// session windows in event or processing time, running aggregates) and joins (join_emitter.cpp:
// window and interval joins, and the chain step that flattens a join pair). The job emitter hands
// them an OpEmitContext: where to write functions, the record types, the lines of Build().
// Unsupported constructs set the context's error (the first one wins).

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "codegen/codegen.h"
#include "codegen/expr_emitter.h"
#include "codegen/records.h"
#include "codegen/writer.h"
#include "plan/plan.h"

namespace flow::codegen {

struct OpEmitContext {
  Writer& w;
  const RecordTypes& records;
  const GenerateOptions& options;
  std::vector<std::string>& build;  // statements of Build(Job& job), in order
  std::string& error;
  diag::SourceRange& error_range;
  std::set<std::string>& serializers;  // record structs given a state Serializer already

  void Build(const std::string& line) { build.push_back(line); }
  void Unsupported(const std::string& what, const diag::SourceRange& where) {
    if (!error.empty()) return;
    error = what;
    error_range = where;
  }
  // Expressions over `record`, of type `input`: when that is a join pair, names of the join's
  // sides read `record.left` / `record.right`.
  ExprEmitter Exprs(const std::string& record, const types::Type& input) const;
  void Take(const ExprEmitter& e) {
    if (!e.error().empty()) Unsupported(e.error(), e.error_range());
  }
  std::string Rec(const types::Type& t) const { return records.Cpp(t); }
  std::string FlowFile() const;  // the script's file name, for run-time error locations
  std::string Name(const plan::Node& n, const char* what) const;
  // "// stream: what (file.flow line N)" before a node's functions.
  void Header(const plan::Node& n, const std::string& what);
};

// Serializer<rec::X> for a record type (and the records inside it), once per struct: what keyed
// state snapshots and a repartition topic carry. Other types: nothing (they have one already).
void EmitSerializer(OpEmitContext& cx, const types::Type& type);
// `key by ... | window ... | aggregate ...` and `[key by ...] | aggregate ...`.
void EmitWindowAggregate(OpEmitContext& cx, const plan::WindowAggregateNode& n,
                         const plan::Plan& plan);
void EmitRunningAggregate(OpEmitContext& cx, const plan::RunningAggregateNode& n,
                          const plan::Plan& plan);
// A join node: key functions, the pair builder, state serializers and the Connect(...) call.
void EmitJoin(OpEmitContext& cx, const plan::JoinNode& n);
// A prune node: its key function and the RunningExtremeFilter in front of its join's side.
void EmitPrune(OpEmitContext& cx, const plan::PruneNode& n);
// Inside a chain function: declares `next` (the join's merged record) from the pair `var`.
void EmitFlattenStep(OpEmitContext& cx, const plan::ChainStep& step, const std::string& var,
                     const std::string& next, const std::string& indent);

}  // namespace flow::codegen
