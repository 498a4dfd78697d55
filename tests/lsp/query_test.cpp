// The occurrence list and record-at-cursor query over a checked program.
#include "lsp/query.h"

#include <gtest/gtest.h>

#include "lsp/document.h"
#include "lsp/features.h"
#include "lsp_test_util.h"

namespace flow::lsp {
namespace {

constexpr std::string_view kScript = kOrdersScript;

uint32_t OffsetOf(std::string_view needle, size_t nth = 0) {
  size_t at = 0;
  for (size_t i = 0;; ++i) {
    at = kScript.find(needle, at);
    EXPECT_NE(at, std::string_view::npos) << needle;
    if (i == nth) return static_cast<uint32_t>(at);
    at += needle.size();
  }
}

TEST(LspQuery, FindsUsesWithTypesAndDefinitions) {
  auto a = Analyze("q.flow", std::string(kScript));
  ASSERT_NE(a->program, nullptr);
  ASSERT_TRUE(a->diagnostics.empty()) << a->diagnostics[0].message;

  // `amount` in `where`: a field of Order, declared in the schema.
  const Occurrence* o = FindOccurrence(a->occurrences, OffsetOf("amount >") + 2);
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->kind, SymbolKind::kField);
  EXPECT_EQ(o->type.ToString(), "float");
  EXPECT_EQ(o->owner, "Order");
  ASSERT_TRUE(o->definition.has_value());
  EXPECT_EQ(o->definition->begin, OffsetOf("amount: float", 1));  // not min_amount's

  // `min_amount` in `where`: the param.
  o = FindOccurrence(a->occurrences, OffsetOf("min_amount", 1));
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->kind, SymbolKind::kParam);
  EXPECT_EQ(o->definition->begin, OffsetOf("min_amount"));

  // `Order` after `as`: the schema.
  o = FindOccurrence(a->occurrences, OffsetOf("Order\n"));
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->kind, SymbolKind::kSchema);
  EXPECT_EQ(o->definition->begin, OffsetOf("Order {"));

  // `big` at the head of the sink pipeline: the stream and its record.
  o = FindOccurrence(a->occurrences, OffsetOf("big |"));
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->kind, SymbolKind::kStream);
  EXPECT_EQ(o->type.ToString(), "{id: string, doubled: float}");
  EXPECT_EQ(o->definition->begin, OffsetOf("big ="));

  // The `select` keyword: the record it produces.
  o = FindOccurrence(a->occurrences, OffsetOf("select") + 1);
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->kind, SymbolKind::kOperator);
  EXPECT_EQ(o->type.ToString(), "{id: string, doubled: float}");

  // Nothing at a comment-free blank spot between statements.
  EXPECT_EQ(FindOccurrence(a->occurrences, OffsetOf("= 10.0") + 1), nullptr);
}

TEST(LspQuery, FieldDefinitionsFollowThePipeline) {
  auto a = Analyze("q.flow", std::string(kScript));
  ASSERT_NE(a->program, nullptr);
  ASSERT_TRUE(a->diagnostics.empty()) << a->diagnostics[0].message;
  // `doubled` read from stream big: the select alias that introduced it.
  const Occurrence* o = FindOccurrence(a->occurrences, OffsetOf("doubled >") + 1);
  ASSERT_NE(o, nullptr);
  ASSERT_TRUE(o->definition.has_value());
  EXPECT_EQ(o->definition->begin, OffsetOf("doubled\n"));
  // `id` passed through the select unchanged: still the schema's field.
  o = FindOccurrence(a->occurrences, OffsetOf("id !=") + 1);
  ASSERT_NE(o, nullptr);
  ASSERT_TRUE(o->definition.has_value());
  EXPECT_EQ(o->definition->begin, OffsetOf("id: string"));
}

TEST(LspQuery, RecordAtFollowsThePipeline) {
  auto a = Analyze("q.flow", std::string(kScript));
  ASSERT_NE(a->program, nullptr);
  // Inside `where`: the source's Order record.
  types::Type t = RecordAt(*a->program, OffsetOf("amount >"), kScript);
  EXPECT_EQ(t.ToString(), "Order");
  // Inside `select`: still Order (where keeps the record).
  t = RecordAt(*a->program, OffsetOf("id, amount"), kScript);
  EXPECT_EQ(t.ToString(), "Order");
  // After the sink head `big |`: the record of big.
  t = RecordAt(*a->program, OffsetOf("into stdout"), kScript);
  EXPECT_EQ(t.ToString(), "{id: string, doubled: float}");
}

TEST(LspQuery, TooLargeDocumentIsNotAnalysed) {
  std::string huge(kMaxDocumentBytes + 1, ' ');
  auto a = Analyze("big.flow", huge);
  EXPECT_EQ(a->program, nullptr);
  ASSERT_EQ(a->diagnostics.size(), 1u);
  EXPECT_NE(a->diagnostics[0].message.find("larger than the language server's limit"),
            std::string::npos);
}

