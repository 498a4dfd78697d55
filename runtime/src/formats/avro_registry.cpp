#include "flow/runtime/formats/avro_registry.h"

#include <fmt/format.h>

namespace flow::rt {

Result<std::string> AvroSinkHeader(const std::string& registry_url, const std::string& credentials,
                                   const std::string& subject, const std::string& schema) {
  return RegisterForHeader(registry_url, credentials, subject, schema, "AVRO");
}

Result<std::shared_ptr<AvroReader>> AvroReader::Make(const std::string& registry_url,
                                                     const std::string& credentials,
                                                     std::string_view reader_schema) {
  auto registry = MakeSchemaRegistry(registry_url, credentials);
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
