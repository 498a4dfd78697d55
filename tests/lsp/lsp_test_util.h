#pragma once
// Helpers shared by the language server's unit tests.

#include <gtest/gtest.h>

#include <string>

#include "lsp/document.h"

namespace flow::lsp {

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
