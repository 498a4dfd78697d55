#pragma once
// flow::diag::Diagnostic and DiagnosticEngine: what the phases report. A phase never stops at the
// first problem: it reports, substitutes an error value and goes on. Not thread-safe.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "diag/kinds.h"
#include "diag/source_range.h"

namespace flow::diag {

struct Note {
  SourceRange range;  // may be invalid (a note without a location)
  std::string message;
};

// A suggested edit: replace `range` with `replacement`.
struct FixIt {
  SourceRange range;
  std::string replacement;
};

struct Diagnostic {
  Severity severity = Severity::kError;
  Kind kind = Kind::kSyntaxError;
  SourceRange range;
  std::string message;
  std::vector<Note> notes;
  std::optional<std::string> help;  // "did you mean `user`?"
  std::optional<FixIt> fixit;

  Diagnostic& AddNote(SourceRange r, std::string m) {
    notes.push_back({r, std::move(m)});
    return *this;
  }
  Diagnostic& Help(std::string h) {
    help = std::move(h);
    return *this;
  }
};

class DiagnosticEngine {
 public:
  // At most `limit` errors are kept; the next one becomes a single too-many-errors diagnostic and
  // later ones are counted but dropped. Default: 50.
  explicit DiagnosticEngine(size_t limit = 50) : limit_(limit) {}

  // Records a diagnostic with the kind's default severity. The returned reference stays valid
  // until the next Report call; use it to add notes and help.
  Diagnostic& Report(Kind kind, SourceRange range, std::string message);

  const std::vector<Diagnostic>& diagnostics() const { return diags_; }
  size_t error_count() const { return errors_; }
  size_t warning_count() const { return warnings_; }
  bool has_errors() const { return errors_ > 0; }
  // True once the limit is reached; long-running phases may stop early.
  bool saturated() const { return errors_ > limit_; }

 private:
  size_t limit_;
  size_t errors_ = 0;
  size_t warnings_ = 0;
  std::vector<Diagnostic> diags_;
  Diagnostic scratch_;  // receives notes of dropped diagnostics
};

}  // namespace flow::diag
