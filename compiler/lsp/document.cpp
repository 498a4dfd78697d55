#include "lsp/document.h"

#include "driver/frontend.h"

namespace flow::lsp {

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
  a->program = driver::CheckText(path, text, a->sm, diags);
  a->file = static_cast<uint32_t>(a->sm.file_count() - 1);
  a->diagnostics = diags.diagnostics();
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
