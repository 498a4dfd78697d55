#include "lsp/document.h"

#include <algorithm>
#include <string_view>

#include "frontend/frontend.h"

namespace flow::lsp {
namespace {

bool IsStatementStart(std::string_view line) {
  if (line.empty() || line[0] == ' ' || line[0] == '\t' || line[0] == '\r') return false;
  // A closing bracket in column 0 ends the statement above (`}` of a schema); a comment belongs
  // to no statement.
  return line[0] != '}' && line[0] != ')' && line[0] != ']' && line.rfind("//", 0) != 0;
}

// Replaces every byte of the top-level statement around `offset` with a space, keeping line
// breaks, so offsets, lines and the columns of other lines stay as they were. A statement starts
// at a line beginning in column 0 (as `flowc fmt` writes them) and runs to the next such line.
// Returns false when there was nothing left to blank.
bool BlankStatementAt(std::string* text, uint32_t offset) {
  std::string& t = *text;
  size_t at = std::min<size_t>(offset, t.size());
  auto line_start = [&](size_t i) {
    size_t nl = i == 0 ? std::string::npos : t.rfind('\n', i - 1);
    return nl == std::string::npos ? size_t{0} : nl + 1;
  };
  auto line_of = [&](size_t start) {
    size_t nl = t.find('\n', start);
    return std::string_view(t).substr(start, (nl == std::string::npos ? t.size() : nl) - start);
  };
  size_t begin = line_start(at);
  while (begin > 0 && !IsStatementStart(line_of(begin))) begin = line_start(begin - 1);
  size_t end = t.find('\n', at);
  while (end != std::string::npos && end + 1 < t.size() && !IsStatementStart(line_of(end + 1)))
    end = t.find('\n', end + 1);
  if (end == std::string::npos) end = t.size();
  bool changed = false;
  for (size_t i = begin; i < end; ++i) {
    if (t[i] != '\n' && t[i] != ' ') {
      t[i] = ' ';
      changed = true;
    }
  }
  return changed;
}

// After syntax errors: the program of the statements that have none, checked from a copy of the
// text with the broken ones blanked out (tried a few times, as blanking may reveal another).
void AnalyzeTolerantly(const std::string& path, const std::string& text,
                       const std::vector<diag::Diagnostic>& syntax, Analysis* a) {
  std::string blanked = text;
  std::vector<diag::Diagnostic> errors = syntax;
  for (int attempt = 0; attempt < 8; ++attempt) {
    bool changed = false;
    for (const diag::Diagnostic& d : errors) {
      if (d.severity == diag::Severity::kError)
        changed |= BlankStatementAt(&blanked, d.range.begin);
    }
    if (!changed) return;
    auto sm = std::make_unique<diag::SourceManager>();
    diag::DiagnosticEngine diags;
    frontend::Options options;
    options.until = frontend::Stage::kCheck;
    frontend::Compilation c = frontend::CompileText(path, blanked, *sm, diags, options);
    if (c.program != nullptr) {
      a->program = std::move(c.program);
      a->tolerant_sm = std::move(sm);
      return;
    }
    errors = diags.diagnostics();
  }
}

}  // namespace

std::shared_ptr<const Analysis> Analyze(const std::string& path, const std::string& text) {
  auto a = std::make_shared<Analysis>();
  if (text.size() > kMaxDocumentBytes) {
    a->file = a->sm.AddFile(path, "");
    diag::Diagnostic d;
    d.kind = diag::Kind::kIoError;
    d.range = a->sm.Range(a->file, 0, 0);
    d.message = "the document is " + std::to_string(text.size() >> 20) +
                " MiB, larger than the language server's limit of " +
                std::to_string(kMaxDocumentBytes >> 20) + " MiB; run `flowc check` on it instead";
    a->diagnostics.push_back(std::move(d));
    a->lines = std::make_unique<LineIndex>(a->text());
    return a;
  }
  diag::DiagnosticEngine diags;
  // The whole pipeline short of the C++ compiler, so the editor shows what `flowc build` would
  // refuse (an unsupported construct) as well as what the checker finds.
  frontend::Compilation c = frontend::CompileText(path, text, a->sm, diags);
  a->program = std::move(c.program);
  a->file = c.file;
  a->diagnostics = diags.diagnostics();
  if (a->program == nullptr && diags.has_errors()) {
    AnalyzeTolerantly(path, text, a->diagnostics, a.get());
  }
  a->lines = std::make_unique<LineIndex>(a->text());
  if (a->program) a->occurrences = CollectOccurrences(*a->program);
  return a;
}

std::string UriToPath(const std::string& uri) {
  constexpr std::string_view kScheme = "file://";
  if (uri.compare(0, kScheme.size(), kScheme) != 0) return uri;
  std::string rest = uri.substr(kScheme.size());
  // file://host/path: only an empty host or localhost name a local file.
  size_t slash = rest.find('/');
  if (slash == std::string::npos) return uri;
  rest = rest.substr(slash);
  std::string out;
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] == '%' && i + 2 < rest.size() && hex(rest[i + 1]) >= 0 && hex(rest[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex(rest[i + 1]) * 16 + hex(rest[i + 2])));
      i += 2;
    } else {
      out.push_back(rest[i]);
    }
  }
  return out;
}

}  // namespace flow::lsp
