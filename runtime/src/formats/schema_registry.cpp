#include "flow/runtime/formats/schema_registry.h"

// json_decoder.h pins simdjson's configuration macros: include it before simdjson is used.
#include "flow/runtime/formats/json_decoder.h"

#include <fmt/format.h>
#include <httplib.h>

#include <chrono>
#include <thread>

#include "flow/runtime/common/env_refs.h"
#include "flow/runtime/formats/json_encoder.h"

namespace flow::rt {

struct SchemaRegistry::Client {
  explicit Client(const std::string& origin) : http(origin) {}
  httplib::Client http;
};

namespace {

constexpr const char* kContentType = "application/vnd.schemaregistry.v1+json";

// A path segment: everything but unreserved characters as %XX.
std::string PathSegment(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

// A response body parsed as JSON; `ok` is false when it is not JSON.
struct JsonBody {
  explicit JsonBody(const std::string& body) : text(body) {
    ok = parser.parse(text).get(doc) == simdjson::SUCCESS;
  }
  simdjson::dom::parser parser;
  simdjson::padded_string text;
  simdjson::dom::element doc;
  bool ok = false;
};

// The registry's own error text ({"error_code": 40403, "message": "..."}), or the body.
std::string ErrorText(const std::string& body) {
  JsonBody json(body);
  std::string_view message;
  if (json.ok && json.doc["message"].get_string().get(message) == simdjson::SUCCESS) {
    return std::string(message);
  }
  return body.size() > 200 ? body.substr(0, 200) + "..." : body;
}

// `url` with a `user:password@` before the host cut out: what messages may show of it.
std::string Redacted(const std::string& url) {
  const size_t scheme = url.find("://");
  const size_t start = scheme == std::string::npos ? 0 : scheme + 3;
  const size_t end = url.find_first_of("/?#", start);
  const size_t at = url.rfind('@', end == std::string::npos || end == 0 ? end : end - 1);
  if (at == std::string::npos || at < start) return url;
  return url.substr(0, start) + "...@" + url.substr(at + 1);
}

}  // namespace

Result<std::shared_ptr<SchemaRegistry>> SchemaRegistry::Make(const std::string& url,
                                                             SchemaRegistryOptions options) {
  auto bad = [&](std::string_view why) {
    return Status::InvalidArgument(
        fmt::format("schema registry URL \"{}\": {}", Redacted(url), why));
  };
  size_t scheme = url.find("://");
  if (scheme == std::string::npos ||
      (url.compare(0, scheme, "http") != 0 && url.compare(0, scheme, "https") != 0)) {
    return bad("want http://host:port[/path] or https://...");
  }
  size_t slash = url.find('/', scheme + 3);
  std::string origin = url.substr(0, slash);
  std::string base = slash == std::string::npos ? "" : url.substr(slash);
  while (!base.empty() && base.back() == '/') base.pop_back();
  if (origin.size() == scheme + 3) return bad("no host");
  for (char c : url) {
    if (static_cast<unsigned char>(c) <= ' ' || c == '?' || c == '#')
      return bad("spaces, control characters, '?' and '#' are not allowed");
  }
  if (origin.find('@') != std::string::npos) {
    return bad(
        "credentials in the URL would show in logs; give them as "
        "`credentials: \"${USER}:${PASSWORD}\"`");
  }
  std::string user, password;
  if (!options.credentials.empty()) {
    auto expanded =
        ExpandEnvRefs(options.credentials, fmt::format("schema registry {}: credentials", url));
    if (!expanded.ok()) return expanded.status();
    size_t colon = expanded->find(':');
    if (colon == std::string::npos || colon == 0) {
      // Never echo them: the value is a secret.
      return Status::InvalidArgument(fmt::format(
          "schema registry {}: credentials must be \"user:password\" (an API key and its secret)",
          url));
    }
    user = expanded->substr(0, colon);
    password = expanded->substr(colon + 1);
    options.credentials.clear();
  }
  auto registry = std::shared_ptr<SchemaRegistry>(
      new SchemaRegistry(url, std::move(origin), std::move(base), options));
  registry->user_ = std::move(user);
  registry->password_ = std::move(password);
  return registry;
}

SchemaRegistry::SchemaRegistry(std::string url, std::string origin, std::string base,
                               SchemaRegistryOptions options)
    : url_(std::move(url)), origin_(std::move(origin)), base_(std::move(base)), options_(options) {}

SchemaRegistry::~SchemaRegistry() = default;

Result<std::pair<int, std::string>> SchemaRegistry::Call(const std::string& method,
                                                         const std::string& path,
                                                         const std::string& body) {
  using Clock = std::chrono::steady_clock;
  auto deadline = Clock::now() + std::chrono::milliseconds(options_.retry_timeout_ms);
  auto backoff = std::chrono::milliseconds(100);
  std::string last;
  for (;;) {
    if (client_ == nullptr) {
      client_ = std::make_unique<Client>(origin_);
      auto timeout = std::chrono::milliseconds(options_.request_timeout_ms);
      client_->http.set_connection_timeout(timeout);
      client_->http.set_read_timeout(timeout);
      client_->http.set_write_timeout(timeout);
      if (!user_.empty()) client_->http.set_basic_auth(user_, password_);
    }
    httplib::Headers headers = {{"Accept", kContentType}};
    httplib::Result res = method == "GET"
                              ? client_->http.Get(base_ + path, headers)
                              : client_->http.Post(base_ + path, headers, body, kContentType);
    if (res && (res->status == 401 || res->status == 403)) {
      // Retrying cannot cure a refused login: say so at once.
      return Status::PermissionDenied(fmt::format(
          "schema registry {} refused {} {} with HTTP {}: {} ({})", url_, method, path, res->status,
          user_.empty() ? "it needs credentials" : "check the credentials", ErrorText(res->body)));
    }
    if (res && res->status < 500) return std::make_pair(res->status, res->body);
    last = res ? fmt::format("HTTP {}: {}", res->status, ErrorText(res->body))
               : httplib::to_string(res.error());
    if (!res) client_.reset();  // a fresh connection next time
    if (Clock::now() + backoff > deadline) break;
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(2000));
  }
  return Status::Unavailable(
      fmt::format("schema registry {} unavailable for {} {} (retried for {} ms): {}", url_, method,
                  path, options_.retry_timeout_ms, last));
}

namespace {
Status WrongType(int32_t id, const std::string& url, std::string_view have, std::string_view want) {
  return Status::InvalidArgument(fmt::format(
      "schema id {} in {} has schemaType {}, but this job reads {}", id, url, have, want));
}
}  // namespace

Result<std::string> SchemaRegistry::SchemaById(int32_t id, std::string_view want) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = by_id_.find(id); it != by_id_.end()) {
    if (it->second.first != want) return WrongType(id, url_, it->second.first, want);
    return it->second.second;
  }
  std::string path = fmt::format("/schemas/ids/{}", id);
  auto r = Call("GET", path, "");
  if (!r.ok()) return r.status();
  auto& [status, body] = *r;
  if (status == 404) {
    return Status::NotFound(fmt::format("schema id {} is not in the schema registry {}: {}", id,
                                        url_, ErrorText(body)));
  }
  if (status != 200) {
    return Status::InvalidArgument(
        fmt::format("schema registry {} answered GET {} with HTTP {}: {}", url_, path, status,
                    ErrorText(body)));
  }
  JsonBody json(body);
  std::string_view schema, type = "AVRO";
  if (!json.ok || json.doc["schema"].get_string().get(schema) != simdjson::SUCCESS) {
    return Status::InvalidArgument(
        fmt::format("schema registry {}: GET {} gave no `schema` string", url_, path));
  }
  if (json.doc["schemaType"].get_string().get(type) != simdjson::SUCCESS)
    type = "AVRO";  // absent for Avro
  auto& entry = by_id_[id] = {std::string(type), std::string(schema)};
  if (type != want) return WrongType(id, url_, type, want);
  return entry.second;
}

