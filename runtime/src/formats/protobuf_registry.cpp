#include "flow/runtime/formats/protobuf_registry.h"

#include <fmt/format.h>
#include <google/protobuf/descriptor.h>

#include "flow/runtime/formats/protobuf.h"

namespace flow::rt {

Status ConfluentMessageIndexes(std::string_view* body, std::vector<int32_t>* path) {
  path->clear();
  // The common case, the file's first message, is one 0 byte.
  if (!body->empty() && (*body)[0] == 0) {
    path->push_back(0);
    body->remove_prefix(1);
    return Status::Ok();
  }
  ProtoIn in(*body);
  auto next = [&](int64_t* v) -> Status {
    uint64_t z;
    Status s = in.Varint(&z);
    if (!s.ok()) return Status::InvalidArgument("message indexes: " + s.message());
    *v = static_cast<int64_t>(z >> 1) ^ -static_cast<int64_t>(z & 1);
    return Status::Ok();
  };
  int64_t count = 0;
  FLOW_RETURN_IF_ERROR(next(&count));
  // Messages nest; a path deeper than the parser's own limit is garbage.
  if (count < 0 || count > 100)
    return Status::InvalidArgument(fmt::format("message indexes: a count of {}", count));
  for (int64_t i = 0; i < count; ++i) {
    int64_t v = 0;
    FLOW_RETURN_IF_ERROR(next(&v));
    if (v < 0 || v > INT32_MAX)
      return Status::InvalidArgument(fmt::format("message indexes: an index of {}", v));
    path->push_back(static_cast<int32_t>(v));
  }
  if (path->empty()) path->push_back(0);
  *body = body->substr(body->size() - in.remaining());
  return Status::Ok();
}

Result<std::string> ProtobufSinkHeader(const std::string& registry_url,
                                       const std::string& credentials, const std::string& subject,
                                       const std::string& schema) {
  auto header = RegisterForHeader(registry_url, credentials, subject, schema, "PROTOBUF");
  if (!header.ok()) return header.status();
  return *header + std::string(1, '\0');  // message index {0}
}

Result<std::shared_ptr<ProtobufReader>> ProtobufReader::Make(const std::string& registry_url,
                                                             const std::string& credentials,
                                                             std::string_view reader_schema) {
  auto registry = MakeSchemaRegistry(registry_url, credentials);
  if (!registry.ok()) return registry.status();
  auto reader = ProtoSchema::Parse(reader_schema);
  if (!reader.ok())
    return Status::Internal("the generated Protobuf reader schema: " + reader.status().message());
  return std::shared_ptr<ProtobufReader>(
      new ProtobufReader(std::move(*registry), std::move(*reader)));
}

Result<std::shared_ptr<const ProtoResolution>> ProtobufReader::Resolution(
    int32_t id, const std::vector<int32_t>& path) {
  std::lock_guard<std::mutex> lock(mu_);
  auto key = std::make_pair(id, path);
  if (auto it = resolutions_.find(key); it != resolutions_.end()) return it->second;
  auto schema_it = schemas_.find(id);
  if (schema_it == schemas_.end()) {
    auto text = registry_->SchemaById(id, "PROTOBUF");
    if (!text.ok() && (text.status().code() == StatusCode::kUnavailable ||
                       text.status().code() == StatusCode::kPermissionDenied)) {
      return text.status();
    }
    Result<std::shared_ptr<const ProtoSchema>> parsed =
        text.ok() ? ProtoSchema::Parse(*text)
                  : Result<std::shared_ptr<const ProtoSchema>>(text.status());
    if (!parsed.ok() && text.ok()) {
      parsed = Status::InvalidArgument(
          fmt::format("writer schema id {}: {}", id, parsed.status().message()));
    }
    schema_it = schemas_.emplace(id, std::move(parsed)).first;
  }
  auto resolve = [&]() -> Result<std::shared_ptr<const ProtoResolution>> {
    if (!schema_it->second.ok()) return schema_it->second.status();
    const std::shared_ptr<const ProtoSchema>& writer = *schema_it->second;
    auto message = writer->MessageAt(path);
    if (!message.ok()) {
      return Status::InvalidArgument(
          fmt::format("writer schema id {}: {}", id, message.status().message()));
    }
    auto resolution = ProtoResolution::Make(writer, *message, reader_->file()->message_type(0));
    if (!resolution.ok()) {
      return Status::InvalidArgument(
          fmt::format("writer schema id {} (message `{}`) does not fit the script's schema: {}", id,
                      (*message)->full_name(), resolution.status().message()));
    }
    return resolution;
  };
  return resolutions_.emplace(std::move(key), resolve()).first->second;
}

Result<std::shared_ptr<const ProtoResolution>> ProtobufFileResolution(
    std::string_view file, const std::string& message, std::string_view reader_schema) {
  auto writer = ProtoSchema::Parse(file);
  if (!writer.ok()) return writer.status();
  auto m = FindProtoMessage(**writer, message);
  if (!m.ok()) return m.status();
  auto reader = ProtoSchema::Parse(reader_schema);
  if (!reader.ok())
    return Status::Internal("the generated Protobuf reader schema: " + reader.status().message());
  auto r = ProtoResolution::Make(*writer, *m, (*reader)->file()->message_type(0));
  if (!r.ok()) {
    return Status::InvalidArgument(
        fmt::format("message `{}` of the .proto does not fit the "
                    "script's schema: {}",
                    message, r.status().message()));
  }
  return r;
}

}  // namespace flow::rt
