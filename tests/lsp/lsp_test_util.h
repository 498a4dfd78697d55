#pragma once
// Helpers shared by the language server's unit tests.

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "lsp/document.h"

namespace flow::lsp {

// A script with a param, a schema, a stream read by two sink pipelines, a select alias and a
// field used through the pipeline: the fixture of the query and rename tests.
inline constexpr std::string_view kOrdersScript =
    "param min_amount: float = 10.0\n"
    "schema Order { id: string, amount: float, ts: timestamp }\n"
    "stream big = from file(path: \"o.jsonl\") format json as Order\n"
    "  | where amount > min_amount\n"
    "  | select id, amount * 2.0 as doubled\n"
    "big | into stdout format json\n"
    "big | where doubled > 1.0 and id != \"\" | into stdout format json\n";

// A document holding `text` and its analysis; the test fails unless `text` checks cleanly.
inline Document CleanDocument(const std::string& text) {
  Document doc;
  doc.text = text;
  doc.analysis = Analyze("t.flow", text);
  EXPECT_NE(doc.analysis->program, nullptr);
  for (const auto& d : doc.analysis->diagnostics) ADD_FAILURE() << d.message;
  return doc;
}

}  // namespace flow::lsp
