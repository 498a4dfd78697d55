// The state schemas flowc declares for a plan's stateful operators (plan/state_schema.h): their
// runtime names and what their state depends on, which decides what a savepoint carries into a
// changed script.

#include "plan/state_schema.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "frontend/frontend.h"
#include "plan/passes.h"

namespace flow::plan {
namespace {

struct Planned {
  diag::SourceManager sm;
  std::unique_ptr<sema::CheckedProgram> program;
  std::unique_ptr<Plan> plan;
};

std::vector<OperatorState> States(const std::string& text) {
  Planned p;
  diag::DiagnosticEngine diags;
  p.program = frontend::CheckText("t.flow", text, p.sm, diags);
  EXPECT_FALSE(diags.has_errors()) << text;
  if (!p.program || diags.has_errors()) return {};
  std::unique_ptr<Plan> plan = Lower(*p.program, diags);
  EXPECT_NE(plan, nullptr) << diags.diagnostics().back().message;
  if (!plan) return {};
  EXPECT_EQ(RunPasses(*plan, {}, nullptr), "");
  return StateOperators(*plan);
}

const std::string kHead = R"(
param topic: string = "orders"
schema Order { id: string, customer: string, total: int, ts: timestamp }
schema Pay { id: string, amount: float, ts: timestamp }
stream orders = from kafka(topic: topic, brokers: "b:9092") format json as Order event time ts watermark 1s
stream pays = from file(path: "pays.jsonl") format json as Pay event time ts watermark 1s
)";

TEST(StateSchema, SourcesJoinsAndWindowsWithWhatTheirStateDependsOn) {
  auto ops = States(kHead + R"(
stream paid = orders | where total > 0 | join pays on orders.id == pays.id within 30s
  | select orders.customer, pays.amount
stream per = paid | key by customer | window tumbling 1m zone "Europe/Berlin"
  | aggregate count() as n, sum(amount) as spent, max(amount * 2.0) as top
per | into stdout format json
)");
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(ops[0].name, "orders.source");
  EXPECT_EQ(ops[0].parts, (std::vector<std::string>{"state: source kafka", "topic: topic"}));
  EXPECT_EQ(ops[1].name, "pays.source");
  EXPECT_EQ(ops[1].parts, (std::vector<std::string>{"state: source file", "path: \"pays.jsonl\""}));
  EXPECT_EQ(ops[2].name, "paid.join");
  EXPECT_EQ(ops[2].parts, (std::vector<std::string>{
                              "state: interval join", "within: 30000ms", "key: string",
                              "left: {id: string, customer: string, total: int, ts: timestamp}",
                              "right: {id: string, amount: float, ts: timestamp}"}));
  EXPECT_EQ(ops[3].name, "per.window");
  // An aggregate's state depends on its function and argument types, not on the expression.
  EXPECT_EQ(ops[3].parts,
            (std::vector<std::string>{
                "state: window aggregate", "key: string",
                "window: tumbling 60000ms zone Europe/Berlin", "aggregate n: count() -> int",
                "aggregate spent: sum(float) -> float", "aggregate top: max(float) -> float"}));
}

TEST(StateSchema, TheSecondOperatorOfAKindInAStreamIsNumbered) {
  auto ops = States(kHead + R"(
stream s = orders | key by customer | window tumbling 1m | aggregate count() as n
  | key by n | window tumbling 1h | aggregate count() as m
s | into stdout format json
orders | key by customer | aggregate sum(total) as t | into stdout format json
)");
  std::vector<std::string> names;
  for (const OperatorState& op : ops) names.push_back(op.name);
  // (`pays` is read by nothing: not in the plan.)
  EXPECT_EQ(names, (std::vector<std::string>{"orders.source", "s.window", "s.window2",
                                             "sink2.aggregate"}));
}

TEST(StateSchema, AggregateTagsAreFnv1aOfTheName) {
  // Fixed by the checkpoint format: a tag that changed would lose every stored aggregate.
  EXPECT_EQ(AggregateTag(""), 2166136261u);
  EXPECT_EQ(AggregateTag("a"), 0xe40c292cu);
  EXPECT_NE(AggregateTag("total"), AggregateTag("totals"));
}

}  // namespace
}  // namespace flow::plan
