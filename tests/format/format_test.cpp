// flow::format::FormatSource: golden layouts, comments kept, idempotency, unchanged meaning
// (compared through an AST dump written for the test), minimal parentheses, syntax errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ast_dump.h"
#include "diag/diagnostic.h"
#include "diag/source_manager.h"
#include "format/format.h"
#include "parse/parser.h"

namespace flow::format {
namespace {

namespace fs = std::filesystem;

std::string ReadText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The AST dump of `text`, or "" with a test failure when it does not parse.
std::string Dump(const std::string& text) {
  diag::SourceManager sm;
  diag::DiagnosticEngine diags;
  uint32_t file = sm.AddFile("t.flow", text);
  ast::Program program = parse::Parse(sm, file, diags);
  EXPECT_FALSE(diags.has_errors()) << "does not parse:\n" << text;
  return testing::DumpProgram(program);
}

// Every comment of `text`, in order, by a scan independent of the formatter's: outside string
// literals, `//` runs to the end of the line (trailing blanks dropped) and `/*` to `*/`.
std::vector<std::string> Comments(const std::string& text) {
  std::vector<std::string> out;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (text.compare(i, 2, "//") == 0) {
      size_t end = std::min(text.find('\n', i), text.size());
      std::string comment = text.substr(i, end - i);
      comment.erase(comment.find_last_not_of(" \t\r") + 1);
      out.push_back(comment);
      i = end;
    } else if (text.compare(i, 2, "/*") == 0) {
      size_t end = text.find("*/", i + 2) + 2;
      out.push_back(text.substr(i, end - i));
      i = end - 1;
    }
  }
  return out;
}

std::string Format(const std::string& text, const FormatOptions& options = {}) {
  FormatResult r = FormatSource("t.flow", text, options);
  EXPECT_TRUE(r.ok) << r.diagnostics;
  return r.text;
}

// Formatting keeps the meaning and every comment, and a second pass changes nothing.
void ExpectSound(const std::string& input, const std::string& what,
                 const FormatOptions& options = {}) {
  std::string once = Format(input, options);
  std::string twice = Format(once, options);
  EXPECT_EQ(twice, once) << what << ": not idempotent; first pass:\n" << once;
  EXPECT_EQ(Dump(once), Dump(input)) << what << ": meaning changed; output:\n" << once;
  EXPECT_EQ(Comments(once), Comments(input)) << what << ": comments changed; output:\n" << once;
  for (std::string_view line : {std::string_view(once)}) {
    EXPECT_EQ(line.find("\t"), std::string_view::npos) << what;
  }
  if (!once.empty()) {
    EXPECT_EQ(once.back(), '\n') << what;
    EXPECT_EQ(once.find("\n\n\n"), std::string::npos) << what << ": two empty lines in a row";
    EXPECT_EQ(once.find(" \n"), std::string::npos) << what << ": trailing blanks";
  }
}

TEST(Format, GoldenFiles) {
  fs::path dir = fs::path(FLOW_SOURCE_DIR) / "tests/format/golden";
  size_t count = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    const std::string suffix = ".in.flow";
    if (name.size() <= suffix.size() ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    fs::path expected_path = dir / (name.substr(0, name.size() - suffix.size()) + ".out.flow");
    ASSERT_TRUE(fs::exists(expected_path)) << expected_path;
    std::string input = ReadText(entry.path());
    std::string expected = ReadText(expected_path);
    EXPECT_EQ(Format(input), expected) << name;
    EXPECT_EQ(Format(expected), expected) << name << ": the expected layout is not stable";
    ExpectSound(input, name);
    ++count;
  }
  EXPECT_GE(count, 5u);
}

TEST(Format, ExamplesAndBenchmarksAreStableAndKeepTheirMeaning) {
  size_t count = 0;
  for (const char* sub : {"examples", "bench/nexmark"}) {
    for (const auto& entry : fs::recursive_directory_iterator(fs::path(FLOW_SOURCE_DIR) / sub)) {
      if (entry.path().extension() != ".flow") continue;
      ExpectSound(ReadText(entry.path()), entry.path().string());
      ++count;
    }
  }
  EXPECT_GE(count, 15u);
}

// Every script of the front-end and editor tests: formatted soundly when it parses, refused (with
// the parser's errors and no text) exactly when the parser reports errors.
TEST(Format, EveryTestScriptIsFormattedOrRefused) {
  size_t formatted = 0, refused = 0;
  for (const char* sub : {"tests/frontend", "editors/tests/fixtures"}) {
    fs::path dir = fs::path(FLOW_SOURCE_DIR) / sub;
    if (!fs::exists(dir)) continue;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.path().extension() != ".flow") continue;
      std::string text = ReadText(entry.path());
      diag::SourceManager sm;
      diag::DiagnosticEngine diags;
      (void)parse::Parse(sm, sm.AddFile("t.flow", text), diags);
      FormatResult r = FormatSource("t.flow", text);
      EXPECT_EQ(r.ok, !diags.has_errors()) << entry.path();
      if (r.ok) {
        ExpectSound(text, entry.path().string());
        ++formatted;
      } else {
        EXPECT_TRUE(r.text.empty()) << entry.path();
        EXPECT_NE(r.diagnostics.find("t.flow:"), std::string::npos) << entry.path();
        ++refused;
      }
    }
  }
  EXPECT_GE(formatted, 30u);
  EXPECT_GE(refused, 5u);
}

