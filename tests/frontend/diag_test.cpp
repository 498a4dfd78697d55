// Unit tests for diagnostics rendering, "did you mean" and literal decoding.
#include <gtest/gtest.h>

#include "diag/diagnostic.h"
#include "diag/render.h"
#include "diag/source_manager.h"
#include "diag/suggest.h"
#include "parse/literals.h"

namespace flow {
namespace {

diag::Diagnostic Error(diag::SourceRange r, std::string message) {
  diag::Diagnostic d;
  d.kind = diag::Kind::kUnknownField;
  d.range = r;
  d.message = std::move(message);
  return d;
}

TEST(Render, CaretUnderlinesTheRange) {
  diag::SourceManager sm;
  uint32_t f = sm.AddFile("a.flow", "line one\nx | where usr == 1\n");
  diag::SourceRange r = sm.Range(f, 9 + 10, 9 + 13);  // `usr`
  EXPECT_EQ(r.line, 2u);
  EXPECT_EQ(r.col, 11u);
  std::string text =
      diag::RenderText(Error(r, "no field `usr`").Help("did you mean `user`?"), sm, false);
  EXPECT_EQ(text,
            "a.flow:2:11: error: no field `usr` [unknown-field]\n"
            "2 | x | where usr == 1\n"
            "  |           ^~~\n"
            "  = help: did you mean `user`?\n");
}

TEST(Render, TabsExpandAndUtf8CountsCodePoints) {
  diag::SourceManager sm;
  // A tab (4 columns) and a two-byte `é` (one column) precede `x`.
  uint32_t f = sm.AddFile("t.flow", "\t\xc3\xa9 x\n");
  diag::SourceRange r = sm.Range(f, 4, 5);
  EXPECT_EQ(r.col, 4u);  // tab, é, space, x: the fourth code point
  std::string text = diag::RenderText(Error(r, "m"), sm, false);
  EXPECT_NE(text.find("1 |     \xc3\xa9 x\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  |       ^\n"), std::string::npos) << text;
}

TEST(Render, NotesFollowWithTheirOwnSnippet) {
  diag::SourceManager sm;
  uint32_t f = sm.AddFile("n.flow", "schema A {}\nschema A {}\n");
  diag::Diagnostic d = Error(sm.Range(f, 19, 20), "duplicate");
  d.AddNote(sm.Range(f, 7, 8), "first defined here");
  std::string text = diag::RenderText(d, sm, false);
  EXPECT_NE(text.find("n.flow:1:8: note: first defined here\n1 | schema A {}\n  |        ^\n"),
            std::string::npos)
      << text;
}

TEST(Render, LongLinesAreCutAroundTheCaret) {
  diag::SourceManager sm;
  std::string line(5000, 'a');
  line.replace(3000, 3, "bad");
  uint32_t f = sm.AddFile("l.flow", line + "\n");
  std::string text = diag::RenderText(Error(sm.Range(f, 3000, 3003), "m"), sm, false);
  EXPECT_LT(text.size(), 600u);
  EXPECT_NE(text.find("...aaa"), std::string::npos);
  EXPECT_NE(text.find("bad"), std::string::npos);
}

TEST(Render, JsonIsOneEscapedObjectPerLine) {
  diag::SourceManager sm;
  uint32_t f = sm.AddFile("j.flow", "abc\n");
  diag::Diagnostic d = Error(sm.Range(f, 1, 2), "quote \" tab \t ctl \x01");
  std::string json = diag::RenderJson(d, sm);
  EXPECT_EQ(json,
            "{\"file\":\"j.flow\",\"line\":1,\"column\":2,\"end_line\":1,\"end_column\":3,"
            "\"severity\":\"error\","
            "\"kind\":\"unknown-field\",\"message\":\"quote \\\" tab \\t ctl "
            "\\u0001\",\"help\":null,\"fixit\":null,"
            "\"notes\":[]}\n");
}

TEST(Engine, StopsAtTheLimitWithOneTooManyErrors) {
  diag::DiagnosticEngine engine(3);
  for (int i = 0; i < 10; ++i) engine.Report(diag::Kind::kSyntaxError, {}, "e");
  ASSERT_EQ(engine.diagnostics().size(), 4u);
  EXPECT_EQ(engine.diagnostics().back().kind, diag::Kind::kTooManyErrors);
  EXPECT_EQ(engine.error_count(), 10u);
  EXPECT_TRUE(engine.saturated());
}

TEST(Engine, WarningsAreNotErrors) {
  diag::DiagnosticEngine engine;
  engine.Report(diag::Kind::kUnusedStream, {}, "w");
  EXPECT_FALSE(engine.has_errors());
  EXPECT_EQ(engine.warning_count(), 1u);
}

TEST(Suggest, EditDistanceAndClosestMatch) {
  EXPECT_EQ(diag::EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(diag::EditDistance("", "abc"), 3u);
  EXPECT_EQ(diag::EditDistance("user", "user"), 0u);
  EXPECT_EQ(diag::ClosestMatch("usr", {"url", "user", "bytes"}),
            std::optional<std::string>("user"));
  EXPECT_EQ(diag::ClosestMatch("brokrs", {"topic", "brokers"}),
            std::optional<std::string>("brokers"));
  EXPECT_EQ(diag::ClosestMatch("zzzzzz", {"topic", "brokers"}), std::nullopt);
}

TEST(Literals, Timestamps) {
  int64_t ms = 0;
  std::string error;
  ASSERT_TRUE(parse::ParseTimestamp("2024-01-01T00:00:00Z", &ms, &error)) << error;
  EXPECT_EQ(ms, 1704067200000);  // date -u -d 2024-01-01 +%s
  ASSERT_TRUE(parse::ParseTimestamp("1970-01-01T02:00:00.250+02:00", &ms, &error)) << error;
  EXPECT_EQ(ms, 250);
  ASSERT_TRUE(parse::ParseTimestamp("2024-02-29", &ms, &error)) << error;
  EXPECT_EQ(ms, 1709164800000);
  EXPECT_FALSE(parse::ParseTimestamp("2023-02-29", &ms, &error));
  EXPECT_FALSE(parse::ParseTimestamp("2024-01-01T00:00:00", &ms, &error));  // no zone
  EXPECT_FALSE(parse::ParseTimestamp("yesterday", &ms, &error));
  EXPECT_NE(error.find("ISO-8601"), std::string::npos);
}

TEST(Literals, DurationsIntsAndStrings) {
  int64_t v = 0;
  std::string error, s;
  size_t at = 0;
  ASSERT_TRUE(parse::ParseDuration("250ms", &v, &error));
  EXPECT_EQ(v, 250);
  ASSERT_TRUE(parse::ParseDuration("2h", &v, &error));
  EXPECT_EQ(v, 2 * 3600 * 1000);
  ASSERT_TRUE(parse::ParseDuration("1d", &v, &error));
  EXPECT_EQ(v, 86400000);
  EXPECT_FALSE(parse::ParseDuration("99999999999999999d", &v, &error));
  EXPECT_FALSE(parse::ParseInt("9223372036854775808", &v, &error));
  ASSERT_TRUE(parse::UnescapeString("\"a\\n\\t\\\"\\u{e9}\"", &s, &error, &at)) << error;
  EXPECT_EQ(s, "a\n\t\"\xc3\xa9");
  EXPECT_FALSE(parse::UnescapeString("\"ab\\q\"", &s, &error, &at));
  EXPECT_EQ(at, 3u);  // the backslash
}

}  // namespace
}  // namespace flow
