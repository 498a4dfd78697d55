#pragma once
// `format avro` and the schema registry. AvroReader: what a source's subtasks share: the registry,
// the script's reader schema,
// and the resolution of each writer schema id its records name (avro_schema.h). Records are in
// Confluent's wire format: byte 0 is 0, bytes 1-4 the writer schema's id (big-endian), then the
// Avro binary body.
//
// Resolutions are cached per id, failures too ("id 7 is not in the registry", "field `age`: the
// writer's string cannot be read as long"): every record with that id gets the same error without
// another request. kUnavailable (the registry cannot be reached) is not cached: it fails the job,
// never a record (decoding_source.h), and the restart tries again.
// Threading: thread-safe; subtasks keep their last resolution to take the lock once per id change.

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "flow/runtime/common/status.h"
#include "flow/runtime/formats/avro_schema.h"
#include "flow/runtime/formats/schema_registry.h"

namespace flow::rt {

// Splits a Confluent-framed payload. kInvalidArgument: "not in the Confluent Avro wire format
// (first byte 0x7b, want 0x00)", "too short for the Confluent Avro wire format (3 bytes)".
[[nodiscard]] inline Status ConfluentAvroFrame(std::string_view payload, int32_t* schema_id,
                                               std::string_view* body) {
  return ConfluentFrame(payload, "Avro", schema_id, body);
}

// A sink's header: registers `schema` (the script's, as JSON) under `subject` (default
// "<topic>-value", Confluent's TopicNameStrategy) before the job starts. `credentials`:
// SchemaRegistryOptions::credentials ("" = none). Errors as SchemaRegistry::RegisterAvro.
[[nodiscard]] Result<std::string> AvroSinkHeader(const std::string& registry_url,
                                                 const std::string& credentials,
                                                 const std::string& subject,
                                                 const std::string& schema);

class AvroReader {
 public:
  // kInvalidArgument for a bad URL or reader schema (the generated one: a bug).
  [[nodiscard]] static Result<std::shared_ptr<AvroReader>> Make(const std::string& registry_url,
                                                                const std::string& credentials,
                                                                std::string_view reader_schema);

  [[nodiscard]] Result<std::shared_ptr<const AvroResolution>> Resolution(int32_t id);

 private:
  AvroReader(std::shared_ptr<SchemaRegistry> registry, AvroSchema reader)
      : registry_(std::move(registry)), reader_(std::move(reader)) {}

  std::shared_ptr<SchemaRegistry> registry_;
  AvroSchema reader_;
  std::mutex mu_;
  std::map<int32_t, Result<std::shared_ptr<const AvroResolution>>> by_id_;
};

}  // namespace flow::rt
