// The front end must survive any input: no crash, hang or stack overflow, and a clear diagnostic.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <string>

#include "frontend/frontend.h"

namespace flow {
namespace {

struct Outcome {
  std::vector<diag::Diagnostic> diags;
  bool checked = false;  // sema ran
  bool Has(diag::Kind k) const {
    for (const auto& d : diags) {
      if (d.kind == k) return true;
    }
    return false;
  }
  size_t errors() const {
    size_t n = 0;
    for (const auto& d : diags) n += d.severity == diag::Severity::kError;
    return n;
  }
};

Outcome CheckString(std::string text) {
  diag::SourceManager sm;
  diag::DiagnosticEngine diags;
  auto program = frontend::CheckText("input.flow", std::move(text), sm, diags);
  return {diags.diagnostics(), program != nullptr};
}

const char* kHeader =
    "schema Click { user: string, url: string, bytes: int, ts: timestamp }\n"
    "stream clicks = from file(path: \"c.jsonl\") format json as Click event time ts watermark "
    "5s\n";

TEST(Robustness, EmptyFileIsAValidProgram) {
  Outcome o = CheckString("");
  EXPECT_TRUE(o.diags.empty());
  EXPECT_TRUE(o.checked);
}

TEST(Robustness, CommentsOnly) {
  Outcome o = CheckString("// nothing\n/* still nothing */\n");
  EXPECT_TRUE(o.diags.empty());
}

TEST(Robustness, InvalidUtf8NamesTheByteOffset) {
  Outcome o = CheckString("schema A { x: string }\n// caf\xe9\n");
  ASSERT_EQ(o.diags.size(), 1u);
  EXPECT_EQ(o.diags[0].kind, diag::Kind::kInvalidUtf8);
  EXPECT_NE(o.diags[0].message.find("0xE9"), std::string::npos) << o.diags[0].message;
  EXPECT_NE(o.diags[0].message.find("byte offset 29"), std::string::npos) << o.diags[0].message;
}

TEST(Robustness, OverlongAndSurrogateUtf8AreRejected) {
  EXPECT_TRUE(CheckString("// \xc0\xaf\n").Has(diag::Kind::kInvalidUtf8));      // overlong `/`
  EXPECT_TRUE(CheckString("// \xed\xa0\x80\n").Has(diag::Kind::kInvalidUtf8));  // surrogate
  EXPECT_FALSE(
      CheckString("// \xf0\x9f\x98\x80\n").Has(diag::Kind::kInvalidUtf8));  // emoji is fine
}

TEST(Robustness, RandomBinaryData) {
  std::mt19937 rng(1234);
  for (int round = 0; round < 20; ++round) {
    std::string text(4096, '\0');
    for (char& c : text) c = static_cast<char>(rng() & 0xFF);
    Outcome o = CheckString(text);
    EXPECT_GT(o.errors(), 0u);
    EXPECT_LE(o.diags.size(), 51u);  // the error limit holds
  }
}

TEST(Robustness, ControlCharactersAndNulBytes) {
  std::string text("stream s = \0\x01\x02 | where", 24);
  Outcome o = CheckString(text);
  EXPECT_TRUE(o.Has(diag::Kind::kInvalidCharacter));
}

TEST(Robustness, RandomTokenSoup) {
  // Sequences of real tokens exercise parser recovery far more than random bytes.
  const std::vector<std::string> vocab = {
      "stream", "s",         "=",         "from",   "kafka",  "(",     ")",       "topic",
      ":",      "\"t\"",     "|",         "where",  "key",    "by",    "window",  "tumbling",
      "1m",     "aggregate", "count",     "as",     "select", "join",  "on",      "==",
      "within", "5s",        "into",      "stdout", "format", "json",  "schema",  "{",
      "}",      ",",         "param",     "int",    "list",   "<",     ">",       "?",
      "case",   "when",      "then",      "else",   "end",    "cast",  "not",     "and",
      "or",     "in",        "is",        "null",   "-",      "+",     "*",       "[",
      "]",      ".",         "extern",    "fn",     "->",     "event", "time",    "watermark",
      "union",  "explode",   "timestamp", "1.5",    "42",     ";",     "session", "every"};
  std::mt19937 rng(99);
  for (int round = 0; round < 3000; ++round) {
    std::string text = round % 2 ? kHeader : "";
    size_t n = 1 + rng() % 40;
    for (size_t i = 0; i < n; ++i) text += vocab[rng() % vocab.size()] + " ";
    CheckString(text);  // must simply return
  }
}

TEST(Robustness, OneMegabyteLineWithAString) {
  std::string text = "param p: string = \"" + std::string(1 << 20, 'x') + "\"\n";
  Outcome o = CheckString(text);
  EXPECT_TRUE(o.diags.empty());
}

TEST(Robustness, OneMegabyteLineOfOperators) {
  std::string cond = "bytes > 0";
  while (cond.size() < (1u << 20)) cond += " or bytes > 0";
  Outcome o = CheckString(std::string(kHeader) + "clicks | where " + cond + " | into stdout\n");
  EXPECT_TRUE(o.Has(diag::Kind::kNestingTooDeep));
  EXPECT_EQ(o.errors(), 1u);
}

TEST(Robustness, HundredThousandNestedParentheses) {
  std::string text = std::string(kHeader) + "clicks | where " + std::string(100000, '(') + "true" +
                     std::string(100000, ')') + " | into stdout\n";
  Outcome o = CheckString(text);
  ASSERT_EQ(o.errors(), 1u);
  EXPECT_EQ(o.diags[0].kind, diag::Kind::kNestingTooDeep);
}

TEST(Robustness, UnbalancedNestingAndPrefixChains) {
  EXPECT_TRUE(CheckString(std::string(100000, '[')).Has(diag::Kind::kNestingTooDeep));
  std::string nots;
  for (int i = 0; i < 100000; ++i) nots += "not ";
  EXPECT_TRUE(CheckString(std::string(kHeader) + "clicks | where " + nots + "true | into stdout\n")
                  .Has(diag::Kind::kNestingTooDeep));
  std::string cases;
  for (int i = 0; i < 100000; ++i) cases += "case when true then ";
  EXPECT_TRUE(CheckString("param p: int = " + cases).Has(diag::Kind::kNestingTooDeep));
  std::string lists;
  for (int i = 0; i < 100000; ++i) lists += "list<";
  EXPECT_TRUE(CheckString("schema A { x: " + lists + "int }").Has(diag::Kind::kNestingTooDeep));
}

TEST(Robustness, NestingJustUnderTheLimitIsAccepted) {
  std::string text = std::string(kHeader) + "clicks | where " + std::string(200, '(') +
                     "bytes > 0" + std::string(200, ')') + " | into stdout\n";
  Outcome o = CheckString(text);
  EXPECT_TRUE(o.diags.empty());
}

TEST(Robustness, ManyStreamsInReverseOrder) {
  // Every stream reads one defined below it: each is a use-before-definition, none a cycle, and the
  // check must stay fast (no quadratic cycle search).
  std::string text = "schema A { x: int }\n";
  const int n = 20000;
  for (int i = 0; i < n; ++i)
    text += "stream s" + std::to_string(i) + " = s" + std::to_string(i + 1) + "\n";
  text += "stream s" + std::to_string(n) + " = from stdin() format json as A\n";
  diag::SourceManager sm;
  diag::DiagnosticEngine diags(100000);
  frontend::CheckText("many.flow", text, sm, diags);
  size_t use_before = 0, cycles = 0;
  for (const auto& d : diags.diagnostics()) {
    use_before += d.kind == diag::Kind::kUseBeforeDefinition;
    cycles += d.kind == diag::Kind::kStreamCycle;
  }
  EXPECT_EQ(use_before, static_cast<size_t>(n));
  EXPECT_EQ(cycles, 0u);
}

TEST(Robustness, LongCycleIsFoundOnce) {
  std::string text = "schema A { x: int }\n";
  const int n = 5000;
  for (int i = 0; i < n; ++i)
    text += "stream s" + std::to_string(i) + " = s" + std::to_string((i + 1) % n) + "\n";
  Outcome o = CheckString(text);
  size_t cycles = 0;
  for (const auto& d : o.diags) cycles += d.kind == diag::Kind::kStreamCycle;
  EXPECT_GE(cycles, 1u);
}

TEST(Robustness, MissingFileAndDirectory) {
  diag::SourceManager sm;
  diag::DiagnosticEngine diags;
  EXPECT_EQ(frontend::CheckFile("/nonexistent/dir/x.flow", sm, diags), nullptr);
  ASSERT_EQ(diags.diagnostics().size(), 1u);
  EXPECT_EQ(diags.diagnostics()[0].kind, diag::Kind::kIoError);
  EXPECT_NE(diags.diagnostics()[0].message.find("No such file"), std::string::npos);

  diag::DiagnosticEngine diags2;
  EXPECT_EQ(frontend::CheckFile(std::filesystem::temp_directory_path().string(), sm, diags2),
            nullptr);
  ASSERT_EQ(diags2.diagnostics().size(), 1u);
  EXPECT_NE(diags2.diagnostics()[0].message.find("directory"), std::string::npos);
}

}  // namespace
}  // namespace flow
