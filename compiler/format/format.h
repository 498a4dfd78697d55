#pragma once
// flow::format: the canonical layout of a Flow script (`flowc fmt`, the language server).
//
// Contract: FormatSource parses `source`; when it has syntax errors (or invalid UTF-8) nothing is
// formatted: `ok` is false, `text` is empty and `diagnostics` holds the errors rendered exactly as
// `flowc check` prints them. Otherwise `text` is the program in the canonical layout (see the
// `flowc fmt` section of docs/compiler.md): same tokens up to redundant parentheses and optional
// `;`, every comment kept, runs of blank lines collapsed to one. Formatting is idempotent:
// FormatSource(FormatSource(x).text).text == FormatSource(x).text. Type errors do not stop
// formatting (only the parser runs). Threading: each call is independent.

#include <string>
#include <string_view>

namespace flow::format {

struct FormatOptions {
  int indent = 2;       // spaces per indentation level
  int max_width = 100;  // lines longer than this are broken where the layout allows
};

struct FormatResult {
  bool ok = false;          // false: syntax errors; `text` is empty, `diagnostics` rendered as text
  std::string text;         // the formatted program
  std::string diagnostics;  // rendered `file:line:col: error: ...` text when !ok
  size_t error_count = 0;   // number of errors in `diagnostics`
};

[[nodiscard]] FormatResult FormatSource(std::string_view path, std::string_view source,
                                        const FormatOptions& options = {});

}  // namespace flow::format
