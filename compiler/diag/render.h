#pragma once
// Rendering diagnostics for people (text with source line and caret) and tools (JSON Lines).
//
// Text:  file:line:col: error: message [kind-id]
//          3 | stream x = clicks | where usr == ""
//            |                           ^~~
//            = help: did you mean `user`?
//        followed by each note in the same shape with `note:`.
// Columns count code points; tabs display as 4 spaces; lines longer than 160 columns are cut
// around the caret with `...`.
//
// JSON: one object per line (JSON Lines), fields: file, line, column, end_line, end_column,
// severity ("error"|"warning"), kind (stable id), message, help (or null), fixit (or null:
// {line, column, end_line, end_column, replacement}), notes ([{file, line, column, message}]).
// Lines and columns are 1-based; 0 when a diagnostic has no location. Strings are escaped by
// rt::AppendJsonString (DEL too).

#include <string>

#include "diag/diagnostic.h"
#include "diag/source_manager.h"

namespace flow::diag {

std::string RenderText(const Diagnostic& d, const SourceManager& sm, bool color);
std::string RenderJson(const Diagnostic& d, const SourceManager& sm);

}  // namespace flow::diag
