#include "flow/runtime/formats/avro_registry.h"

#include <fmt/format.h>

namespace flow::rt {

Status ConfluentAvroFrame(std::string_view payload, int32_t* schema_id, std::string_view* body) {
  if (payload.size() < 5) {
    return Status::InvalidArgument(
        fmt::format("too short for the Confluent Avro wire format ({} bytes)", payload.size()));
  }
  if (payload[0] != 0) {
    return Status::InvalidArgument(
        fmt::format("not in the Confluent Avro wire format (first byte 0x{:02x}, want 0x00)",
                    static_cast<uint8_t>(payload[0])));
  }
  uint32_t id = 0;
  for (int i = 1; i <= 4; ++i)
    id = (id << 8) | static_cast<uint8_t>(payload[static_cast<size_t>(i)]);
  *schema_id = static_cast<int32_t>(id);
  *body = payload.substr(5);
  return Status::Ok();
}

std::string ConfluentAvroHeader(int32_t id) {
  auto u = static_cast<uint32_t>(id);
  return std::string{'\0', static_cast<char>(u >> 24), static_cast<char>((u >> 16) & 0xff),
                     static_cast<char>((u >> 8) & 0xff), static_cast<char>(u & 0xff)};
}

Result<std::string> AvroSinkHeader(const std::string& registry_url, const std::string& credentials,
                                   const std::string& subject, const std::string& schema) {
  SchemaRegistryOptions options;
  options.credentials = credentials;
  auto registry = SchemaRegistry::Make(registry_url, options);
  if (!registry.ok()) return registry.status();
  auto id = (*registry)->RegisterAvro(subject, schema);
  if (!id.ok()) return id.status();
  return ConfluentAvroHeader(*id);
}

Result<std::shared_ptr<AvroReader>> AvroReader::Make(const std::string& registry_url,
                                                     const std::string& credentials,
                                                     std::string_view reader_schema) {
  SchemaRegistryOptions options;
  options.credentials = credentials;
  auto registry = SchemaRegistry::Make(registry_url, options);
  if (!registry.ok()) return registry.status();
  auto reader = AvroSchema::Parse(reader_schema);
  if (!reader.ok())
    return Status::Internal("the generated Avro reader schema: " + reader.status().message());
  return std::shared_ptr<AvroReader>(new AvroReader(std::move(*registry), std::move(*reader)));
}

Result<std::shared_ptr<const AvroResolution>> AvroReader::Resolution(int32_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = by_id_.find(id); it != by_id_.end()) return it->second;
  auto text = registry_->AvroSchemaById(id);
  if (!text.ok() && text.status().code() == StatusCode::kUnavailable) return text.status();
  auto resolve = [&]() -> Result<std::shared_ptr<const AvroResolution>> {
    if (!text.ok()) return text.status();
    auto writer = AvroSchema::Parse(*text);
    if (!writer.ok())
      return Status::InvalidArgument(
          fmt::format("writer schema id {}: {}", id, writer.status().message()));
    auto resolution = AvroResolution::Make(std::move(*writer), reader_);
    if (!resolution.ok()) {
      return Status::InvalidArgument(
          fmt::format("writer schema id {} does not fit the script's schema: {}", id,
                      resolution.status().message()));
    }
    return resolution;
  };
  return by_id_.emplace(id, resolve()).first->second;
}

}  // namespace flow::rt
