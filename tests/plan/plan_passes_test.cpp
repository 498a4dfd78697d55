// The fold-constants, push-filters and prune-join passes on lowered plans: what they fold, move or
// add, and what they must leave alone (run-time errors, params, unsafe expressions, barriers).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>

#include "frontend/frontend.h"
#include "plan/explain.h"
#include "plan/passes.h"
#include "plan/plan.h"

namespace flow::plan {
namespace {

const std::set<std::string> kOnlyFold = {"push-filters", "chain", "project"};
const std::set<std::string> kOnlyPush = {"fold-constants", "chain", "project"};

struct Lowered {
  diag::SourceManager sm;
  std::unique_ptr<sema::CheckedProgram> program;
  std::unique_ptr<Plan> plan;
  diag::DiagnosticEngine warnings;  // the passes' warnings
};

std::unique_ptr<Lowered> Passes(const std::string& text, const std::set<std::string>& disabled) {
  auto l = std::make_unique<Lowered>();
  diag::DiagnosticEngine diags;
  l->program = frontend::CheckText("t.flow", text, l->sm, diags);
  EXPECT_FALSE(diags.has_errors()) << text;
  if (!l->program || diags.has_errors()) return l;
  l->plan = Lower(*l->program, diags);
  EXPECT_NE(l->plan, nullptr) << diags.diagnostics().back().message;
  if (l->plan) {
    EXPECT_EQ(RunPasses(*l->plan, disabled, &l->warnings), "");
  }
  return l;
}

// The steps of every chain node, in plan order, as "kind" strings: "where", "select", "explode".
std::vector<const ast::Op*> Steps(const Plan& plan) {
  std::vector<const ast::Op*> out;
  for (const Node* n : plan.Ordered()) {
    if (const auto* c = As<ChainNode>(n)) {
      for (const ChainStep& s : c->steps) out.push_back(s.op);
    }
  }
  return out;
}

// The plan's node kinds from the source on, following the only path (single-pipeline scripts).
std::vector<std::string> Shape(const Plan& plan) {
  std::vector<std::string> out;
  for (const Node* n : plan.Ordered()) {
    if (const auto* c = As<ChainNode>(n)) {
      for (const ChainStep& s : c->steps) {
        out.push_back(s.op->kind == ast::OpKind::kWhere    ? "where"
                      : s.op->kind == ast::OpKind::kSelect ? "select"
                                                           : "explode");
      }
    } else {
      out.push_back(KindName(n->kind));
    }
  }
  return out;
}

const ast::Expr* SelectItem(const Plan& plan, const std::string& name) {
  for (const ast::Op* op : Steps(plan)) {
    if (const auto* s = ast::As<ast::SelectOp>(op)) {
      for (const ast::SelectItem& item : s->items) {
        if (!item.star && item.item.output_name == name) return item.item.expr.get();
      }
    }
  }
  return nullptr;
}

const ast::LiteralExpr* Lit(const ast::Expr* e) {
  return ast::As<ast::LiteralExpr>(e);
}

std::string WhereText(const Plan& plan, size_t index) {
  size_t i = 0;
  for (const ast::Op* op : Steps(plan)) {
    if (const auto* w = ast::As<ast::WhereOp>(op)) {
      if (i++ == index) return ExprText(*w->condition);
    }
  }
  return "<no where #" + std::to_string(index) + ">";
}

constexpr const char* kSchema = R"(param p: int = 3
schema R { a: int, b: int, f: float, s: string, n: int?, tags: list<string>, ts: timestamp }
stream r = from file(path: "in.jsonl") format json as R
)";

TEST(FoldConstants, ArithmeticStringsAndCastsWithRuntimeSemantics) {
  auto l =
      Passes(std::string(kSchema) +
                 R"(r | select a, 1 + 2 * 3 as k, upper("ab") as u, 9223372036854775807 + 1 as wrap,
    -9223372036854775807 - 1 as lowest, 7 % -1 as m, 1 / 2.0 as half, 0.0 / 0.0 as nan, cast("12" as int) + 1 as parsed,
    cast("x1" as int) as bad, concat("a", "b", "c") as abc, length("héllo") as len, 2.5 > 2 as cmp,
    case when 1 > 2 then "x" when 2 > 1 then "y" else "z" end as pick, 7 - 10 as neg
  | into stdout format json
)",
             kOnlyFold);
  ASSERT_TRUE(l->plan);
  const Plan& plan = *l->plan;
  ASSERT_NE(Lit(SelectItem(plan, "k")), nullptr);
  EXPECT_EQ(Lit(SelectItem(plan, "k"))->int_value, 7);
  ASSERT_NE(Lit(SelectItem(plan, "u")), nullptr);
  EXPECT_EQ(Lit(SelectItem(plan, "u"))->string_value, "AB");
  ASSERT_NE(Lit(SelectItem(plan, "wrap")), nullptr);  // int64 arithmetic wraps, as at run time
  EXPECT_EQ(Lit(SelectItem(plan, "wrap"))->int_value, INT64_MIN);
  ASSERT_NE(Lit(SelectItem(plan, "lowest")), nullptr);
  EXPECT_EQ(Lit(SelectItem(plan, "lowest"))->int_value, INT64_MIN);
  ASSERT_NE(Lit(SelectItem(plan, "m")), nullptr);
  EXPECT_EQ(Lit(SelectItem(plan, "m"))->int_value, 0);
  ASSERT_NE(Lit(SelectItem(plan, "half")), nullptr);
  EXPECT_EQ(Lit(SelectItem(plan, "half"))->float_value, 0.5);
  ASSERT_NE(Lit(SelectItem(plan, "nan")), nullptr);
  EXPECT_TRUE(std::isnan(Lit(SelectItem(plan, "nan"))->float_value));
  ASSERT_NE(Lit(SelectItem(plan, "parsed")), nullptr);
  EXPECT_EQ(Lit(SelectItem(plan, "parsed"))->int_value, 13);
  ASSERT_NE(Lit(SelectItem(plan, "bad")), nullptr);  // an unparsable string casts to null
  EXPECT_EQ(Lit(SelectItem(plan, "bad"))->literal, ast::LiteralKind::kNull);
  ASSERT_NE(Lit(SelectItem(plan, "abc")), nullptr);
  EXPECT_EQ(Lit(SelectItem(plan, "abc"))->string_value, "abc");
  ASSERT_NE(Lit(SelectItem(plan, "len")), nullptr);  // code points, not bytes
  EXPECT_EQ(Lit(SelectItem(plan, "len"))->int_value, 5);
  ASSERT_NE(Lit(SelectItem(plan, "cmp")), nullptr);
  EXPECT_TRUE(Lit(SelectItem(plan, "cmp"))->bool_value);
  ASSERT_NE(Lit(SelectItem(plan, "pick")), nullptr);
  EXPECT_EQ(Lit(SelectItem(plan, "pick"))->string_value, "y");
  ASSERT_NE(Lit(SelectItem(plan, "neg")), nullptr);
  EXPECT_EQ(Lit(SelectItem(plan, "neg"))->int_value, -3);
  // The field itself is not a constant.
  EXPECT_EQ(Lit(SelectItem(plan, "a")), nullptr);
}

