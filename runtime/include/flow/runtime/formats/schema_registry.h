#pragma once
// A client of a schema registry's REST API as Confluent documents it (GET /schemas/ids/{id},
// POST /subjects/{subject}/versions), which Confluent's Schema Registry and Apicurio Registry's
// ccompat API both serve. The URL is the API's base: "http://127.0.0.1:8081" for Confluent's,
// "http://host:8080/apis/ccompat/v7" for Apicurio's; https uses the system's CA certificates.
// Credentials ("user:password", e.g. a Confluent Cloud API key and secret) go as HTTP basic
// auth; write them as ${NAME} references (common/env_refs.h) so they stay out of scripts.
//
// Schemas by id are cached for the life of the client (ids are immutable), so one request is made
// per id whatever the number of records or subtasks; failures other than "unknown id" are not
// cached. Errors:
//   kUnavailable      the registry cannot be reached or answers 5xx, after `retry_timeout`
//                     of retries: the job's restart policy takes over; records are never
//                     dropped for it (decoding_source.h)
//   kNotFound         no schema has that id (the record's fault)
//   kPermissionDenied the registry refuses the credentials, or wants some (HTTP 401, 403): at
//                     once, without retries
//   kInvalidArgument  a bad URL or credentials setting, a refused registration (409:
//                     incompatible with the subject's earlier versions; 422: an invalid
//                     schema), a schema of another type
// Messages name the registry's URL and what was asked. Threading: thread-safe (one lock).

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "flow/runtime/common/status.h"

namespace flow::rt {

struct SchemaRegistryOptions {
  int64_t request_timeout_ms = 10000;  // Default: 10 s per request
  int64_t retry_timeout_ms = 30000;    // Default: 30 s of retries before kUnavailable
  // "user:password" for HTTP basic auth, ${NAME} references expanded by Make. Default: none.
  std::string credentials{};
};

class SchemaRegistry {
 public:
  // Checks the URL and expands the credentials; connects on first use.
  [[nodiscard]] static Result<std::shared_ptr<SchemaRegistry>> Make(
      const std::string& url, SchemaRegistryOptions options = {});
  ~SchemaRegistry();

  // The schema text of `id`; kInvalidArgument when it is not of `type` (the registry's
  // schemaType: "AVRO", the default when absent, or "PROTOBUF").
  [[nodiscard]] Result<std::string> SchemaById(int32_t id, std::string_view type);
  [[nodiscard]] Result<std::string> AvroSchemaById(int32_t id) { return SchemaById(id, "AVRO"); }
  // Registers (or finds) `schema` of `type` under `subject`; its id.
  [[nodiscard]] Result<int32_t> Register(const std::string& subject, const std::string& schema,
                                         std::string_view type);
  [[nodiscard]] Result<int32_t> RegisterAvro(const std::string& subject,
                                             const std::string& schema) {
    return Register(subject, schema, "AVRO");
  }

  const std::string& url() const { return url_; }

 private:
  struct Client;
  SchemaRegistry(std::string url, std::string origin, std::string base,
                 SchemaRegistryOptions options);
  // One request with retries: the HTTP status and body, or kUnavailable.
  Result<std::pair<int, std::string>> Call(const std::string& method, const std::string& path,
                                           const std::string& body);

  std::string url_;
  std::string origin_;  // scheme://host:port
  std::string base_;    // the path prefix, without a trailing '/'
  SchemaRegistryOptions options_;
  std::string user_, password_;  // basic auth; empty user: none
  std::mutex mu_;
  std::unique_ptr<Client> client_;
  std::map<int32_t, std::pair<std::string, std::string>> by_id_;  // id -> (type, schema)
};

// A client for a format's reader or sink: Make with `credentials` ("" = none).
[[nodiscard]] Result<std::shared_ptr<SchemaRegistry>> MakeSchemaRegistry(
    const std::string& url, const std::string& credentials);
// Registers `schema` of `type` under `subject` with a client of its own (a sink, before its job
// starts): the 5-byte header of the payloads written with it. Errors as Register.
[[nodiscard]] Result<std::string> RegisterForHeader(const std::string& url,
                                                    const std::string& credentials,
                                                    const std::string& subject,
                                                    const std::string& schema,
                                                    std::string_view type);

// Confluent's wire format: byte 0 is 0, bytes 1-4 the schema id (big-endian), then the body
// (for Protobuf, message indexes first). kInvalidArgument: "not in the Confluent Avro wire format
// (first byte 0x7b, want 0x00)", "too short for the Confluent Avro wire format (3 bytes)".
[[nodiscard]] Status ConfluentFrame(std::string_view payload, std::string_view format,
                                    int32_t* schema_id, std::string_view* body);
// The 5-byte header of a payload written with schema `id`.
std::string ConfluentHeader(int32_t id);

}  // namespace flow::rt
