#include "diag/diagnostic.h"

namespace flow::diag {

Diagnostic& DiagnosticEngine::Report(Kind kind, SourceRange range, std::string message) {
  Severity severity = Info(kind).severity;
  if (severity == Severity::kError) {
    ++errors_;
    if (errors_ > limit_ + 1) {
      scratch_ = Diagnostic{};
      return scratch_;
    }
    if (errors_ == limit_ + 1) {
      diags_.push_back(Diagnostic{Severity::kError,
                                  Kind::kTooManyErrors,
                                  range,
                                  "too many errors; stopping after " + std::to_string(limit_),
                                  {},
                                  std::nullopt,
                                  std::nullopt});
      scratch_ = Diagnostic{};
      return scratch_;
    }
  } else if (severity == Severity::kWarning) {
    ++warnings_;
  }
  diags_.push_back(
      Diagnostic{severity, kind, range, std::move(message), {}, std::nullopt, std::nullopt});
  return diags_.back();
}

}  // namespace flow::diag
