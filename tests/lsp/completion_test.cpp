// Completion contexts, read from the text before the cursor. Each case puts the cursor at the end
// of a script prefix (or at a marked spot) and checks which labels are offered.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "lsp/features.h"
#include "lsp_test_util.h"

namespace flow::lsp {
namespace {

constexpr std::string_view kBase =
    "param window_size: duration = 1m\n"
    "param limit: int = 5\n"
    "param tz: string = \"Europe/Berlin\"\n"
    "schema Click { user: string, url: string, ts: timestamp }\n"
    "stream clicks = from file(path: \"c.jsonl\") format json as Click event time ts watermark 5s\n"
    "stream other = clicks | where user != \"bot\"\n";

// Labels offered at the end of `text` (a valid base program is analysed first, as an editor would
// have done, then the text is changed to `text`).
std::set<std::string> LabelsAtEnd(const std::string& text) {
  Document doc;
  doc.uri = "file:///t.flow";
  doc.path = "/t.flow";
  doc.last_good = Analyze(doc.path, std::string(kBase) + "other | into stdout format json\n");
  EXPECT_NE(doc.last_good->program, nullptr);
  EXPECT_TRUE(doc.last_good->diagnostics.empty());
  doc.text = text;
  doc.analysis = Analyze(doc.path, text);
  if (doc.analysis->program) doc.last_good = doc.analysis;
  LineIndex lines(text);
  Json list = Completion(doc, lines.ToPosition(text.size()));
  std::set<std::string> labels;
  for (const Json& item : list.GetArray("items")->as_array())
    labels.insert(*item.GetString("label"));
  return labels;
}

bool Has(const std::set<std::string>& s, std::initializer_list<const char*> want) {
  return std::all_of(want.begin(), want.end(), [&](const char* w) { return s.count(w) > 0; });
}

TEST(LspCompletion, TypesInCastParamSchemaAndExtern) {
  std::string base(kBase);
  for (const std::string& text : {base + "other | select cast(user as ", base + "param p: ",
                                  base + "schema S {\n  a: int,\n  b: ", base + "extern fn f(a: ",
                                  base + "extern fn f(a: int) -> ", base + "param q: list<"}) {
    auto labels = LabelsAtEnd(text);
    EXPECT_TRUE(Has(labels, {"int", "float", "string", "timestamp", "Click"})) << text;
    EXPECT_EQ(labels.count("upper"), 0u) << text;
    EXPECT_EQ(labels.count("user"), 0u) << text;
  }
}

TEST(LspCompletion, DurationParamsAfterWindowWords) {
  for (const char* word : {"tumbling ", "sliding 1m every ", "session ", "watermark "}) {
    auto labels = LabelsAtEnd(std::string(kBase) + "other | window " + word);
    EXPECT_EQ(labels, (std::set<std::string>{"window_size"})) << word;
  }
}

TEST(LspCompletion, StringParamsAfterAWindowsZone) {
  auto labels = LabelsAtEnd(std::string(kBase) + "other | window tumbling 1d zone ");
  EXPECT_EQ(labels, (std::set<std::string>{"tz"}));
}

// `window ... on late into <sink>`: `late` is offered after `on`, sinks after its `into`.
TEST(LspCompletion, LateSinkOfAWindow) {
  std::string base(kBase);
  EXPECT_TRUE(Has(LabelsAtEnd(base + "other | key by user | window tumbling 1m on "), {"late"}));
  EXPECT_TRUE(Has(LabelsAtEnd(base + "other | key by user | window tumbling 1m on late into "),
                  {"stdout", "file", "kafka"}));
}

TEST(LspCompletion, StreamsConnectorsAndFormats) {
  std::string base(kBase);
  EXPECT_EQ(LabelsAtEnd(base + "other | union "), (std::set<std::string>{"clicks", "other"}));
  EXPECT_EQ(LabelsAtEnd(base + "other | join "), (std::set<std::string>{"clicks", "other"}));
  auto sinks = LabelsAtEnd(base + "other | into ");
  EXPECT_TRUE(Has(sinks, {"stdout", "kafka", "file", "blackhole"}));
  EXPECT_EQ(sinks.count("nexmark"), 0u);
  auto sources = LabelsAtEnd(base + "stream s = from ");
  EXPECT_TRUE(Has(sources, {"kafka", "file", "nexmark", "datagen"}));
  EXPECT_EQ(sources.count("stdout"), 0u);
  // Only the sinks that may take dead letters (the connector catalog's).
  EXPECT_EQ(
      LabelsAtEnd(base + "stream s = from stdin() format json as Click on error dead_letter "),
      (std::set<std::string>{"kafka", "file", "stdout"}));
  EXPECT_TRUE(Has(LabelsAtEnd(base + "other | into stdout format "), {"json", "csv"}));
  EXPECT_EQ(LabelsAtEnd(base + "stream s = from kafka(topic: \"t\", "),
            (std::set<std::string>{"topic", "brokers", "group", "start", "read_committed",
                                   "partition_discovery", "properties", "metadata"}));
}

TEST(LspCompletion, FieldsFollowThePipeline) {
  std::string base(kBase);
  // In `where` on clicks: Click's fields, params and functions.
  auto labels = LabelsAtEnd(base + "clicks | where ");
  EXPECT_TRUE(Has(labels, {"user", "url", "ts", "limit", "upper", "count", "where", "select"}));
  // After a select that renames: only the new record's fields.
  labels = LabelsAtEnd(base + "clicks | select user as who, length(url) as n | where ");
  EXPECT_TRUE(Has(labels, {"who", "n"}));
  EXPECT_EQ(labels.count("url"), 0u);
  // A nexmark source's event record.
  labels = LabelsAtEnd(base + "from nexmark(kind: bid) | where ");
  EXPECT_TRUE(Has(labels, {"auction", "bidder", "price", "dateTime"}));
  // A join qualifier: the fields of that stream.
  labels = LabelsAtEnd(base + "clicks | join other on clicks.");
  EXPECT_EQ(labels, (std::set<std::string>{"user", "url", "ts"}));
  // After `|`: only the steps.
  labels = LabelsAtEnd(base + "clicks | ");
  EXPECT_EQ(labels, (std::set<std::string>{"where", "key by", "window", "aggregate", "select",
                                           "explode", "union", "join", "into"}));
}

// SignatureHelp at the end of `text` (analysed as it is, like LabelsAtEnd).
Json SignatureAtEnd(const std::string& text) {
  Document doc;
  doc.text = text;
  doc.analysis = Analyze("t.flow", text);
  doc.last_good = Analyze("t.flow", std::string(kBase) +
                                        "extern fn risk(amount: float, country: string) -> float "
                                        "from \"r.h\"\nother | into stdout format json\n");
  return SignatureHelp(doc, LineIndex(text).ToPosition(text.size()));
}

TEST(LspSignatureHelp, MarksTheArgumentBeingTyped) {
  std::string base(kBase);
  Json j = SignatureAtEnd(base + "other | select substr(url, ");
  ASSERT_TRUE(j.is_object());
  const Json& sig = j.GetArray("signatures")->as_array()[0];
  EXPECT_EQ(*sig.GetString("label"), "substr(s: string, start: int[, len: int]) -> string");
  EXPECT_EQ(sig.GetArray("parameters")->as_array().size(), 3u);
  EXPECT_EQ(j.GetInt("activeParameter"), 1);
  // Nested calls and lists before the cursor are skipped.
  j = SignatureAtEnd(base + "other | select substr(upper(url), length([1, 2]), ");
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j.GetInt("activeParameter"), 2);
  // An extern fn from the program.
  j = SignatureAtEnd(base + "other | select risk(1.0, ");
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(*j.GetArray("signatures")->as_array()[0].GetString("label"),
            "risk(amount: float, country: string) -> float");
  EXPECT_EQ(j.GetInt("activeParameter"), 1);
  // A variadic function stays on its last parameter.
  j = SignatureAtEnd(base + "other | select coalesce(url, user, user, ");
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(
      j.GetInt("activeParameter"),
      static_cast<int64_t>(
          j.GetArray("signatures")->as_array()[0].GetArray("parameters")->as_array().size() - 1));
}

TEST(LspSignatureHelp, NullOutsideACall) {
  std::string base(kBase);
  EXPECT_TRUE(SignatureAtEnd(base + "other | select upper(url) ").is_null());
  EXPECT_TRUE(SignatureAtEnd(base + "other | select upper(url, ").is_null());  // too many
  EXPECT_TRUE(SignatureAtEnd(base + "other | select nosuch(").is_null());
  EXPECT_TRUE(SignatureAtEnd(base + "stream s = from kafka(").is_null());  // a connector
  EXPECT_TRUE(SignatureAtEnd(base + "other | select [upper(url), ").is_null());
}

TEST(LspCompletion, OnlyStreamsDefinedBeforeAndNotItself) {
  std::string text = std::string(kBase) +
                     "stream late = clicks | union other\n"
                     "stream later = clicks\n"
                     "later | into stdout format json\n"
                     "late | into stdout format json\n";
  Document doc = CleanDocument(text);
  // Cursor right after `union `, inside late's own definition.
  size_t at = text.find("union other") + 6;
  Json list = Completion(doc, LineIndex(text).ToPosition(at));
  std::set<std::string> labels;
  for (const Json& item : list.GetArray("items")->as_array())
    labels.insert(*item.GetString("label"));
  EXPECT_EQ(labels, (std::set<std::string>{"clicks", "other"}));
}

TEST(LspCompletion, NoProgramStillOffersKeywordsAndFunctions) {
  Document doc;
  doc.uri = "file:///t.flow";
  doc.text = "stream = = (";
  doc.analysis = Analyze("t.flow", doc.text);
  ASSERT_FALSE(doc.analysis->complete());
  Json list = Completion(doc, {0, 12});
  std::set<std::string> labels;
  for (const Json& item : list.GetArray("items")->as_array())
    labels.insert(*item.GetString("label"));
  EXPECT_TRUE(Has(labels, {"stream", "where", "upper", "count"}));
}

}  // namespace
}  // namespace flow::lsp
