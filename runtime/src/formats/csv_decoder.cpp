#include "flow/runtime/formats/csv_decoder.h"

#include <cstdint>

#include <fmt/format.h>

#include "flow/runtime/formats/value_text.h"

namespace flow::rt {
namespace {

constexpr size_t kAbsent = SIZE_MAX;

std::string Excerpt(std::string_view text) {
  constexpr size_t kMax = 40;
  if (text.size() <= kMax) return std::string(text);
  return std::string(text.substr(0, kMax)) + "...";
}

}  // namespace

namespace csv_internal {

Status TypeError(std::string_view expected, std::string_view text) {
  return Status::InvalidArgument(fmt::format("expected {}, found \"{}\"", expected, Excerpt(text)));
}

Status MissingValue(std::string_view expected) {
  return Status::InvalidArgument(fmt::format("expected {}, found an empty field", expected));
}

bool ParseBool(std::string_view t, bool* out) {
  auto eq = [&](std::string_view w) {
    if (t.size() != w.size()) return false;
    for (size_t i = 0; i < t.size(); ++i) {
      char c = t[i];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      if (c != w[i]) return false;
    }
    return true;
  };
  if (eq("true") || t == "1") {
    *out = true;
    return true;
  }
  if (eq("false") || t == "0") {
    *out = false;
    return true;
  }
  return false;
}

}  // namespace csv_internal

void CsvDecoder::BindPositions(std::span<const std::string_view> field_names) {
  names_.assign(field_names.begin(), field_names.end());
  columns_.resize(names_.size());
  for (size_t i = 0; i < columns_.size(); ++i) columns_[i] = i;
}

Status CsvDecoder::BindHeader(std::string_view header,
                              std::span<const std::string_view> field_names,
                              std::span<const bool> required) {
  names_.assign(field_names.begin(), field_names.end());
  required_.assign(required.begin(), required.end());
  return BindColumns(header);
}

Status CsvDecoder::BindColumns(std::string_view header) {
  // Spreadsheet exports often start with a UTF-8 byte order mark.
  if (header.starts_with("\xEF\xBB\xBF")) header.remove_prefix(3);
  columns_.assign(names_.size(), kAbsent);
  line_ = 1;
  FLOW_RETURN_IF_ERROR(Split(header));
  for (size_t f = 0; f < names_.size(); ++f) {
    for (size_t c = 0; c < cells_.size(); ++c) {
      if (cells_[c].text == names_[f]) {
        columns_[f] = c;
        break;
      }
    }
    if (columns_[f] == kAbsent && f < required_.size() && required_[f]) {
      return Status::InvalidArgument(fmt::format("line 1: header has no column `{}`", names_[f]));
    }
  }
  cells_.clear();
  return Status::Ok();
}

void CsvDecoder::UseHeaderRows(std::span<const std::string_view> field_names,
                               std::span<const bool> required) {
  header_mode_ = true;
  header_bound_ = false;
  names_.assign(field_names.begin(), field_names.end());
  required_.assign(required.begin(), required.end());
}

Result<bool> CsvDecoder::ConsumeHeader(std::string_view record, int64_t line) {
  if (!header_mode_ || line != 1) return false;
  header_bound_ = false;
  FLOW_RETURN_IF_ERROR(BindColumns(record));
  header_bound_ = true;
  return true;
}

Status CsvDecoder::Parse(std::string_view record, int64_t line) {
  if (header_mode_ && !header_bound_) [[unlikely]] {
    return Status::InvalidArgument(
        fmt::format("line {}: no CSV header row (line 1) seen before this record", line));
  }
  line_ = line;
  return Split(record);
}

Status CsvDecoder::Split(std::string_view record) {
  cells_.clear();
  unescaped_.clear();
  // Reserved up front so appending never reallocates under the views stored in cells_.
  unescaped_.reserve(record.size());
  const char* p = record.data();
  const char* end = p + record.size();
  // The record's own line end is not part of the last field.
  if (end > p && end[-1] == '\n') {
    --end;
    if (end > p && end[-1] == '\r') --end;
  }
  while (true) {
    Cell cell;
    cell.present = true;
    if (p < end && *p == '"') {
      cell.quoted = true;
      ++p;
      const char* start = p;
      bool doubled = false;
      size_t begin_out = unescaped_.size();
      while (true) {
        if (p >= end) {
          return Status::InvalidArgument(fmt::format(
              "line {}, column {}: unterminated quoted field", line_, cells_.size() + 1));
        }
        if (*p == '"') {
          if (p + 1 < end && p[1] == '"') {
            if (!doubled) {
              unescaped_.append(start, p + 1);
              doubled = true;
            } else {
              unescaped_.append("\"");
            }
            p += 2;
            start = p;
            continue;
          }
          break;
        }
        if (doubled) unescaped_.push_back(*p);
        ++p;
      }
      if (doubled) {
        cell.text = std::string_view(unescaped_.data() + begin_out, unescaped_.size() - begin_out);
      } else {
        cell.text = std::string_view(start, static_cast<size_t>(p - start));
      }
      ++p;  // closing quote
      if (p < end && *p != delimiter_) {
        return Status::InvalidArgument(
            fmt::format("line {}, column {}: unexpected character after closing quote", line_,
                        cells_.size() + 1));
      }
    } else {
      const char* start = p;
      while (p < end && *p != delimiter_) ++p;
      cell.text = std::string_view(start, static_cast<size_t>(p - start));
    }
    cells_.push_back(cell);
    if (p >= end) break;
    ++p;  // delimiter
  }
  return Status::Ok();
}

Status CsvDecoder::FieldError(size_t field, const Status& inner) const {
  size_t col = field < columns_.size() ? columns_[field] : field;
  std::string name = field < names_.size() ? fmt::format(" (`{}`)", names_[field]) : "";
  if (col == kAbsent) {
    return Status(inner.code(),
                  fmt::format("line {}{}: column not in header: {}", line_, name, inner.message()));
  }
  if (col >= cells_.size()) {
    return Status(inner.code(), fmt::format("line {}, column {}{}: missing (the record has {} "
                                            "columns)",
                                            line_, col + 1, name, cells_.size()));
  }
  return Status(inner.code(),
                fmt::format("line {}, column {}{}: {}", line_, col + 1, name, inner.message()));
}

Status CsvInt::Read(const CsvDecoder::Cell& c, int64_t* out) {
  return CsvReadScalar(c, out, "int", ParseInt64);
}
Status CsvFloat::Read(const CsvDecoder::Cell& c, double* out) {
  return CsvReadScalar(c, out, "float", ParseDouble);
}
Status CsvBool::Read(const CsvDecoder::Cell& c, bool* out) {
  return CsvReadScalar(c, out, "bool", csv_internal::ParseBool);
}
Status CsvBytes::Read(const CsvDecoder::Cell& c, std::string* out) {
  if (!DecodeBase64(c.text, out)) return csv_internal::TypeError("bytes (base64)", c.text);
  return Status::Ok();
}
Status CsvTimestamp::Read(const CsvDecoder::Cell& c, TimestampMs* out) {
  return CsvReadScalar(
      c, out, "timestamp (RFC 3339 or epoch ms)",
      [](std::string_view t, TimestampMs* v) { return ParseTimestamp(t, v) || ParseInt64(t, v); });
}
Status CsvDuration::Read(const CsvDecoder::Cell& c, DurationMs* out) {
  return CsvReadScalar(
      c, out, "duration (ms or like 1h30m)",
      [](std::string_view t, DurationMs* v) { return ParseInt64(t, v) || ParseDuration(t, v); });
}

}  // namespace flow::rt
