#pragma once
// `format protobuf` and the schema registry. Records are in Confluent's Protobuf wire format:
// byte 0 is 0, bytes 1-4 the writer schema's id (big-endian), then the message indexes that pick
// the message type in the schema's .proto file (a zigzag varint count, then that many zigzag
// varint indexes; a count of 0 stands for {0}, the file's first message), then the message.
//
// ProtobufReader: what a source's subtasks share: the registry, the script's reader message, and
// the resolution of each (writer schema id, message indexes) its records name
// (protobuf_schema.h). Resolutions are cached, failures too; kUnavailable (the registry cannot be
// reached) and kPermissionDenied are not: they fail the job, never a record (decoding_source.h).
// Threading: thread-safe; subtasks keep their last resolution to take the lock once per change.

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "flow/runtime/common/status.h"
#include "flow/runtime/formats/protobuf_schema.h"
#include "flow/runtime/formats/schema_registry.h"

namespace flow::rt {

// Takes the message indexes off the front of `body` (after the 5-byte header) into `path`.
// kInvalidArgument: "message indexes: truncated", "message indexes: a count of 300".
[[nodiscard]] Status ConfluentMessageIndexes(std::string_view* body, std::vector<int32_t>* path);

// A sink's header: registers `schema` (.proto text whose first message is the one written) under
// `subject` (default "<topic>-value") before the job starts: the 5-byte header and the message
// index {0} (one 0 byte). Errors as SchemaRegistry::Register.
[[nodiscard]] Result<std::string> ProtobufSinkHeader(const std::string& registry_url,
                                                     const std::string& credentials,
                                                     const std::string& subject,
                                                     const std::string& schema);

// `format protobuf(proto: ..., message: ...)`, without a registry: every record is a plain message
// of `message` in the .proto text `file`, resolved once against the script's `reader_schema`.
// kInvalidArgument when the file does not parse, lacks the message or does not fit the script.
[[nodiscard]] Result<std::shared_ptr<const ProtoResolution>> ProtobufFileResolution(
    std::string_view file, const std::string& message, std::string_view reader_schema);

class ProtobufReader {
 public:
  // `reader_schema`: the generated .proto text whose first message is the script's record.
  // kInvalidArgument for a bad URL; kInternal for a bad reader schema (a bug).
  [[nodiscard]] static Result<std::shared_ptr<ProtobufReader>> Make(const std::string& registry_url,
                                                                    const std::string& credentials,
                                                                    std::string_view reader_schema);

  [[nodiscard]] Result<std::shared_ptr<const ProtoResolution>> Resolution(
      int32_t id, const std::vector<int32_t>& path);

 private:
  ProtobufReader(std::shared_ptr<SchemaRegistry> registry,
                 std::shared_ptr<const ProtoSchema> reader)
      : registry_(std::move(registry)), reader_(std::move(reader)) {}

  std::shared_ptr<SchemaRegistry> registry_;
  std::shared_ptr<const ProtoSchema> reader_;
  std::mutex mu_;
  std::map<int32_t, Result<std::shared_ptr<const ProtoSchema>>> schemas_;
  std::map<std::pair<int32_t, std::vector<int32_t>>, Result<std::shared_ptr<const ProtoResolution>>>
      resolutions_;
};

}  // namespace flow::rt
