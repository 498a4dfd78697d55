// `window ... on late into <sink>`: the parser's AST, the checker's types and diagnostics, the
// plan (a sink node reading the window's late records), explain, and the generated C++.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "codegen/codegen.h"
#include "frontend/frontend.h"
#include "plan/explain.h"
#include "plan/passes.h"
#include "plan/plan.h"

namespace flow {
namespace {

const char* kSchema =
    "schema Click { user: string, url: string, bytes: int, ts: timestamp }\n"
    "stream clicks = from stdin() format json as Click event time ts watermark 5s\n";

struct Checked {
  diag::SourceManager sm;
  diag::DiagnosticEngine diags;
  std::unique_ptr<sema::CheckedProgram> program;
  std::string text;

  bool HasError(const std::string& part) const {
    for (const diag::Diagnostic& d : diags.diagnostics()) {
      if (d.message.find(part) != std::string::npos) return true;
    }
    return false;
  }
};

std::unique_ptr<Checked> Check(const std::string& pipeline) {
  auto c = std::make_unique<Checked>();
  c->text = std::string(kSchema) + pipeline + "\n";
  c->program = frontend::CheckText("t.flow", c->text, c->sm, c->diags);
  return c;
}

// The window operator of the last statement.
const ast::WindowOp* WindowOf(const Checked& c) {
  const auto* p = ast::As<ast::PipelineStmt>(c.program->program.decls.back().get());
  if (p == nullptr) return nullptr;
  for (const auto& op : p->pipeline.ops) {
    if (const auto* w = ast::As<ast::WindowOp>(op.get())) return w;
  }
  return nullptr;
}

TEST(LateSinkParse, ClauseBecomesTheWindowsSink) {
  auto c = Check(
      "clicks | key by user | window tumbling 1m lateness 10s on late into file(path: \"late/\") "
      "format json "
      "exactly_once | aggregate count() as n | into stdout");
  ASSERT_FALSE(c->diags.has_errors());
  const ast::WindowOp* w = WindowOf(*c);
  ASSERT_NE(w, nullptr);
  ASSERT_NE(w->late_sink, nullptr);
  EXPECT_EQ(w->late_sink->sink.name.name, "file");
  ASSERT_EQ(w->late_sink->sink.args.size(), 1u);
  EXPECT_EQ(w->late_sink->sink.args[0].name.name, "path");
  ASSERT_TRUE(w->late_sink->format.has_value());
  EXPECT_EQ(w->late_sink->format->name.name, "json");
  EXPECT_EQ(w->late_sink->delivery, ast::Delivery::kExactlyOnce);
  EXPECT_TRUE(w->spec.lateness.has_value());
  // The clause's range starts at `on`.
  EXPECT_EQ(c->text.substr(w->late_sink->range.begin, 7), "on late");
  // Sema: late records are the window's input records.
  EXPECT_EQ(w->late_sink->output.ToString(), "Click");
}

TEST(LateSinkParse, WithoutTheClauseThereIsNoSink) {
  auto c = Check("clicks | key by user | window session 1m | aggregate count() as n | into stdout");
  ASSERT_FALSE(c->diags.has_errors());
  ASSERT_NE(WindowOf(*c), nullptr);
  EXPECT_EQ(WindowOf(*c)->late_sink, nullptr);
}

TEST(LateSinkParse, LateStaysUsableAsAName) {
  auto c = Check(
      "clicks | select user as late | key by late | window sliding 1m every 10s on late into "
      "stdout "
      "| aggregate count() as n | into stdout");
  EXPECT_FALSE(c->diags.has_errors());
  ASSERT_NE(WindowOf(*c), nullptr);
  ASSERT_NE(WindowOf(*c)->late_sink, nullptr);
  EXPECT_EQ(WindowOf(*c)->late_sink->output.ToString(), "{late: string}");
}

TEST(LateSinkParse, JoinWindowsHaveNoClause) {
  auto c = Check(
      "stream other = clicks | where bytes > 1\n"
      "clicks | join other on clicks.user == other.user window tumbling 1m on late into stdout "
      "| into stdout");
  EXPECT_TRUE(c->diags.has_errors());
}

TEST(LateSinkCheck, ProcessingTimeWindowsAreRejected) {
  auto c = Check(
      "clicks | key by user | window tumbling 1m processing time on late into stdout "
      "| aggregate count() as n | into stdout");
  EXPECT_TRUE(c->HasError("a processing-time window has no late records to route"));
}

TEST(LateSinkCheck, SinkErrorsAreTheSinksErrors) {
  auto unknown = Check(
      "clicks | key by user | window tumbling 1m on late into stdin | aggregate count() as n "
      "| into stdout");
  EXPECT_TRUE(unknown->HasError("`stdin` is a source; it cannot be written with `into`"));
  auto once = Check(
      "clicks | key by user | window tumbling 1m on late into stdout exactly_once "
      "| aggregate count() as n | into stdout");
  EXPECT_TRUE(once->HasError("`stdout` cannot write exactly once"));
  auto raw = Check(
      "clicks | key by user | window tumbling 1m on late into stdout format raw "
      "| aggregate count() as n | into stdout");
  EXPECT_TRUE(raw->HasError("late records of this window are Click"));
  // One string field: raw can write it.
  auto ok = Check(
      "clicks | select url | key by url | window tumbling 1m on late into stdout format raw "
      "| aggregate count() as n | into stdout");
  EXPECT_FALSE(ok->diags.has_errors());
}

struct Planned {
  std::unique_ptr<Checked> checked;
  std::unique_ptr<plan::Plan> plan;
  std::string error;
};

Planned PlanOf(const std::string& pipeline) {
  Planned p;
  p.checked = Check(pipeline);
  EXPECT_FALSE(p.checked->diags.has_errors());
  if (p.checked->diags.has_errors()) return p;
  diag::DiagnosticEngine diags;
  p.plan = plan::Lower(*p.checked->program, diags);
  if (!p.plan) p.error = diags.diagnostics().back().message;
  if (p.plan) {
    EXPECT_EQ(plan::RunPasses(*p.plan, {}), "");
  }
  return p;
}

const plan::SinkNode* LateSink(const plan::Plan& plan) {
  for (const plan::Node* n : plan.Ordered()) {
    if (const auto* s = plan::As<plan::SinkNode>(n); s && s->late) return s;
  }
  return nullptr;
}

TEST(LateSinkPlan, SideOutputEdgeFromTheWindowToAnOrdinarySink) {
  Planned p = PlanOf(
      "clicks | key by user | window tumbling 1m lateness 5s on late into file(path: \"late\") "
      "format json exactly_once | aggregate sum(bytes) as b | into stdout");
  ASSERT_NE(p.plan, nullptr) << p.error;
  const plan::SinkNode* late = LateSink(*p.plan);
  ASSERT_NE(late, nullptr);
  const plan::Node* window = p.plan->Get(late->inputs[0]);
  ASSERT_NE(window, nullptr);
  EXPECT_EQ(window->kind, plan::NodeKind::kWindowAggregate);
  EXPECT_EQ(late->output, p.plan->Get(window->inputs[0])->output);
  EXPECT_EQ(late->delivery, ast::Delivery::kExactlyOnce);
  ASSERT_NE(late->key_by, nullptr);  // a Kafka late sink would key by the window's key
  EXPECT_EQ(late->key_by->key_names, std::vector<std::string>{"user"});
  EXPECT_EQ(plan::Verify(*p.plan), "");
  // The aggregate reads only `bytes`, but the late sink writes whole records: every field is
  // decoded.
  const auto* source = plan::As<plan::SourceNode>(p.plan->Ordered().front());
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(source->decoded, (std::set<std::string>{"bytes", "ts", "url", "user"}));
}

TEST(LateSinkPlan, VerifyRejectsALateSinkOffAWindow) {
  Planned p = PlanOf(
      "clicks | key by user | window tumbling 1m on late into stdout | aggregate count() as n "
      "| into stdout");
  ASSERT_NE(p.plan, nullptr);
  auto* late = const_cast<plan::SinkNode*>(LateSink(*p.plan));
  ASSERT_NE(late, nullptr);
  late->inputs[0] = p.plan->Get(late->inputs[0])->inputs[0];  // the key by, not the window
  EXPECT_NE(plan::Verify(*p.plan).find("no window"), std::string::npos) << plan::Verify(*p.plan);
}

TEST(LateSinkPlan, ExplainShowsTheLateSink) {
  Planned p = PlanOf(
      "clicks | key by user | window session 1m on late into file(path: \"late\") format csv "
      "| aggregate count() as n | into stdout");
  ASSERT_NE(p.plan, nullptr);
  const plan::SinkNode* late = LateSink(*p.plan);
  ASSERT_NE(late, nullptr);
  std::string text = plan::ExplainText(*p.plan, p.checked->text);
  EXPECT_NE(text.find("sink file(path: \"late\") format csv"), std::string::npos) << text;
  EXPECT_NE(text.find("input: #" + std::to_string(late->inputs[0]) + " late records (side output)"),
            std::string::npos)
      << text;
  std::string dot = plan::ExplainDot(*p.plan, p.checked->text);
  std::string edge = "n" + std::to_string(late->inputs[0]) + " -> n" + std::to_string(late->id) +
                     " [label=\"late records (side output)\"]";
  EXPECT_NE(dot.find(edge), std::string::npos) << dot;
  EXPECT_EQ(late->Describe(), "late records to file format csv");
}

TEST(LateSinkPlan, AWindowOverAJoinPairIsUnsupported) {
  Planned p = PlanOf(
      "stream other = clicks | where bytes > 1\n"
      "clicks | join other on clicks.user == other.user within 1m | key by clicks.user "
      "| window tumbling 1m on late into stdout | aggregate count() as n | into stdout");
  EXPECT_EQ(p.plan, nullptr);
  EXPECT_NE(p.error.find("late records of a window that reads a join"), std::string::npos)
      << p.error;
}

TEST(LateSinkPlan, AnUnreadStreamWithALateSinkStillRuns) {
  Planned p = PlanOf(
      "stream unread = clicks | key by user | window sliding 1m every 10s on late into stdout "
      "| aggregate count() as n\n"
      "clicks | into blackhole");
  ASSERT_NE(p.plan, nullptr) << p.error;
  const plan::SinkNode* late = LateSink(*p.plan);
  ASSERT_NE(late, nullptr);
  EXPECT_EQ(late->stream, "unread");
  EXPECT_EQ(plan::Verify(*p.plan), "");
  codegen::GenerateOptions options;
  options.flow_file = "t.flow";
  options.cpp_file = "t.cpp";
  diag::DiagnosticEngine diags;
  codegen::GenerateResult r = codegen::Generate(*p.plan, options, diags);
  EXPECT_FALSE(diags.has_errors());
  EXPECT_NE(r.cpp.find("\"unread.late_sink\""), std::string::npos);
}

TEST(LateSinkCodegen, TheWindowSplitsResultsAndLateRecords) {
  Planned p = PlanOf(
      "clicks | window tumbling 1m on late into file(path: \"l\\\"x\") format json "
      "| aggregate count() as n | into stdout");
  ASSERT_NE(p.plan, nullptr);
  const plan::SinkNode* late = LateSink(*p.plan);
  ASSERT_NE(late, nullptr);
  codegen::GenerateOptions options;
  options.flow_file = "t.flow";
  options.cpp_file = "t.cpp";
  diag::DiagnosticEngine diags;
  codegen::GenerateResult r = codegen::Generate(*p.plan, options, diags);
  ASSERT_FALSE(diags.has_errors());
  std::string w = "s" + std::to_string(late->inputs[0]);
  EXPECT_NE(r.cpp.find("::flow::exec::WithLate<"), std::string::npos);
  // A global window runs on one subtask; so do its splits.
  EXPECT_NE(r.cpp.find("auto " + w + "_late = ::flow::exec::LateRecords<"), std::string::npos);
  EXPECT_NE(r.cpp.find(w + "_all, \"sink1.window.late\", 1);"), std::string::npos) << r.cpp;
  EXPECT_NE(r.cpp.find(w + "_late.Sink(\"sink1.late_sink\""), std::string::npos);
  // The script's string is escaped in the generated C++ (octal escapes).
  EXPECT_NE(r.cpp.find("l\\042x"), std::string::npos);
  EXPECT_EQ(r.cpp.find("l\"x"), std::string::npos);
}

}  // namespace
}  // namespace flow
