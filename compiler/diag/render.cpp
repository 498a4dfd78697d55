#include "diag/render.h"

#include <algorithm>

#include "flow/runtime/common/json_escape.h"
#include "flow/runtime/common/utf8.h"

namespace flow::diag {
namespace {

constexpr size_t kMaxDisplayColumns = 160;

struct Style {
  bool on;
  std::string Wrap(std::string_view code, std::string_view text) const {
    if (!on) return std::string(text);
    return "\x1b[" + std::string(code) + "m" + std::string(text) + "\x1b[0m";
  }
};

// Diagnostics are read in terminals and editors: DEL is escaped too.
std::string JsonQuote(std::string_view s) {
  return rt::JsonQuoted(s, rt::JsonControls::kAlsoDel);
}

// One displayed cell group: the text to print and the byte offset (within the line) it came from.
struct Cell {
  std::string text;
  size_t byte;
};

std::vector<Cell> DisplayCells(std::string_view line) {
  std::vector<Cell> cells;
  size_t i = 0;
  while (i < line.size()) {
    unsigned char c = line[i];
    // kShape, as columns are counted (a lead byte starts a character): a complete but ill-formed
    // sequence is one cell, so the caret stays under its column.
    size_t n = rt::Utf8SequenceLength(line, i, rt::Utf8Check::kShape);
    if (c == '\t') {
      for (int k = 0; k < 4; ++k) cells.push_back({" ", i});
      i += 1;
    } else if (n == 0 || c < 0x20 || c == 0x7f) {
      cells.push_back({"?", i});
      i += 1;
    } else {
      cells.push_back({std::string(line.substr(i, n)), i});
      i += n;
    }
  }
  return cells;
}

void RenderSnippet(std::string* out, const SourceManager& sm, const SourceRange& r, const Style& st,
                   std::string_view mark_code) {
  std::string_view line = sm.LineText(r.file, r.line);
  uint32_t line_start = sm.LineStart(r.file, r.line);
  size_t begin = r.begin - std::min(r.begin, line_start);
  size_t end = r.end > line_start ? r.end - line_start : begin;
  end = std::min(end, line.size());
  if (end <= begin) end = begin + 1;  // at least one caret, also at end of line
  std::vector<Cell> cells = DisplayCells(line);
  // Columns of the marked span.
  size_t first = cells.size(), last = cells.size();
  for (size_t k = 0; k < cells.size(); ++k) {
    if (first == cells.size() && cells[k].byte >= begin) first = k;
    if (cells[k].byte < end) last = k + 1;
  }
  if (first == cells.size()) last = first + 1;  // caret just past the end of the line
  if (last <= first) last = first + 1;
  size_t from = 0, to = cells.size();
  bool cut_left = false, cut_right = false;
  if (cells.size() > kMaxDisplayColumns) {
    from = first > 60 ? first - 60 : 0;
    to = std::min(cells.size(), from + kMaxDisplayColumns);
    cut_left = from > 0;
    cut_right = to < cells.size();
    last = std::min(last, std::max(to, first + 1));
  }
  std::string number = std::to_string(r.line);
  std::string gutter(number.size(), ' ');
  std::string text = cut_left ? "..." : "";
  for (size_t k = from; k < to; ++k) text += cells[k].text;
  if (cut_right) text += "...";
  *out += st.Wrap("1;34", number + " |") + (text.empty() ? "" : " " + text) + "\n";
  std::string marks;
  marks.append(cut_left ? 3 : 0, ' ');
  marks.append(first - from, ' ');
  marks.push_back('^');
  marks.append(last - first - 1, '~');
  *out += st.Wrap("1;34", gutter + " |") + " " + st.Wrap(mark_code, marks);
  *out += "\n";
}

std::string Location(const SourceManager& sm, const SourceRange& r) {
  if (r.file >= sm.file_count()) return "flowc";
  if (!r.valid()) return sm.name(r.file);
  return sm.name(r.file) + ":" + std::to_string(r.line) + ":" + std::to_string(r.col);
}

std::string_view SeverityName(Severity s) {
  switch (s) {
    case Severity::kError:
      return "error";
    case Severity::kWarning:
      return "warning";
    case Severity::kNote:
      return "note";
  }
  return "error";
}

}  // namespace

std::string RenderText(const Diagnostic& d, const SourceManager& sm, bool color) {
  Style st{color};
  std::string out;
  std::string_view sev_code = d.severity == Severity::kError ? "1;31" : "1;35";
  out += st.Wrap("1", Location(sm, d.range) + ":") + " " +
         st.Wrap(sev_code, std::string(SeverityName(d.severity)) + ":") + " " +
         st.Wrap("1", d.message) + " [" + std::string(KindId(d.kind)) + "]\n";
  bool has_snippet = d.range.valid() && d.range.file < sm.file_count();
  if (has_snippet) RenderSnippet(&out, sm, d.range, st, sev_code);
  if (d.help) {
    std::string gutter(has_snippet ? std::to_string(d.range.line).size() : 1, ' ');
    out += st.Wrap("1;34", gutter + " =") + " " + st.Wrap("1", "help:") + " " + *d.help + "\n";
  }
  for (const Note& n : d.notes) {
    out += st.Wrap("1", Location(sm, n.range) + ":") + " " + st.Wrap("1;36", "note:") + " " +
           n.message + "\n";
    if (n.range.valid() && n.range.file < sm.file_count())
      RenderSnippet(&out, sm, n.range, st, "1;36");
  }
  return out;
}

std::string RenderJson(const Diagnostic& d, const SourceManager& sm) {
  auto end_of = [&](const SourceRange& r, uint32_t* line, uint32_t* col) {
    *line = 0;
    *col = 0;
    if (r.valid() && r.file < sm.file_count()) sm.Locate(r.file, r.end, line, col);
  };
  auto file_of = [&](const SourceRange& r) {
    return r.file < sm.file_count() ? JsonQuote(sm.name(r.file)) : std::string("null");
  };
  uint32_t el, ec;
  end_of(d.range, &el, &ec);
  std::string out = "{\"file\":" + file_of(d.range) + ",\"line\":" + std::to_string(d.range.line) +
                    ",\"column\":" + std::to_string(d.range.col) +
                    ",\"end_line\":" + std::to_string(el) +
                    ",\"end_column\":" + std::to_string(ec) + ",\"severity\":\"" +
                    std::string(SeverityName(d.severity)) + "\",\"kind\":\"" +
                    std::string(KindId(d.kind)) + "\",\"message\":" + JsonQuote(d.message) +
                    ",\"help\":" + (d.help ? JsonQuote(*d.help) : "null") + ",\"fixit\":";
  if (d.fixit) {
    uint32_t fl, fc;
    end_of(d.fixit->range, &fl, &fc);
    out += "{\"line\":" + std::to_string(d.fixit->range.line) +
           ",\"column\":" + std::to_string(d.fixit->range.col) +
           ",\"end_line\":" + std::to_string(fl) + ",\"end_column\":" + std::to_string(fc) +
           ",\"replacement\":" + JsonQuote(d.fixit->replacement) + "}";
  } else {
    out += "null";
  }
  out += ",\"notes\":[";
  for (size_t i = 0; i < d.notes.size(); ++i) {
    const Note& n = d.notes[i];
    if (i) out += ",";
    out += "{\"file\":" + file_of(n.range) + ",\"line\":" + std::to_string(n.range.line) +
           ",\"column\":" + std::to_string(n.range.col) + ",\"message\":" + JsonQuote(n.message) +
           "}";
  }
  return out + "]}\n";
}

}  // namespace flow::diag
