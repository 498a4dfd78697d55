#pragma once
// The language features, one file each. Every function reads a Document (and its Analysis) and
// returns the JSON of the LSP result; none of them writes to the transport or throws. Positions
// in and out are LSP positions (UTF-16); see position.h.

#include <optional>
#include <string>
#include <vector>

#include "lsp/document.h"
#include "lsp/json.h"

namespace flow::lsp {

// LSP range of a byte range of an analysed text.
Json RangeJson(const LineIndex& lines, uint32_t begin, uint32_t end);
Json PositionJson(Position p);

// diagnostics.cpp: the params of textDocument/publishDiagnostics for the document's analysis.
Json PublishDiagnosticsParams(const Document& doc);

// hover.cpp: a Hover for the name at `pos`, or null. `markdown` false: plain text without code
// fences, for clients that do not render Markdown.
Json Hover(const Document& doc, Position pos, bool markdown = true);

// definition.cpp: the Location where the name at `pos` is declared, or null.
Json Definition(const Document& doc, Position pos);

// references.cpp: Locations of every occurrence of what is at `pos` (the declaration too when
// `include_declaration`); and the same as DocumentHighlights (declarations as writes).
Json References(const Document& doc, Position pos, bool include_declaration);
Json DocumentHighlights(const Document& doc, Position pos);
// The occurrences naming what is at `pos` (as References), in text order; empty when nothing is.
std::vector<const Occurrence*> Matches(const Analysis& a, Position pos);

// rename.cpp: textDocument/prepareRename (the range of the renamable name at `pos`, or null) and
// textDocument/rename (a WorkspaceEdit). Params, schemas, schema fields, fields and streams can
// be renamed; functions, extern fns (their name is the C++ function's), keywords, connectors and
// formats cannot. A schema field keeps its name in the data (`"user" as who: string`). A rename
// that would make the script invalid (a clash, a keyword, not a name) is refused: nullopt with
// *error set.
Json PrepareRename(const Document& doc, Position pos);
std::optional<Json> Rename(const Document& doc, Position pos, const std::string& new_name,
                           std::string* error);

// semantic_tokens.cpp: textDocument/semanticTokens/full: the data array of every name the
// analysis resolved, typed by what it names (SemanticTokenTypes() is the legend).
Json SemanticTokens(const Document& doc);
const std::vector<std::string>& SemanticTokenTypes();

// completion.cpp: a CompletionList for `pos`.
Json Completion(const Document& doc, Position pos);

// signature_help.cpp: a SignatureHelp for the call the cursor is in, or null.
Json SignatureHelp(const Document& doc, Position pos);

// code_actions.cpp: quick fixes (CodeAction[]) for the diagnostics that touch `range`.
Json CodeActions(const Document& doc, const Range& range);

// formatting.cpp: TextEdits that turn the document into the canonical layout (empty when it is
// already formatted). On syntax errors returns nullopt and sets *error to the rendered errors.
std::optional<Json> Formatting(const Document& doc, int tab_size, std::string* error);

// symbols.cpp: DocumentSymbols (params, schemas with their fields, extern fns, streams, sinks).
Json DocumentSymbols(const Document& doc);

// The Markdown shown on hover for a type: records as `Name { a: int, ... }` one field a line.
std::string RecordText(const types::Type& type);

}  // namespace flow::lsp