TEST(FoldConstants, DivisionByZeroIsLeftForRunTime) {
  auto l =
      Passes(std::string(kSchema) + R"(r | select a, 7 / 0 as z, 7 % 0 as zm, 1 + 7 / 0 as nested
  | into stdout format json
)",
             kOnlyFold);
  ASSERT_TRUE(l->plan);
  for (const char* name : {"z", "zm", "nested"}) {
    const ast::Expr* e = SelectItem(*l->plan, name);
    ASSERT_NE(e, nullptr) << name;
    EXPECT_EQ(e->kind, ast::ExprKind::kBinary) << name;
  }
}

TEST(FoldConstants, ParamsAreNotConstantsButTheirConstantNeighboursAre) {
  auto l =
      Passes(std::string(kSchema) + R"(r | select a + p * (2 + 3) as x | into stdout format json
)",
             kOnlyFold);
  ASSERT_TRUE(l->plan);
  const ast::Expr* x = SelectItem(*l->plan, "x");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(ExprText(*x), "a + (p * 5)");
}

TEST(FoldConstants, WhereTrueIsDroppedAndWhereFalseWarns) {
  auto l = Passes(std::string(kSchema) + R"(r | where 1 < 2 | select a, b | into stdout format json
r | where "a" > "b" | into stdout format json
)",
                  kOnlyFold);
  ASSERT_TRUE(l->plan);
  EXPECT_EQ(Shape(*l->plan),
            (std::vector<std::string>{"source", "select", "sink", "where", "sink"}));
  ASSERT_EQ(l->warnings.diagnostics().size(), 1u);
  EXPECT_EQ(l->warnings.diagnostics()[0].severity, diag::Severity::kWarning);
  EXPECT_EQ(l->warnings.diagnostics()[0].range.line, 5u);
  EXPECT_NE(l->warnings.diagnostics()[0].message.find("always false"), std::string::npos);
  EXPECT_EQ(WhereText(*l->plan, 0), "false");
}