// Candidate places for an extra comment: blanks, the insides of brackets, around `|` and after
// `:`, outside strings and comments.
std::vector<size_t> CommentSlots(const std::string& text) {
  std::vector<size_t> slots;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (text.compare(i, 2, "//") == 0) {
      i = std::min(text.find('\n', i), text.size());
    } else if (text.compare(i, 2, "/*") == 0) {
      i = text.find("*/", i + 2) + 1;
    } else if (c == ' ' || c == '\n' || c == '(' || c == ',' || c == '[') {
      slots.push_back(c == ' ' || c == '\n' ? i : i + 1);
    } else if (c == ')' || c == ']') {
      slots.push_back(i);
    } else if (c == '|' || c == ':') {  // no other token starts with either
      if (c == '|') slots.push_back(i);
      slots.push_back(i + 1);
    }
  }
  return slots;
}

// A comment at every place of every golden input and example: all are kept, the meaning is
// unchanged and a second pass changes nothing.
TEST(Format, ACommentAnywhereIsKeptAndStable) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fs::path(FLOW_SOURCE_DIR) / "tests/format/golden"))
    if (e.path().string().find(".in.flow") != std::string::npos) files.push_back(e.path());
  for (const char* sub : {"examples", "bench/nexmark"})
    for (const auto& e : fs::recursive_directory_iterator(fs::path(FLOW_SOURCE_DIR) / sub))
      if (e.path().extension() == ".flow") files.push_back(e.path());
  size_t tried = 0;
  for (const fs::path& file : files) {
    std::string text = ReadText(file);
    std::vector<size_t> slots = CommentSlots(text);
    // The leading blank keeps `/` + `//` from lexing as one comment.
    const char* kinds[] = {" /* c */", " // c\n", "\n// own\n", "\n/* own */\n"};
    for (size_t k = 0; k < slots.size(); ++k) {
      // Each place gets one kind, rotating, so every kind meets every sort of place.
      for (const char* comment : {kinds[tried % 4]}) {
        std::string input = text;
        input.insert(slots[k], comment);
        ExpectSound(input, file.filename().string() + " with " + comment + " at byte " +
                               std::to_string(slots[k]));
        ++tried;
        if (::testing::Test::HasFailure()) return;  // one clear report is enough
      }
    }
  }
  EXPECT_GE(tried, 500u);
}

