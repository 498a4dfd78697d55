#include "sema/checker.h"

#include "diag/suggest.h"
#include "sema/checker_impl.h"

namespace flow::sema {

std::optional<std::string> DidYouMean(const std::string& name,
                                      const std::vector<std::string>& candidates) {
  if (auto best = diag::ClosestMatch(name, candidates)) return "did you mean `" + *best + "`?";
  return std::nullopt;
}

std::vector<std::string> FieldNames(const types::Type& record) {
  std::vector<std::string> names;
  if (record.kind() != types::Kind::kRecord) return names;
  for (const types::Field& f : record.fields()) names.push_back(f.name);
  return names;
}

void Checker::Run() {
  CollectDecls();
  for (current_decl_ = 0; current_decl_ < out_.program.decls.size(); ++current_decl_) {
    ast::Decl* d = out_.program.decls[current_decl_].get();
    if (diags_.saturated()) return;
    if (auto* p = ast::As<ast::ParamDecl>(d)) {
      CheckParam(*p);
    } else if (auto* s = ast::As<ast::StreamDecl>(d)) {
      FlowState st = CheckPipeline(s->pipeline, /*is_stream=*/true, s);
      if (!out_.streams.count(s->name.name)) {
        StreamInfo info;
        info.decl = s;
        info.record = st.broken ? types::Type::Error() : st.record;
        info.event_time = st.event_time;
        out_.streams[s->name.name] = info;
      }
    } else if (auto* p = ast::As<ast::PipelineStmt>(d)) {
      CheckPipeline(p->pipeline, /*is_stream=*/false, nullptr);
      out_.sinks.push_back(p);
    }
  }
  ReportUnused();
}

std::unique_ptr<CheckedProgram> Check(ast::Program program, const diag::SourceManager& sm,
                                      diag::DiagnosticEngine& diags) {
  auto out = std::make_unique<CheckedProgram>();
  out->program = std::move(program);
  Checker checker(sm, diags, *out);
  checker.Run();
  return out;
}

}  // namespace flow::sema