TEST(FoldConstants, AndOrFoldOnlyWhenTheOtherSideCannotFail) {
  auto l = Passes(std::string(kSchema) + R"(r | where false and a / b > 1 | into stdout format json
r | where false and a > 1 | into stdout format json
r | where true and a > 1 | into stdout format json
r | where b > 0 or true | into stdout format json
r | where n > 1 or 1 > 2 | into stdout format json
r | where (1 > 2 or n is null) and (3 > 2 or a % b == 0) | into stdout format json
)",
                  kOnlyFold);
  ASSERT_TRUE(l->plan);
  EXPECT_EQ(WhereText(*l->plan, 0),
            "false and ((a / b) > 1)");  // the division may fail at run time
  EXPECT_EQ(WhereText(*l->plan, 1), "false");
  EXPECT_EQ(WhereText(*l->plan, 2), "a > 1");
  // `b > 0 or true` is true: the step is gone, so the fourth where is `n > 1`.
  EXPECT_EQ(WhereText(*l->plan, 3), "n > 1");
  EXPECT_EQ(WhereText(*l->plan, 4), "(n is null) and (true or ((a % b) == 0))");
  EXPECT_EQ(l->warnings.diagnostics().size(), 1u);
}

TEST(FoldConstants, OffByName) {
  auto l = Passes(std::string(kSchema) + R"(r | select 1 + 2 as k | into stdout format json
)",
                  {"fold-constants", "push-filters", "chain", "project"});
  ASSERT_TRUE(l->plan);
  EXPECT_EQ(SelectItem(*l->plan, "k")->kind, ast::ExprKind::kBinary);
}

TEST(PushFilters, ThroughSelectRewritingFieldReferences) {
  auto l =
      Passes(std::string(kSchema) +
                 R"(r | select a, b * 2 as c, s | where c > 4 and s != "x" | into stdout format json
)",
             kOnlyPush);
  ASSERT_TRUE(l->plan);
  EXPECT_EQ(Shape(*l->plan), (std::vector<std::string>{"source", "where", "select", "sink"}));
  EXPECT_EQ(WhereText(*l->plan, 0), "((b * 2) > 4) and (s != \"x\")");
  // explain shows the rewritten condition, not the script's text.
  std::string text = ExplainText(*l->plan, l->sm.text(0));
  EXPECT_NE(text.find("where ((b * 2) > 4) and (s != \"x\") (rewritten by passes)"),
            std::string::npos)
      << text;
  // The whole pipeline then fuses into one chain right after the source.
  auto all =
      Passes(std::string(kSchema) +
                 R"(r | select a, b * 2 as c, s | where c > 4 and s != "x" | into stdout format json
)",
             {});
  EXPECT_EQ(Shape(*all->plan), (std::vector<std::string>{"source", "where", "select", "sink"}));
  int chains = 0;
  for (const Node* n : all->plan->Ordered()) chains += n->kind == NodeKind::kChain ? 1 : 0;
  EXPECT_EQ(chains, 1);
}

