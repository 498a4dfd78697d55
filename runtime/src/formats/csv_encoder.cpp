#include "flow/runtime/formats/csv_encoder.h"

#include <charconv>
#include <cmath>

#include "flow/runtime/formats/value_text.h"

namespace flow::rt {

void CsvEncoder::Text(std::string_view text) {
  Separate();
  bool quote = text.empty();
  for (char c : text) {
    if (c == delimiter_ || c == '"' || c == '\n' || c == '\r') {
      quote = true;
      break;
    }
  }
  if (!quote) {
    out_.append(text);
    return;
  }
  out_.push_back('"');
  for (char c : text) {
    if (c == '"') out_.push_back('"');
    out_.push_back(c);
  }
  out_.push_back('"');
}

void CsvInt::Write(int64_t v, CsvEncoder* e) {
  char buf[24];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, v);
  e->Plain(std::string_view(buf, static_cast<size_t>(ptr - buf)));
}

void CsvFloat::Write(double v, CsvEncoder* e) {
  std::string s;
  AppendDouble(v, &s);
  e->Plain(s);
}

void CsvBool::Write(bool v, CsvEncoder* e) {
  e->Plain(v ? "true" : "false");
}

void CsvString::Write(const std::string& v, CsvEncoder* e) {
  e->Text(v);
}

void CsvBytes::Write(const std::string& v, CsvEncoder* e) {
  std::string s;
  AppendBase64(v, &s);
  e->Text(s);  // quoted when empty, so it stays distinct from null
}

void CsvTimestamp::Write(TimestampMs v, CsvEncoder* e) {
  e->Plain(FormatTimestamp(v));
}

void CsvDuration::Write(DurationMs v, CsvEncoder* e) {
  CsvInt::Write(v, e);
}

}  // namespace flow::rt
