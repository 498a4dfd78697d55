#pragma once
// Raw connector factories for generated code, built from a connector kind + options (the
// connector factory). The options are validated at once (kInvalidArgument naming the connector
// and option, before the job starts); the factories build one connector per subtask call.
// Typed sources and sinks over them: decoding_source.h, encoding_sink.h.

#include <memory>
#include <string>
#include <vector>

#include "flow/runtime/connectors/connector_factory.h"
#include "flow/runtime/engine/raw_adapters.h"

namespace flow::exec {

// The text of a connector option value (script arguments are literals or params).
inline std::string OptionText(const std::string& v) {
  return v;
}
inline std::string OptionText(bool v) {
  return v ? "true" : "false";
}
inline std::string OptionText(int64_t v) {
  return std::to_string(v);
}
std::string OptionText(double v);
// A list (kafka's `properties: ["key=value", ...]`): one entry per line.
std::string OptionText(const std::vector<std::string>& v);

// Checks `kind`/`options` now and returns a factory that builds one RawSource per call.
[[nodiscard]] rt::Result<rt::RawSourceFactory> RawSourceFactoryFor(std::string kind,
                                                                   rt::ConnectorOptions options);
[[nodiscard]] rt::Result<rt::RawSinkFactory> RawSinkFactoryFor(std::string kind,
                                                               rt::ConnectorOptions options);

}  // namespace flow::exec