TEST(PushFilters, ThroughSelectStarAndExplodeWhenTheExplodedFieldIsNotRead) {
  auto l = Passes(
      std::string(kSchema) +
          R"(r | select *, a + 1 as a1 | explode tags as t | where a1 > 2 and b < 5 | into stdout format json
r | explode tags as t | where t != "x" | into stdout format json
)",
      kOnlyPush);
  ASSERT_TRUE(l->plan);
  EXPECT_EQ(Shape(*l->plan), (std::vector<std::string>{"source", "where", "select", "explode",
                                                       "sink", "explode", "where", "sink"}));
  EXPECT_EQ(WhereText(*l->plan, 0), "((a + 1) > 2) and (b < 5)");
  EXPECT_EQ(WhereText(*l->plan, 1), "t != \"x\"");
}

TEST(PushFilters, BeforeKeyByAndIntoEveryUnionInput) {
  auto l = Passes(std::string(kSchema) + R"(stream q = from file(path: "q.jsonl") format json as R
r | union q | where a > 1 | into stdout format json
r | key by s | where b > 2 | aggregate count() as c | into stdout format json
)",
                  kOnlyPush);
  ASSERT_TRUE(l->plan);
  std::vector<std::string> shape = Shape(*l->plan);
  // Two sources, a filter on each union input, the union, the sink; the key-by pipeline's filter
  // runs before the key by.
  auto u = std::find(shape.begin(), shape.end(), "union");
  ASSERT_TRUE(u != shape.end() && u - shape.begin() >= 2) << ::testing::PrintToString(shape);
  EXPECT_EQ(*(u - 1), "where");
  EXPECT_EQ(*(u - 2), "where");
  EXPECT_EQ(std::count(shape.begin(), shape.end(), "where"), 3) << ::testing::PrintToString(shape);
  bool where_before_key_by = false;
  for (size_t i = 0; i + 1 < shape.size(); ++i)
    where_before_key_by = where_before_key_by || (shape[i] == "where" && shape[i + 1] == "key-by");
  EXPECT_TRUE(where_before_key_by) << ::testing::PrintToString(shape);
}

// A union input with the same fields under another record name (a `select` unioned with a
// schema's stream) is converted after it by code generation, so the filter stays after the union
// (a copy on that input would be typed for the other record); the plan verifies.
TEST(PushFilters, NotIntoAUnionWhoseInputsAreOtherRecordTypes) {
  auto l = Passes(R"(schema E { x: int, y: string }
stream e = from file(path: "e.jsonl") format json as E
stream f = from file(path: "f.jsonl") format json as E | select x + 1 as x, y
e | union f | where x > 1 | into stdout format json
)",
                  kOnlyPush);
  ASSERT_TRUE(l->plan);
  EXPECT_EQ(Shape(*l->plan),
            (std::vector<std::string>{"source", "source", "select", "union", "where", "sink"}));
}

TEST(PushFilters, BarriersStayBarriers) {
  auto l = Passes(
      std::string(kSchema) + R"(r | select a / b as q, s | where s != "x" | into stdout format json
r | key by s | aggregate count() as c | where c > 2 | into stdout format json
r | select a * 2 as d | where d > 2 | into stdout format json
r | select a * 2 as d | into stdout format json
)",
      kOnlyPush);
  ASSERT_TRUE(l->plan);
  // 1: the select may fail (division): evaluating it for fewer records would hide the error.
  // 2: an aggregate is a barrier. 3 and 4 read the same source: the filter moves above the
  // select but not past the source, which has two readers.
  std::vector<std::string> shape = Shape(*l->plan);
  EXPECT_EQ(shape, (std::vector<std::string>{"source", "select", "where", "sink", "key-by",
                                             "running-aggregate", "where", "sink", "where",
                                             "select", "sink", "select", "sink"}))
      << ::testing::PrintToString(shape);
}