// Two comments at once, at pseudo-random places (a fixed sequence, so failures reproduce).
TEST(Format, TwoCommentsAtOnceAreKeptAndStable) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fs::path(FLOW_SOURCE_DIR) / "tests/format/golden"))
    if (e.path().string().find(".in.flow") != std::string::npos) files.push_back(e.path());
  for (const auto& e : fs::directory_iterator(fs::path(FLOW_SOURCE_DIR) / "examples"))
    if (e.path().extension() == ".flow") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  const char* kinds[] = {" /* a */",        " // b\n",
                         "\n\n// c\n\n",    "\n/* d\n   e */ /* f */\n",
                         " /* g */ // h\n", "\n\n/* i */ \n"};
  uint64_t state = 777;
  auto next = [&](uint64_t n) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<size_t>((state >> 33) % n);
  };
  for (const fs::path& file : files) {
    std::string text = ReadText(file);
    std::vector<size_t> slots = CommentSlots(text);
    for (int round = 0; round < 60 && !slots.empty(); ++round) {
      size_t a = slots[next(slots.size())], b = slots[next(slots.size())];
      if (a > b) std::swap(a, b);
      std::string input = text;
      input.insert(b, kinds[next(6)]);
      input.insert(a, kinds[next(6)]);
      ExpectSound(input, file.filename().string() + " round " + std::to_string(round) +
                             "\ninput:\n" + input);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(Format, MinimalParentheses) {
  struct Case {
    const char* in;
    const char* out;
  };
  const Case cases[] = {
      {"(a + b) * c", "(a + b) * c"},
      {"(a * b) + c", "a * b + c"},
      {"a - (b - c)", "a - (b - c)"},
      {"(a - b) - c", "a - b - c"},
      {"a / (b * c)", "a / (b * c)"},
      {"((a))", "a"},
      {"-(a.b)", "-a.b"},
      {"(-a).b", "(-a).b"},
      {"-(a * b)", "-(a * b)"},
      {"(-a) * b", "-a * b"},
      {"- (-a)", "- -a"},
      {"-(-5)", "- -5"},
      {"a * -b", "a * -b"},
      {"not (a and b)", "not (a and b)"},
      {"(not a) and b", "not a and b"},
      {"not (a == b)", "not a == b"},
      {"(not a) == b", "(not a) == b"},
      {"a or (b and c)", "a or b and c"},
      {"(a or b) and c", "(a or b) and c"},
      {"a and (b or c)", "a and (b or c)"},
      {"a and (b and c)", "a and (b and c)"},
      {"(a and b) and c", "a and b and c"},
      {"(a == b) == c", "a == b == c"},
      {"a == (b == c)", "a == (b == c)"},
      {"(a + 1) in (1, 2)", "a + 1 in (1, 2)"},
      {"(a in (1)) is null", "a in (1) is null"},
      {"(a is null) in (true)", "(a is null) in (true)"},
      {"(a and b) is not null", "(a and b) is not null"},
      {"not (a is null)", "not a is null"},
      {"(not a) is null", "(not a) is null"},
      {"(a == b) is null", "a == b is null"},
      {"a == (b is null)", "a == (b is null)"},
      {"(x[0])[1]", "x[0][1]"},
      {"(a + b)[0]", "(a + b)[0]"},
      {"(a + b).c", "(a + b).c"},
      {"f((a), (b + c))", "f(a, b + c)"},
      {"[(1), (2 * 3)]", "[1, 2 * 3]"},
      {"cast((a + b) as  float)", "cast(a + b as float)"},
      {"case when (a) then (b) else (c + d) end", "case when a then b else c + d end"},
      {"( 1.5e-3 )", "1.5e-3"},
      {"(\"s\")", "\"s\""},
      {"(timestamp \"2024-01-01T00:00:00Z\")", "timestamp \"2024-01-01T00:00:00Z\""},
      {"a not in ((1), 2)", "a not in (1, 2)"},
      {"(a % b) % c", "a % b % c"},
      {"a % (b % c)", "a % (b % c)"},
      {"-a.b[0].c", "-a.b[0].c"},
  };
  for (const Case& c : cases) {
    std::string input = std::string("param x: int = ") + c.in + "\n";
    std::string out = Format(input);
    EXPECT_EQ(out, std::string("param x: int = ") + c.out + "\n") << c.in;
    EXPECT_EQ(Dump(out), Dump(input)) << c.in;
  }
}

TEST(Format, CommentsInEveryPosition) {
  const char* inputs[] = {
      // Header, blank-line groups, trailing and own-line comments between statements.
      "// header\n\n\n\n// second group\nparam a: int = 1 // trailing\n\n\n/* block */\nparam b: "
      "int = 2\n// end of file\n",
      // Inside a schema: before, after and between fields, after the last one.
      "schema S { // opening\n  // before a\n  a: int, // after a\n  b: string? /* after b */,\n"
      "  // after the last field\n}\n",
      // In a pipeline: before operators, after operators, inside expressions and lists.
      "s\n  // before where\n  | where a > /* inline */ 1 // after where\n  | select a, // after "
      "a\n"
      "      b /* b */, c\n  // before into\n  | into stdout // last\n// after\n",
      // In a source: between clauses.
      "from kafka(topic: \"t\", // topic\n  brokers: \"b\") /* c1 */ format json // fmt\n  as S\n"
      "  // own line before event time\n  event time ts watermark 5s // wm\n  on error skip\n"
      "  | into stdout\n",
      // Comment-only and empty-ish programs.
      "// only a comment\n",
      "/* a\n   multi-line\n   block */\nparam a: int = 1\n",
      // A comment between an alias keyword and its name, and inside a call.
      "s | select count(/* all */ *) as // why\n  n | into stdout\n",
      // Comments inside case expressions and joins.
      "a | join b on a.x == b.x // key\n within 5s | select case // c\n when a.x > 1 then 1 /* one "
      "*/ else 2 end as y | into stdout\n",
      // Comments that look like the end of a block comment; two on one line; block before code.
      "param a: int = 1 /* x */ // foo */\n// y\nparam b: int = 2 // z */ \n /* w */ param c: int "
      "= 3\n",
      "schema S // c\n { // d\n a: int }\n",
      // Two block comments in a row, starting a line in the middle of an operator and alone.
      "s | select aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, "
      "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb,\n"
      "/* a */ /* b */ cccccccccccccccccccccccc | into stdout\n/* c */ /* d */\nparam x: int = 1\n",
      // Strings that look like comments are not comments.
      "param p: string = \"// not a comment /* nor this */\" // this is\n",
  };
  for (const char* input : inputs) ExpectSound(input, input);
}

TEST(Format, CommentPlacement) {
  EXPECT_EQ(Format("param a: int = 1    // trailing   \n"), "param a: int = 1  // trailing\n");
  EXPECT_EQ(Format("// one\n\n\n\n// two\nparam a: int = 1\n\n\n\nparam b: int = 2\n"),
            "// one\n\n// two\nparam a: int = 1\n\nparam b: int = 2\n");
  // Consecutive trailing comments share a column.
  EXPECT_EQ(Format("schema S {\n  a: int, // x\n  long_name: string, // y\n}\n"),
            "schema S {\n  a:         int,     // x\n  long_name: string,  // y\n}\n");
  // An own-line comment inside an operator breaks the line there.
  EXPECT_EQ(Format("s | select a,\n// why b\nb | into stdout\n"),
            "s\n  | select a,\n      // why b\n      b\n  | into stdout\n");
}

TEST(Format, Layout) {
  // A single operator stays on the head's line; more go one per line.
  EXPECT_EQ(Format("words|into stdout format csv;"), "words | into stdout format csv\n");
  EXPECT_EQ(Format("s | where a | into stdout"), "s\n  | where a\n  | into stdout\n");
  // Statements on one line are split; `;` goes.
  EXPECT_EQ(Format("param a: int = 1; param b: int = 2;"), "param a: int = 1\nparam b: int = 2\n");
  // A source that fits stays on one line unless it has `on error`.
  EXPECT_EQ(Format("stream s = from stdin()\n  format raw\n  as Line\n"),
            "stream s = from stdin() format raw as Line\n");
  EXPECT_EQ(Format("stream s = from stdin() format raw as Line on error skip\n"),
            "stream s = from stdin() format raw as Line\n  on error skip\n");
  // Schemas written on one line stay there; written over lines, one field per line, aligned.
  EXPECT_EQ(Format("schema L{text:string,n:list<int>?}"),
            "schema L { text: string, n: list<int>? }\n");
  EXPECT_EQ(Format("schema L{\ntext:string,n:int}"),
            "schema L {\n  text: string,\n  n:    int,\n}\n");
  EXPECT_EQ(Format("schema E {}"), "schema E {}\n");
  // Long operator lists wrap after a comma at the continuation indent.
  std::string long_select = "s | select ";
  for (int i = 0; i < 30; ++i) long_select += (i ? ", field_" : "field_") + std::to_string(i);
  long_select += " | into stdout";
  std::string out = Format(long_select);
  std::istringstream lines(out);
  std::string line;
  int lines_seen = 0;
  while (std::getline(lines, line)) {
    ++lines_seen;
    EXPECT_LE(line.size(), 100u) << line;
  }
  EXPECT_GE(lines_seen, 4);
  EXPECT_NE(out.find("\n      field_"), std::string::npos) << out;
  ExpectSound(long_select, "long select");
  // Keywords and spacing are canonical; connectors keep their parentheses as written.
  EXPECT_EQ(Format("s|key  by a,b|window   sliding 10s   every 2s lateness 1s processing time|"
                   "aggregate count( * )as n|into stdout()"),
            "s\n  | key by a, b\n  | window sliding 10s every 2s lateness 1s processing time\n"
            "  | aggregate count(*) as n\n  | into stdout()\n");
}

TEST(Format, IndentOption) {
  FormatOptions options;
  options.indent = 4;
  std::string out = Format("s | where a | into stdout", options);
  EXPECT_EQ(out, "s\n    | where a\n    | into stdout\n");
  ExpectSound("schema S {\n a: int }\ns | where a | select a, b | into stdout", "indent 4",
              options);
}

TEST(Format, NarrowWidthsAndOtherIndents) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fs::path(FLOW_SOURCE_DIR) / "tests/format/golden"))
    if (e.path().string().find(".in.flow") != std::string::npos) files.push_back(e.path());
  for (const auto& e : fs::directory_iterator(fs::path(FLOW_SOURCE_DIR) / "examples"))
    if (e.path().extension() == ".flow") files.push_back(e.path());
  for (int width : {40, 60, 80}) {
    for (int indent : {1, 4}) {
      FormatOptions options;
      options.max_width = width;
      options.indent = indent;
      for (const fs::path& f : files) {
        std::string text = ReadText(f);
        ExpectSound(text, f.filename().string() + " width " + std::to_string(width), options);
        // Lines only pass the width where nothing can break: a comment or one long piece.
        std::istringstream lines(Format(text, options));
        for (std::string line; std::getline(lines, line);) {
          if (static_cast<int>(line.size()) <= width || line.find("//") != std::string::npos ||
              line.find("/*") != std::string::npos)
            continue;
          EXPECT_EQ(line.find(", "), std::string::npos)
              << f.filename() << " width " << width << ": could have broken:\n"
              << line;
        }
      }
    }
  }
}

