#pragma once
// The start offsets a Kafka source resolved at its job's first start (`start: latest|earliest|
// committed`), kept in the connector's durable dir (ConnectorContext::durable_dir) so that a run
// that crashed before its first checkpoint restarts from the same offsets instead of resolving
// `latest` again and skipping what was produced in between (docs/connectors.md, "Kafka").
//
// File <dir>/kafka-start-<topic>, text:
//   flow-kafka-start 1
//   topic <topic>
//   <partition> <offset>      one line per partition of the topic at the first start
//   end
// Written once per job and topic: each subtask writes a temporary file, fsyncs it and link()s
// it to the name, which fails when the name exists; the first link wins and the others read the
// winner's file. So every subtask of every run (at any parallelism) uses one resolution.

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "flow/runtime/common/status.h"

namespace flow::rt {

// The recorded offsets, or nullopt when none were recorded yet. kCorruption naming the file when
// it does not parse (the source must not guess), kIoError when it cannot be read.
[[nodiscard]] Result<std::optional<std::map<int32_t, int64_t>>> ReadKafkaStartOffsets(
    const std::string& dir, const std::string& topic);

// Records `offsets` unless offsets are recorded already; returns the recorded ones (this call's or
// an earlier winner's). Creates `dir`. kIoError naming the path on failure.
[[nodiscard]] Result<std::map<int32_t, int64_t>> RecordKafkaStartOffsets(
    const std::string& dir, const std::string& topic, const std::map<int32_t, int64_t>& offsets);

}  // namespace flow::rt