TEST(PushFilters, NeverPastOrWithAnExternFn) {
  auto l = Passes(std::string(kSchema) + R"(extern fn score(x: int) -> int from "udf/score.h"
r | select a, score(a) as k | where a > 1 | into stdout format json
r | select a, b | where score(b) > 1 | into stdout format json
)",
                  kOnlyPush);
  ASSERT_TRUE(l->plan);
  // A user function may have side effects: it must run for exactly the records it ran for.
  EXPECT_EQ(Shape(*l->plan), (std::vector<std::string>{"source", "select", "where", "sink",
                                                       "select", "where", "sink"}));
}

TEST(FoldConstants, ExternFnCallsAreNeverFoldedOrDropped) {
  auto l = Passes(std::string(kSchema) + R"(extern fn score(x: int) -> int from "udf/score.h"
r | where false and score(1) > 0 | into stdout format json
r | select score(2 + 3) as k | into stdout format json
)",
                  kOnlyFold);
  ASSERT_TRUE(l->plan);
  EXPECT_EQ(WhereText(*l->plan, 0), "false and (score(1) > 0)");
  EXPECT_EQ(ExprText(*SelectItem(*l->plan, "k")), "score(5)");
  EXPECT_TRUE(l->warnings.diagnostics().empty());
}

TEST(PushFilters, OffByNameAndPlanStaysValidWithAllCombinations) {
  const std::string script =
      std::string(kSchema) + R"(stream q = from file(path: "q.jsonl") format json as R
stream u = r | union q | select a, b + 1 as b1, s, tags | where 1 < 2 and b1 > 3
u | explode tags as t | where a > 0 | key by s | aggregate count() as c | into stdout format json
)";
  auto off = Passes(script, kOnlyFold);
  ASSERT_TRUE(off->plan);
  EXPECT_EQ(Shape(*off->plan).back(), "sink");
  for (const auto& disabled :
       std::vector<std::set<std::string>>{{},
                                          {"fold-constants"},
                                          {"push-filters"},
                                          {"chain"},
                                          {"project"},
                                          {"fold-constants", "push-filters"}}) {
    auto l = Passes(script, disabled);  // RunPasses verifies after every pass
    ASSERT_TRUE(l->plan);
  }
}

// ---- prune-join: a prune node where a window join meets its own stream's max or min per window,
// and none where the filter would not be exact. (That built jobs give the same rows with and
// without it: plan_passes_e2e_test.)

const std::string kBids =
    "stream bids = from nexmark(kind: bid, events: 100, rate: 10) event time dateTime "
    "watermark 0s\n";

// `maxima` defined by `aggregate`, then `join` (from bids' side unless `join` says otherwise).
std::string Script(const std::string& maxima, const std::string& join) {
  return kBids + "stream maxima = " + maxima + "\n" + join +
         "\n  | select bids.auction, bids.price\n  | into blackhole()\n";
}

const std::string kMaxima = "bids | window tumbling 10s | aggregate max(price) as top";
const std::string kJoin = "bids | join maxima on bids.price == maxima.top window tumbling 10s";

const PruneNode* OnlyPrune(const Plan& plan) {
  const PruneNode* found = nullptr;
  int count = 0;
  for (const Node* n : plan.Ordered()) {
    if (const auto* p = As<PruneNode>(n)) {
      found = p;
      ++count;
    }
  }
  return count == 1 ? found : nullptr;
}

