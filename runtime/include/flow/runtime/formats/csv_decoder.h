#pragma once
// CsvDecoder: RFC 4180 CSV, one record per payload. Fields are separated by the delimiter
// (default ','); a field in double quotes may contain the delimiter, line breaks and doubled
// quotes (""). A trailing "\r\n" or "\n" is ignored. Columns map to schema fields either by
// position (field i = column i) or by a header row (BindHeader). The generated shape:
//
//   inline constexpr std::array<std::string_view, 3> kClickCsv{"user", "bytes", "ref"};
//   // once per decoder: d.BindPositions(kClickCsv) or d.BindHeader(header_line, kClickCsv)
//   Status DecodeClickCsv(CsvDecoder& d, std::string_view payload, int64_t line, Click* out) {
//     FLOW_RETURN_IF_ERROR(d.Parse(payload, line));
//     FLOW_RETURN_IF_ERROR(d.Read<CsvString>(0, &out->user));
//     FLOW_RETURN_IF_ERROR(d.Read<CsvInt>(1, &out->bytes));
//     FLOW_RETURN_IF_ERROR(d.Read<CsvNullable<CsvString>>(2, &out->ref));
//     return Status::Ok();
//   }
//
// Value text (codecs below): int and float in decimal; bool true/false/1/0 (any case); timestamp
// RFC 3339 or integer epoch ms; duration ms or "1h30m"; bytes base64. Null: an empty unquoted
// field (or a missing trailing column) is null for T? fields; a quoted empty field "" is the
// empty string. Lists are not supported in CSV.
// Errors (kInvalidArgument) name line, column and field:
//   "line 7, column 2 (`bytes`): expected int, found \"abc\"",
//   "line 7, column 3 (`ref`): unterminated quoted field", "line 1: header has no column `url`".
// Threading: one decoder per thread; reuse it for every record (no allocation per record once
// buffers have grown).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "flow/runtime/common/status.h"
#include "flow/runtime/common/time.h"

namespace flow::rt {

class CsvDecoder {
 public:
  explicit CsvDecoder(char delimiter = ',') : delimiter_(delimiter) {}

  // Schema field i is column i.
  void BindPositions(std::span<const std::string_view> field_names);
  // Schema fields are found by name in `header` (one CSV record). Missing columns are an error
  // only when `required[i]` is true (non-nullable fields); missing nullable fields read as null.
  [[nodiscard]] Status BindHeader(std::string_view header,
                                  std::span<const std::string_view> field_names,
                                  std::span<const bool> required);

  // Header-row mode, for sources that deliver each file's header as its line 1 (FileSource with
  // header_lines = 0 and replay_first_line_on_restore = true): ConsumeHeader binds the columns
  // from every line-1 record, so files with different column orders work.
  void UseHeaderRows(std::span<const std::string_view> field_names, std::span<const bool> required);
  // In header-row mode, when `line` is 1: binds the columns from `record` and returns true (the
  // record is not data). Otherwise returns false. Errors as BindHeader.
  [[nodiscard]] Result<bool> ConsumeHeader(std::string_view record, int64_t line);

  // Splits `record` into fields; `line` (the record's first line) is used in error messages.
  // In header-row mode, a record before any header is kInvalidArgument.
  [[nodiscard]] Status Parse(std::string_view record, int64_t line);

  // Reads schema field `field` with `Codec`.
  template <typename Codec, typename V>
  [[nodiscard]] Status Read(size_t field, V* out) {
    const Cell* cell = CellFor(field);
    Status s = Codec::Read(cell == nullptr ? Cell{} : *cell, out);
    if (!s.ok()) [[unlikely]]
      return FieldError(field, s);
    return s;
  }

  // Fields of the last parsed record.
  size_t column_count() const { return cells_.size(); }
  std::string_view column(size_t i) const { return cells_[i].text; }

  struct Cell {
    std::string_view text;
    bool quoted = false;
    bool present = false;  // false for a column the record does not have
  };

 private:
  const Cell* CellFor(size_t field) const {
    size_t col = field < columns_.size() ? columns_[field] : field;
    return col < cells_.size() ? &cells_[col] : nullptr;
  }
  Status FieldError(size_t field, const Status& inner) const;
  Status Split(std::string_view record);
  Status BindColumns(std::string_view header);

  char delimiter_;
  bool header_mode_ = false;
  bool header_bound_ = false;
  std::vector<bool> required_;
  std::vector<std::string_view> names_;
  std::vector<size_t> columns_;  // schema field -> column (SIZE_MAX: absent from the header)
  std::vector<Cell> cells_;
  std::string unescaped_;  // storage for quoted fields with doubled quotes
  int64_t line_ = 0;
};

namespace csv_internal {
Status TypeError(std::string_view expected, std::string_view text);
Status MissingValue(std::string_view expected);
bool ParseBool(std::string_view text, bool* out);
}  // namespace csv_internal

// Codecs: static Status Read(const CsvDecoder::Cell&, Value*) and static void Write(const Value&,
// CsvEncoder*) (csv_encoder.h).
class CsvEncoder;

template <typename Value, typename Parse>
Status CsvReadScalar(const CsvDecoder::Cell& c, Value* out, std::string_view expected, Parse p) {
  if (!c.present || (c.text.empty() && !c.quoted)) [[unlikely]] {
    return csv_internal::MissingValue(expected);
  }
  if (!p(c.text, out)) [[unlikely]]
    return csv_internal::TypeError(expected, c.text);
  return Status::Ok();
}

struct CsvInt {
  using Value = int64_t;
  static Status Read(const CsvDecoder::Cell& c, int64_t* out);
  static void Write(int64_t v, CsvEncoder* e);
};
struct CsvFloat {
  using Value = double;
  static Status Read(const CsvDecoder::Cell& c, double* out);
  static void Write(double v, CsvEncoder* e);
};
struct CsvBool {
  using Value = bool;
  static Status Read(const CsvDecoder::Cell& c, bool* out);
  static void Write(bool v, CsvEncoder* e);
};
struct CsvString {
  using Value = std::string;
  // A missing column or empty field is the empty string.
  static Status Read(const CsvDecoder::Cell& c, std::string* out) {
    out->assign(c.text.data(), c.text.size());
    return Status::Ok();
  }
  static void Write(const std::string& v, CsvEncoder* e);
};
struct CsvBytes {
  using Value = std::string;
  static Status Read(const CsvDecoder::Cell& c, std::string* out);
  static void Write(const std::string& v, CsvEncoder* e);
};
struct CsvTimestamp {
  using Value = TimestampMs;
  static Status Read(const CsvDecoder::Cell& c, TimestampMs* out);
  static void Write(TimestampMs v, CsvEncoder* e);
};
struct CsvDuration {
  using Value = DurationMs;
  static Status Read(const CsvDecoder::Cell& c, DurationMs* out);
  static void Write(DurationMs v, CsvEncoder* e);
};

template <typename Elem>
struct CsvNullable {
  using Value = std::optional<typename Elem::Value>;
  static Status Read(const CsvDecoder::Cell& c, Value* out) {
    if (!c.present || (c.text.empty() && !c.quoted)) {
      out->reset();
      return Status::Ok();
    }
    if (!out->has_value()) out->emplace();
    return Elem::Read(c, &**out);
  }
  static void Write(const Value& v, CsvEncoder* e);
};

}  // namespace flow::rt