TEST(Format, SyntaxErrorsAreReportedNotFormatted) {
  FormatResult r = FormatSource("bad.flow", "stream s = from stdin( | where\n");
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.text.empty());
  EXPECT_NE(r.diagnostics.find("bad.flow:1:"), std::string::npos) << r.diagnostics;
  EXPECT_NE(r.diagnostics.find("error:"), std::string::npos) << r.diagnostics;
  EXPECT_GE(r.error_count, 1u);

  for (const char* bad :
       {"param s: string = \"unterminated\n", "/* open comment\n", "param s: string = \"\\q\"\n",
        "param x: int = 99999999999999999999\n", "schema { a: int }\n", "\xff\n"}) {
    FormatResult b = FormatSource("bad.flow", bad);
    EXPECT_FALSE(b.ok) << bad;
    EXPECT_TRUE(b.text.empty()) << bad;
    EXPECT_NE(b.diagnostics.find("bad.flow:"), std::string::npos) << bad;
  }
}

TEST(Format, LineEndingsAndTabs) {
  EXPECT_EQ(
      Format("param a: int = 1 // one\r\n\r\n\r\n/* two\r\n   lines */\r\nparam\tb: int = 2\r\n"),
      "param a: int = 1  // one\n\n/* two\n   lines */\nparam b: int = 2\n");
  ExpectSound("s |\twhere a\r\n\t| into stdout // x\r\n", "crlf");
}

TEST(Format, DeepAndLargePrograms) {
  // An expression as deep as the parser allows, and many statements.
  std::string deep = "param x: int = 1";
  for (int i = 0; i < 900; ++i) deep += " + " + std::to_string(i);
  std::string out = Format(deep + "\n");
  EXPECT_EQ(out, deep + "\n");  // one line: no break inside a param's expression is needed
  std::string many;
  for (int i = 0; i < 5000; ++i)
    many += "stream s" + std::to_string(i) + " = from stdin() format raw as L // c" +
            std::to_string(i) + "\n";
  ExpectSound(many, "5000 streams");
}

TEST(Format, EmptyInput) {
  EXPECT_EQ(Format(""), "");
  EXPECT_EQ(Format("\n\n  \n"), "");
}

}  // namespace
}  // namespace flow::format