TEST(PruneJoinTest, AJoinWithItsOwnWindowMaximumGetsAPruneNodeOnThatSide) {
  auto p = Passes(Script(kMaxima, kJoin), {});
  ASSERT_NE(p->plan, nullptr);
  const PruneNode* prune = OnlyPrune(*p->plan);
  ASSERT_NE(prune, nullptr) << p->plan->ToString();
  EXPECT_TRUE(prune->max);
  EXPECT_EQ(prune->side, 0);
  EXPECT_EQ(p->plan->Get(prune->inputs[0])->kind, NodeKind::kSource);
  std::vector<int> readers = p->plan->Consumers(prune->id);
  ASSERT_EQ(readers.size(), 1u);
  const auto* join = As<JoinNode>(p->plan->Get(readers[0]));
  ASSERT_NE(join, nullptr);
  EXPECT_EQ(join->inputs[0], prune->id);
  EXPECT_EQ(p->plan->Get(join->inputs[1])->kind, NodeKind::kWindowAggregate);
  // The aggregate still reads every bid.
  EXPECT_EQ(p->plan->Get(join->inputs[1])->inputs[0], prune->inputs[0]);
  EXPECT_EQ(prune->Describe(), "below the running max of bids.price per window");
}

TEST(PruneJoinTest, AMinimumAndTheOtherSideWork) {
  auto p = Passes(Script("bids | window tumbling 10s | aggregate min(price) as top", kJoin), {});
  ASSERT_NE(p->plan, nullptr);
  const PruneNode* prune = OnlyPrune(*p->plan);
  ASSERT_NE(prune, nullptr) << p->plan->ToString();
  EXPECT_FALSE(prune->max);

  auto q = Passes(
      Script(kMaxima, "maxima | join bids on maxima.top == bids.price window tumbling 10s"), {});
  ASSERT_NE(q->plan, nullptr);
  const PruneNode* right = OnlyPrune(*q->plan);
  ASSERT_NE(right, nullptr) << q->plan->ToString();
  EXPECT_EQ(right->side, 1);
  const auto* join = As<JoinNode>(q->plan->Get(q->plan->Consumers(right->id)[0]));
  ASSERT_NE(join, nullptr);
  EXPECT_EQ(join->inputs[1], right->id);
}

TEST(PruneJoinTest, WhereTheFilterWouldNotBeExactThePlanIsLeftAlone) {
  const std::pair<std::string, std::string> cases[] = {
      // Windows of another size, a sliding window, lateness (a window may emit twice).
      {"bids | window tumbling 5s | aggregate max(price) as top", kJoin},
      {kMaxima, "bids | join maxima on bids.price == maxima.top window sliding 10s every 5s"},
      {"bids | window tumbling 10s lateness 5s | aggregate max(price) as top", kJoin},
      // A maximum per auction, of another field, of a filtered stream; not an extreme.
      {"bids | key by auction | window tumbling 10s | aggregate max(price) as top", kJoin},
      {"bids | window tumbling 10s | aggregate max(bidder) as top", kJoin},
      {"bids | where auction > 3 | window tumbling 10s | aggregate max(price) as top", kJoin},
      {"bids | window tumbling 10s | aggregate sum(price) as top", kJoin},
      // Two key pairs.
      {"bids | window tumbling 10s | aggregate max(price) as top, max(bidder) as b",
       "bids | join maxima on bids.price == maxima.top and bids.bidder == maxima.b "
       "window tumbling 10s"},
  };
  for (const auto& [maxima, join] : cases) {
    auto p = Passes(Script(maxima, join), {});
    ASSERT_NE(p->plan, nullptr) << maxima << " / " << join;
    for (const Node* n : p->plan->Ordered()) {
      EXPECT_NE(n->kind, NodeKind::kPrune) << maxima << " / " << join << "\n"
                                           << p->plan->ToString();
    }
  }
}

TEST(PruneJoinTest, ThePassCanBeSwitchedOff) {
  auto p = Passes(Script(kMaxima, kJoin), {"prune-join"});
  ASSERT_NE(p->plan, nullptr);
  for (const Node* n : p->plan->Ordered()) EXPECT_NE(n->kind, NodeKind::kPrune);
}

}  // namespace
}  // namespace flow::plan