Result<int32_t> SchemaRegistry::Register(const std::string& subject, const std::string& schema,
                                         std::string_view type) {
  std::lock_guard<std::mutex> lock(mu_);
  JsonEncoder body;
  body.BeginObject();
  if (type != "AVRO") {  // Confluent's API: absent means Avro
    body.Key("schemaType");
    body.String(type);
  }
  body.Key("schema");
  body.String(schema);
  body.EndObject();
  std::string path = "/subjects/" + PathSegment(subject) + "/versions";
  auto r = Call("POST", path, std::string(body.view()));
  if (!r.ok()) return r.status();
  auto& [status, text] = *r;
  if (status != 200) {
    std::string why = status == 409
                          ? "the schema is incompatible with the subject's earlier versions"
                      : status == 422 ? "the registry finds the schema invalid"
                                      : fmt::format("HTTP {}", status);
    return Status::InvalidArgument(
        fmt::format("schema registry {} refused the schema for subject \"{}\": {}: {}", url_,
                    subject, why, ErrorText(text)));
  }
  JsonBody json(text);
  int64_t id = 0;
  if (!json.ok || json.doc["id"].get_int64().get(id) != simdjson::SUCCESS || id < 0 ||
      id > INT32_MAX) {
    return Status::InvalidArgument(
        fmt::format("schema registry {}: POST {} gave no schema `id`", url_, path));
  }
  by_id_.emplace(static_cast<int32_t>(id), std::make_pair(std::string(type), schema));
  return static_cast<int32_t>(id);
}

Result<std::shared_ptr<SchemaRegistry>> MakeSchemaRegistry(const std::string& url,
                                                           const std::string& credentials) {
  SchemaRegistryOptions options;
  options.credentials = credentials;
  return SchemaRegistry::Make(url, options);
}

Result<std::string> RegisterForHeader(const std::string& url, const std::string& credentials,
                                      const std::string& subject, const std::string& schema,
                                      std::string_view type) {
  auto registry = MakeSchemaRegistry(url, credentials);
  if (!registry.ok()) return registry.status();
  auto id = (*registry)->Register(subject, schema, type);
  if (!id.ok()) return id.status();
  return ConfluentHeader(*id);
}

Status ConfluentFrame(std::string_view payload, std::string_view format, int32_t* schema_id,
                      std::string_view* body) {
  if (payload.size() < 5) {
    return Status::InvalidArgument(fmt::format(
        "too short for the Confluent {} wire format ({} bytes)", format, payload.size()));
  }
  if (payload[0] != 0) {
    return Status::InvalidArgument(
        fmt::format("not in the Confluent {} wire format (first byte 0x{:02x}, want 0x00)", format,
                    static_cast<uint8_t>(payload[0])));
  }
  uint32_t id = 0;
  for (int i = 1; i <= 4; ++i)
    id = (id << 8) | static_cast<uint8_t>(payload[static_cast<size_t>(i)]);
  *schema_id = static_cast<int32_t>(id);
  *body = payload.substr(5);
  return Status::Ok();
}

std::string ConfluentHeader(int32_t id) {
  auto u = static_cast<uint32_t>(id);
  return std::string{'\0', static_cast<char>(u >> 24), static_cast<char>((u >> 16) & 0xff),
                     static_cast<char>((u >> 8) & 0xff), static_cast<char>(u & 0xff)};
}

}  // namespace flow::rt
