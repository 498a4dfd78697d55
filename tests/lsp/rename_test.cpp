// Rename and semantic tokens over an analysed document.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "lsp/features.h"
#include "lsp_test_util.h"

namespace flow::lsp {
namespace {

constexpr std::string_view kScript = kOrdersScript;

Position At(const Document& doc, std::string_view needle, size_t nth = 0) {
  size_t at = 0;
  for (size_t i = 0;; ++i) {
    at = doc.text.find(needle, at);
    EXPECT_NE(at, std::string::npos) << needle;
    if (i == nth) break;
    at += needle.size();
  }
  return doc.analysis->lines->ToPosition(at);
}

// Applies a WorkspaceEdit's edits for the document to its text.
std::string Apply(const Document& doc, const Json& edit) {
  const Json* changes = edit.GetObject("changes");
  EXPECT_NE(changes, nullptr);
  const Json* list = changes ? changes->Get(doc.uri) : nullptr;
  EXPECT_NE(list, nullptr);
  struct E {
    size_t begin, end;
    std::string text;
  };
  std::vector<E> edits;
  for (const Json& e : list ? list->as_array() : Json::Array{}) {
    const Json* range = e.GetObject("range");
    auto pos = [&](const char* key) {
      const Json* p = range->GetObject(key);
      return doc.analysis->lines->ToOffset(
          Position{static_cast<uint32_t>(*p->GetInt("line")),
                   static_cast<uint32_t>(*p->GetInt("character"))});
    };
    edits.push_back({pos("start"), pos("end"), e.Get("newText")->as_string()});
  }
  std::sort(edits.begin(), edits.end(), [](const E& x, const E& y) { return x.begin > y.begin; });
  std::string text = doc.text;
  for (const E& e : edits) text.replace(e.begin, e.end - e.begin, e.text);
  return text;
}

Document Doc(std::string_view text) {
  Document doc = CleanDocument(std::string(text));
  doc.uri = "file:///t.flow";
  doc.path = "t.flow";
  return doc;
}

TEST(LspRename, AParamEverywhereItIsUsed) {
  Document doc = Doc(kScript);
  Json prepared = PrepareRename(doc, At(doc, "min_amount", 1));
  ASSERT_TRUE(prepared.is_object());
  EXPECT_EQ(prepared.Get("placeholder")->as_string(), "min_amount");
  std::string error;
  auto edit = Rename(doc, At(doc, "min_amount", 1), "threshold", &error);
  ASSERT_TRUE(edit.has_value()) << error;
  std::string want(kScript);
  for (size_t at; (at = want.find("min_amount")) != std::string::npos;)
    want.replace(at, 10, "threshold");
  EXPECT_EQ(Apply(doc, *edit), want);
}

TEST(LspRename, AStreamAndAnAliasThroughThePipeline) {
  Document doc = Doc(kScript);
  std::string error;
  auto edit = Rename(doc, At(doc, "big", 2), "large", &error);
  ASSERT_TRUE(edit.has_value()) << error;
  std::string renamed = Apply(doc, *edit);
  size_t large = 0;
  for (size_t at = renamed.find("large"); at != std::string::npos;
       at = renamed.find("large", at + 1))
    ++large;
  EXPECT_EQ(large, 3u) << renamed;
  EXPECT_EQ(renamed.find("big"), std::string::npos) << renamed;
  // The alias, from its use in a later pipeline: its definition and that use.
  edit = Rename(doc, At(doc, "doubled >"), "twice", &error);
  ASSERT_TRUE(edit.has_value()) << error;
  renamed = Apply(doc, *edit);
  EXPECT_NE(renamed.find("amount * 2.0 as twice"), std::string::npos) << renamed;
  EXPECT_NE(renamed.find("where twice > 1.0"), std::string::npos) << renamed;
}

TEST(LspRename, ASchemaFieldKeepsItsNameInTheData) {
  Document doc = Doc(kScript);
  std::string error;
  auto edit = Rename(doc, At(doc, "amount >"), "total", &error);
  ASSERT_TRUE(edit.has_value()) << error;
  std::string renamed = Apply(doc, *edit);
  EXPECT_NE(renamed.find("\"amount\" as total: float"), std::string::npos) << renamed;
  EXPECT_NE(renamed.find("where total > min_amount"), std::string::npos) << renamed;
  EXPECT_NE(renamed.find("select id, total * 2.0"), std::string::npos) << renamed;
  // The renamed script checks cleanly.
  Document after = Doc(renamed);
  EXPECT_NE(after.analysis->program, nullptr);
}

TEST(LspRename, RefusedWhenTheScriptWouldChangeOrBreak) {
  Document doc = Doc(kScript);
  std::string error;
  // A keyword is not a name.
  EXPECT_FALSE(Rename(doc, At(doc, "min_amount"), "where", &error).has_value());
  EXPECT_NE(error.find("invalid"), std::string::npos) << error;
  // Not a name at all.
  EXPECT_FALSE(Rename(doc, At(doc, "min_amount"), "two words", &error).has_value());
  // A clash with another top-level name.
  EXPECT_FALSE(Rename(doc, At(doc, "big ="), "Order", &error).has_value());
  // Valid, but the param would be shadowed by the field `amount` in `where`.
  EXPECT_FALSE(Rename(doc, At(doc, "min_amount"), "amount", &error).has_value());
  EXPECT_NE(error.find("refer"), std::string::npos) << error;
  // Functions, keywords, connectors and formats are not renamed.
  EXPECT_TRUE(PrepareRename(doc, At(doc, "where")).is_null());
  EXPECT_TRUE(PrepareRename(doc, At(doc, "file(")).is_null());
  EXPECT_TRUE(PrepareRename(doc, At(doc, "json")).is_null());
}

TEST(LspSemanticTokens, NamesAreTypedByWhatTheyName) {
  Document doc = Doc(kScript);
  Json tokens = SemanticTokens(doc);
  const Json* data = tokens.Get("data");
  ASSERT_NE(data, nullptr);
  const auto& d = data->as_array();
  ASSERT_EQ(d.size() % 5, 0u);
  ASSERT_FALSE(d.empty());
  // Decode back to (line, character, length, type) and look up a few names.
  struct T {
    uint32_t line, character, length;
    std::string type;
    bool declaration;
  };
  std::vector<T> decoded;
  uint32_t line = 0, character = 0;
  for (size_t i = 0; i < d.size(); i += 5) {
    const auto dl = static_cast<uint32_t>(d[i].as_int());
    const auto dc = static_cast<uint32_t>(d[i + 1].as_int());
    character = dl == 0 ? character + dc : dc;
    line += dl;
    decoded.push_back({line, character, static_cast<uint32_t>(d[i + 2].as_int()),
                       SemanticTokenTypes()[static_cast<size_t>(d[i + 3].as_int())],
                       d[i + 4].as_int() == 1});
  }
  auto type_at = [&](std::string_view needle, size_t nth = 0) -> std::string {
    Position p = At(doc, needle, nth);
    for (const T& t : decoded) {
      if (t.line == p.line && t.character == p.character)
        return t.type + (t.declaration ? "+decl" : "");
    }
    return "none";
  };
  EXPECT_EQ(type_at("min_amount"), "parameter+decl");
  EXPECT_EQ(type_at("min_amount", 1), "parameter");
  EXPECT_EQ(type_at("amount >"), "property");
  EXPECT_EQ(type_at("Order {"), "type+decl");
  EXPECT_EQ(type_at("big |"), "variable");
  // Sorted and not overlapping.
  for (size_t i = 1; i < decoded.size(); ++i) {
    const T& a = decoded[i - 1];
    const T& b = decoded[i];
    EXPECT_TRUE(a.line < b.line || (a.line == b.line && a.character + a.length <= b.character));
  }
}

}  // namespace
}  // namespace flow::lsp