// The editor shows what `flowc build` would refuse, at its place, and the checked program stays
// available for hover and completion.
TEST(LspQuery, ConstructsTheBuildRefusesAreDiagnosedAndTheProgramKept) {
  const std::string text =
      "schema Click { user: string, tags: list<string> }\n"
      "stream clicks = from file(path: \"c.jsonl\") format json as Click\n"
      "clicks | into stdout format csv\n";
  auto a = Analyze("csv.flow", text);
  ASSERT_NE(a->program, nullptr);
  ASSERT_EQ(a->diagnostics.size(), 1u);
  const diag::Diagnostic& d = a->diagnostics[0];
  EXPECT_EQ(d.kind, diag::Kind::kUnsupported);
  EXPECT_EQ(d.range.line, 3u);
  EXPECT_NE(d.message.find("list<string> field (`tags`) in `format csv`"), std::string::npos)
      << d.message;
}

// While the user types, a statement with a syntax error does not blind the rest of the file:
// hover and definitions still work in the other statements, and only the syntax error shows.
TEST(LspQuery, AnalysisGoesOnPastStatementsWithSyntaxErrors) {
  const std::string text = std::string(kScript) +
                           "stream half = big | where doubled >\n"  // typing, unfinished
                           "  | select id\n"
                           "schema Late { x: int }\n"
                           "big | select id as copy | into stdout format (\n";  // another one
  auto a = Analyze("typing.flow", text);
  ASSERT_FALSE(a->diagnostics.empty());
  for (const diag::Diagnostic& d : a->diagnostics) {
    EXPECT_EQ(d.kind, diag::Kind::kSyntaxError) << d.message;
  }
  ASSERT_NE(a->program, nullptr);
  ASSERT_NE(a->tolerant_sm, nullptr);
  // `amount` in the first stream's `where`: a field of Order, as without the errors.
  const Occurrence* o = FindOccurrence(a->occurrences, OffsetOf("amount >") + 2);
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->kind, SymbolKind::kField);
  EXPECT_EQ(o->owner, "Order");
  ASSERT_TRUE(o->definition.has_value());
  EXPECT_EQ(o->definition->begin, OffsetOf("amount: float", 1));
  // A schema declared after the broken statement is known too.
  o = FindOccurrence(a->occurrences, static_cast<uint32_t>(text.find("Late")));
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->kind, SymbolKind::kSchema);
  // Nothing is claimed inside the blanked statement.
  EXPECT_EQ(FindOccurrence(a->occurrences, static_cast<uint32_t>(text.find("half"))), nullptr);
}

TEST(LspQuery, UriToPath) {
  EXPECT_EQ(UriToPath("file:///home/a%20b/x.flow"), "/home/a b/x.flow");
  EXPECT_EQ(UriToPath("untitled:Untitled-1"), "untitled:Untitled-1");
  EXPECT_EQ(UriToPath("file:///bad%zz"), "/bad%zz");
}

}  // namespace
}  // namespace flow::lsp

namespace flow::lsp {
namespace {

// Hover on a field with a quoted name shows its name in the data as well as the script name:
// on the declaration, on a use, and in the schema's record.
TEST(LspHover, ShowsWireNames) {
  const std::string text =
      "schema Ev { \"user-id\" as user_id: string, \"pr\\u{e9}nom\" as prenom: string?, n: int }\n"
      "from stdin format json as Ev | where user_id != \"\" | into stdout\n";
  Document doc = CleanDocument(text);
  auto hover = [&](uint32_t line, size_t col) {
    Json h = Hover(doc, Position{line, static_cast<uint32_t>(col)});
    const Json* contents = h.GetObject("contents");
    const std::string* value = contents ? contents->GetString("value") : nullptr;
    return value ? *value : std::string();
  };
  std::string second = text.substr(text.find('\n') + 1);
  std::string decl = hover(0, text.find("user_id") + 1);
  EXPECT_NE(decl.find("user_id: string"), std::string::npos) << decl;
  EXPECT_NE(decl.find("named \"user-id\" in the data"), std::string::npos) << decl;
  std::string use = hover(1, second.find("user_id") + 1);
  EXPECT_NE(use.find("named \"user-id\" in the data"), std::string::npos) << use;
  std::string schema = hover(1, second.find("Ev") + 1);
  EXPECT_NE(schema.find("\"pr\xc3\xa9nom\" as prenom: string?"), std::string::npos) << schema;
  EXPECT_NE(schema.find("\n  n: int"), std::string::npos) << schema;
  std::string plain = hover(0, text.find("n: int"));
  EXPECT_EQ(plain.find("in the data"), std::string::npos) << plain;
}

}  // namespace
}  // namespace flow::lsp
