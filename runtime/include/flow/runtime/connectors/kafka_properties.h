#pragma once
// Kafka client settings given by users (docs/connectors.md, "Client settings"): a script's
// `properties: ["key=value", ...]` on a kafka source or sink, and a job's `--kafka-properties
// FILE`, which applies to every Kafka client of the job. Values may name environment variables
// as ${NAME}, so that passwords need not sit in a script, on a command line or in a log. Keys
// that Flow sets from its own arguments, or needs as they are, are refused with the argument to
// use instead; values of keys that look secret are masked wherever Flow prints them.

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "flow/runtime/common/status.h"

namespace flow::rt {

using KafkaProperties = std::map<std::string, std::string>;

// Why users may not set `key` (e.g. "set by the source's `brokers:` argument"), or nullopt.
std::optional<std::string_view> ReservedKafkaProperty(std::string_view key);
// Passwords, secrets, private keys, JAAS configs: never printed. Inline: the compiler masks them
// in `flowc explain` without linking the connectors.
inline bool IsSecretKafkaProperty(std::string_view key) {
  return key.find("password") != std::string_view::npos ||
         key.find("secret") != std::string_view::npos ||
         key.find("jaas") != std::string_view::npos || key == "sasl.oauthbearer.config" ||
         key == "ssl.key.pem" || key == "ssl_key";
}
// `value`, or "***" when `key` is secret.
std::string MaskedKafkaValue(std::string_view key, std::string_view value);

// Parses `key=value` lines: blank lines and lines starting with '#' or '!' are skipped, spaces
// around key and value are trimmed, ${NAME} is replaced by the environment variable NAME ($$ is
// a literal $). kInvalidArgument naming `where` and the line for a line without '=', an empty
// key, a reserved key, a key given twice, or an unset variable; never prints a secret value.
// `getenv` is for tests; default ::getenv.
[[nodiscard]] Result<KafkaProperties> ParseKafkaProperties(
    std::string_view text, std::string_view where,
    const std::function<const char*(const char*)>& getenv = {});
// The same for a file; kIoError naming it when it cannot be read.
[[nodiscard]] Result<KafkaProperties> ReadKafkaPropertiesFile(const std::string& path);
// The librdkafka settings in a connector's options: every `kafka.<key>` option and the lines of
// the `properties` option (the script's list, one entry per line). Adds the option names it
// used to `*used`. Errors as ParseKafkaProperties, naming `what` (e.g. "kafka source").
[[nodiscard]] Result<KafkaProperties> KafkaPropertiesOfOptions(
    const std::map<std::string, std::string>& options, std::string_view what,
    std::set<std::string>* used);
// kInvalidArgument for the first reserved key of `properties` (from `where`).
[[nodiscard]] Status CheckKafkaProperties(const KafkaProperties& properties,
                                          std::string_view where);

}  // namespace flow::rt
