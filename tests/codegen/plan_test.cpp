// The plan: lowering, the chain and project passes, and verification catching broken plans.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "frontend/frontend.h"
#include "plan/passes.h"
#include "plan/plan.h"

namespace flow::plan {
namespace {

constexpr const char* kScript =
    R"(schema Click { user: string, url: string, bytes: int, tags: list<string>, ref: string?, ts: timestamp }
stream per_minute = from file(path: "x") format json as Click event time ts watermark 2s
  | where url != ""
  | select user, bytes, ts
  | where bytes > 0
  | key by user
  | window tumbling 1m
  | aggregate count() as clicks, sum(bytes) as total
per_minute | into stdout format json
)";

struct Lowered {
  diag::SourceManager sm;
  std::unique_ptr<sema::CheckedProgram> program;
  std::unique_ptr<Plan> plan;
};

std::unique_ptr<Lowered> LowerText(const std::string& text) {
  auto l = std::make_unique<Lowered>();
  diag::DiagnosticEngine diags;
  l->program = frontend::CheckText("t.flow", text, l->sm, diags);
  EXPECT_FALSE(diags.has_errors());
  if (!l->program) return l;
  l->plan = Lower(*l->program, diags);
  EXPECT_FALSE(diags.has_errors()) << diags.diagnostics().back().message;
  return l;
}

int Count(const Plan& plan, NodeKind kind) {
  int n = 0;
  for (const Node* node : plan.Ordered()) n += node->kind == kind ? 1 : 0;
  return n;
}

TEST(PlanTest, ChainPassFusesConsecutiveStatelessSteps) {
  auto l = LowerText(kScript);
  ASSERT_TRUE(l->plan);
  EXPECT_EQ(Count(*l->plan, NodeKind::kChain), 3);
  ASSERT_EQ(RunPasses(*l->plan, {"project"}), "");
  EXPECT_EQ(Count(*l->plan, NodeKind::kChain), 1);
  for (const Node* n : l->plan->Ordered()) {
    if (const auto* c = As<ChainNode>(n)) {
      EXPECT_EQ(c->steps.size(), 3u);
    }
  }
  auto off = LowerText(kScript);
  ASSERT_EQ(RunPasses(*off->plan, {"chain", "project"}), "");
  EXPECT_EQ(Count(*off->plan, NodeKind::kChain), 3);
}

TEST(PlanTest, ProjectPassKeepsOnlyFieldsTheJobReads) {
  auto l = LowerText(kScript);
  ASSERT_EQ(RunPasses(*l->plan, {}), "");
  const SourceNode* src = nullptr;
  for (const Node* n : l->plan->Ordered()) src = src ? src : As<SourceNode>(n);
  ASSERT_NE(src, nullptr);
  // url (where), user/bytes/ts (select), ts (event time); not tags or ref.
  EXPECT_EQ(src->decoded, (std::set<std::string>{"bytes", "ts", "url", "user"}));
}

TEST(PlanTest, RecordsReachingASinkUnchangedKeepEveryField) {
  auto l = LowerText(R"(schema A { x: int, y: string }
stream s = from file(path: "x") format json as A | where x > 1
s | into stdout format json
)");
  ASSERT_EQ(RunPasses(*l->plan, {}), "");
  for (const Node* n : l->plan->Ordered()) {
    if (const auto* s = As<SourceNode>(n)) {
      EXPECT_EQ(s->decoded, (std::set<std::string>{"x", "y"}));
    }
  }
}

TEST(PlanTest, VerifyReportsBrokenInvariants) {
  auto l = LowerText(kScript);
  ASSERT_EQ(Verify(*l->plan), "");
  // A keyed aggregate whose input is not a key-by.
  for (auto& n : l->plan->nodes) {
    if (auto* w = As<WindowAggregateNode>(n.get())) w->inputs = {0};
  }
  std::string error = Verify(*l->plan);
  EXPECT_NE(error.find("key-by"), std::string::npos) << error;

  auto t = LowerText(kScript);
  for (auto& n : t->plan->nodes) {
    if (auto* c = As<ChainNode>(n.get()))
      c->output = types::Type::Record("", {types::Field{"z", types::Type::Int()}});
  }
  EXPECT_NE(Verify(*t->plan), "");
}

TEST(PlanTest, UnsupportedConstructsAreReportedWithTheirRange) {
  diag::SourceManager sm;
  diag::DiagnosticEngine diags;
  auto program = frontend::CheckText("t.flow", R"(schema A { k: string, ts: timestamp }
stream s = from file(path: "x") format json as A event time ts watermark 1s
stream t = from file(path: "y") format json as A event time ts watermark 1s
s | join t on s.k == t.k window session 5s
  | into stdout format json
)",
                                     sm, diags);
  ASSERT_TRUE(program);
  ASSERT_FALSE(diags.has_errors());
  std::unique_ptr<Plan> plan = Lower(*program, diags);
  EXPECT_EQ(plan, nullptr);
  ASSERT_EQ(diags.diagnostics().size(), 1u);
  const diag::Diagnostic& d = diags.diagnostics()[0];
  EXPECT_EQ(d.kind, diag::Kind::kUnsupported);
  EXPECT_NE(d.message.find("session"), std::string::npos) << d.message;
  EXPECT_EQ(d.range.line, 4u);
}

}  // namespace
}  // namespace flow::plan
