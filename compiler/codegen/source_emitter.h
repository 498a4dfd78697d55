#pragma once
// The io parts of the job file: a decoder and a job.Source call per source node
// (source_emitter.cpp), an encoder and a Sink call per sink node (sink_emitter.cpp). The job
// emitter hands them an IoEmitContext: where to write functions, the record types, and the lines
// of Build(). Unsupported constructs set the context's error (the first one wins).
//
// One factory call per connector kind: sources use ::flow::exec::Make*Source (exec/io.h) and the
// generator factories; sinks use ::flow::exec::Make*Sink with the node's delivery guarantee.

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/codegen.h"
#include "codegen/expr_emitter.h"
#include "codegen/records.h"
#include "codegen/writer.h"
#include "plan/plan.h"

namespace flow::codegen {

struct IoEmitContext {
  Writer& w;
  const RecordTypes& records;
  const GenerateOptions& options;
  std::vector<std::string>& build;  // statements of Build(Job& job), in order
  std::string& error;
  diag::SourceRange& error_range;

  void Build(const std::string& line) { build.push_back(line); }
  void Unsupported(const std::string& what, const diag::SourceRange& where) {
    if (!error.empty()) return;
    error = what;
    error_range = where;
  }
  ExprEmitter Exprs(const std::string& record) const;
  void Take(const ExprEmitter& e) {
    if (!e.error().empty()) Unsupported(e.error(), e.error_range());
  }
  // "// stream: what (file.flow line N)" before a node's functions.
  void Header(const plan::Node& n, const std::string& what);
  // The C++ value of the string argument `name` in `args` (a literal or param), or `absent`.
  std::string StringArg(const std::vector<ast::NamedArg>& args, const std::string& name,
                        const std::string& absent = "");
  // `format protobuf(proto: "file.proto")`: emits the file's text as a constant `name` and
  // returns true; false without `proto` (a registry), or after Unsupported() when it cannot be
  // read.
  bool ProtoFile(const ast::FormatClause& f, const std::string& name,
                 const diag::SourceRange& where);
  // The connector arguments as a ConnectorOptions initializer, every value as text.
  std::string ConnectorOptions(const ast::ConnectorCall& c, bool sink);
  std::string Name(const plan::Node& n, const char* what) const;
};

// The CSV codec (formats/csv_decoder.h) of a scalar type, or "" (lists, records).
std::string CsvCodec(const types::Type& t);

void EmitSource(IoEmitContext cx, const plan::SourceNode& n);

}  // namespace flow::codegen
