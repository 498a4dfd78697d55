#include "flow/runtime/exec/decoding_source.h"

#include <fmt/format.h>

#include "flow/runtime/common/utf8.h"
#include "flow/runtime/exec/encoding_sink.h"
#include "flow/runtime/exec/record_decoders.h"
#include "flow/runtime/formats/json_codecs.h"

namespace flow::exec {

void EncodeDeadLetter(const std::string& source, const std::string& position,
                      const rt::Status& error, std::string_view raw, rt::JsonEncoder* out) {
  out->BeginObject();
  out->Key("source");
  out->String(source);
  out->Key("position");
  out->String(position);
  out->Key("error");
  out->String(error.message());
  out->Key("raw");
  // The record's line end is not part of it.
  if (raw.ends_with('\n')) raw.remove_suffix(1);
  if (raw.ends_with('\r')) raw.remove_suffix(1);
  out->String(raw);
  out->EndObject();
}

rt::Status MetadataBytes(std::string_view value, bool utf8, std::string_view what,
                         std::string* out) {
  if (utf8 && !rt::IsValidUtf8(value)) {
    return rt::Status::InvalidArgument(
        fmt::format("the message's {} is not valid UTF-8 (declare the field as bytes)", what));
  }
  out->assign(value.data(), value.size());
  return rt::Status::Ok();
}

rt::Status MissingMetadata(std::string_view what, std::string_view field) {
  return rt::Status::InvalidArgument(fmt::format(
      "the message has no {}, and field `{}` is not nullable (declare it with `?`)", what, field));
}

rt::Result<rt::ConnectorOptions> SourceOptions(const std::string& kind, rt::ConnectorOptions script,
                                               const std::string& format, bool csv_header) {
  rt::ConnectorOptions out;
  for (auto& [name, value] : script) {
    if (kind == "kafka" && name == "group") {
      out["group_id"] = std::move(value);
    } else if (kind == "kafka" && name == "read_committed") {
      if (value != "true" && value != "false") {
        return rt::Status::InvalidArgument(fmt::format(
            "kafka source: argument `read_committed` must be true or false, not \"{}\"", value));
      }
      out["isolation"] = value == "true" ? "read_committed" : "read_uncommitted";
    } else {
      out[name] = std::move(value);
    }
  }
  if (format == "csv") {
    if (kind == "kafka" && csv_header) {
      return rt::Status::InvalidArgument(
          "kafka source: `format csv(header: true)` is not supported: a message has no header row; "
          "map columns by position");
    }
    if (kind == "file" || kind == "stdin") out["quoted_newlines"] = "true";
    if (kind == "file" && csv_header) out["replay_first_line_on_restore"] = "true";
  }
  return out;
}

rt::ConnectorOptions SinkOptions(const std::string& kind, rt::ConnectorOptions script) {
  if (kind == "file") {
    auto it = script.find("path");
    if (it != script.end()) {
      script["directory"] = std::move(it->second);
      script.erase("path");
    }
  }
  return script;
}

rt::Result<char> CsvDelimiter(std::string_view text) {
  if (text.size() != 1 || text[0] == '"' || text[0] == '\r' || text[0] == '\n') {
    return rt::Status::InvalidArgument(
        fmt::format("format csv: `delimiter` must be one character other than a quote or a line "
                    "break, not \"{}\"",
                    text));
  }
  return text[0];
}

}  // namespace flow::exec
