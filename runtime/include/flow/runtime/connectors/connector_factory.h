#pragma once
// Builds raw sources and sinks from the string options of a script's connector clause, e.g.
//   source kafka(topic = "clicks", brokers = "127.0.0.1:9092", start = "latest")
// Creating does not connect or touch files (Open does), so flowc can call these to validate
// options at compile time. Option names and defaults: docs/connectors.md.
//
//   kind      source options                                  sink options
//   file      path, max_line_bytes, read_chunk_bytes,         directory, prefix, suffix,
//             skip_empty_lines, quoted_newlines, header_lines roll_bytes, buffer_bytes
//             replay_first_line_on_restore
//   stdin     max_line_bytes, skip_empty_lines,               -
//             quoted_newlines
//   stdout    -                                               buffer_bytes
//   blackhole -                                               (none)
//   kafka     brokers, topic, group_id, start,                brokers, topic, partitioner,
//             isolation, metadata_timeout,                    partition, metadata_timeout,
//             unavailable_timeout, kafka.<librdkafka key>     delivery_timeout, flush_timeout,
//                                                             kafka.<librdkafka key>
// Value syntax: sizes are bytes or with KiB/MiB/GiB ("16MiB"); durations are ms or "10s", "1m";
// booleans true/false; start is earliest|latest|committed; isolation is
// read_committed|read_uncommitted; partitioner is key_hash|explicit.
// The kinds are those of the connector catalog (connector_catalog.h): every source that is not
// a generator, every sink.
// Errors: kInvalidArgument naming the connector and the option: unknown kind (with the catalog's
// list), unknown option (with the list of known ones), missing required option, bad value.
// Thread-safe (no shared state).

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "flow/runtime/connectors/connector.h"

namespace flow::rt {

using ConnectorOptions = std::map<std::string, std::string>;

[[nodiscard]] Result<std::unique_ptr<RawSource>> MakeRawSource(std::string_view kind,
                                                               const ConnectorOptions& options);

// The kinds the factory has builders for. The catalog decides which are offered: a kind it does
// not list is refused even with a builder; the two lists must agree (tested).
std::vector<std::string_view> RawSourceBuilderKinds();
std::vector<std::string_view> RawSinkBuilderKinds();
[[nodiscard]] Result<std::unique_ptr<RawSink>> MakeRawSink(std::string_view kind,
                                                           const ConnectorOptions& options);

// The kinds the factory has builders for. The catalog decides which are offered: a kind it does
// not list is refused even with a builder; the two lists must agree (tested).
std::vector<std::string_view> RawSourceBuilderKinds();
std::vector<std::string_view> RawSinkBuilderKinds();

}  // namespace flow::rt
