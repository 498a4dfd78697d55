#pragma once
// An open document and what the front end (the same one `flowc check` runs) found in it.
//
// Analyze runs the front end's whole pipeline (short of the C++ compiler) on a private copy of
// the text. A syntax error does not leave the editor blind: the statements holding syntax errors
// are blanked out (same offsets) and the rest is checked again, so hover, highlight, completion
// and go-to-definition keep working there; only the syntax errors are reported. Documents larger
// than kMaxDocumentBytes are not analysed: the result then holds one error diagnostic saying so,
// which keeps a pathological buffer from stalling the server. Threading: an Analysis is immutable
// once built and shared between the document and requests through shared_ptr.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "diag/diagnostic.h"
#include "diag/source_manager.h"
#include "lsp/position.h"
#include "lsp/query.h"
#include "sema/checker.h"

namespace flow::lsp {

inline constexpr size_t kMaxDocumentBytes = size_t{16} << 20;  // 16 MiB

struct Analysis {
  diag::SourceManager sm;
  uint32_t file = 0;
  std::vector<diag::Diagnostic> diagnostics;
  // Null when too large, or when even the statements without syntax errors do not parse.
  std::unique_ptr<sema::CheckedProgram> program;
  // The text `program` was checked from when statements with syntax errors were blanked out (the
  // AST may point into it); null otherwise. Same length and line breaks as text().
  std::unique_ptr<diag::SourceManager> tolerant_sm;
  std::vector<Occurrence> occurrences;
  std::unique_ptr<LineIndex> lines;  // over sm.text(file)

  const std::string& text() const { return sm.text(file); }
  // A program of the whole text (no statement was blanked out).
  bool complete() const { return program != nullptr && tolerant_sm == nullptr; }
};

// `path` names the file in messages (the document's file path, or its URI).
std::shared_ptr<const Analysis> Analyze(const std::string& path, const std::string& text);

struct Document {
  std::string uri;
  std::string path;
  int64_t version = 0;
  std::string text;
  std::shared_ptr<const Analysis> analysis;   // of `text`
  std::shared_ptr<const Analysis> last_good;  // the latest complete() analysis
  bool stale = false;  // `text` changed since `analysis` was made (analysis is deferred)
};

// The file path of a `file://` URI with %XX escapes decoded; other URIs are returned as they are.
std::string UriToPath(const std::string& uri);

}  // namespace flow::lsp
