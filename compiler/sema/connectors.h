#pragma once
// The connectors and formats the checker knows: their arguments (name, type, required) and what
// they need (a format, a schema) or support (exactly-once, dead letters). Which connectors and
// formats exist and what each supports come from the runtime's catalog
// (flow/runtime/connectors/connector_catalog.h); the arguments are the language's. The `nexmark`
// and `datagen` arguments are read from the runtime's tables
// (flow/runtime/generators/generator_args.h); the connector arguments are the language's names
// for the runtime factory's options (flow/runtime/connectors/connector_factory.h), and
// tests/sema/ checks the runtime accepts each.

#include <string>
#include <string_view>
#include <vector>

#include "types/type.h"

namespace flow::sema {

struct ArgSpec {
  std::string name;
  types::Type type;  // string arguments with `choices` accept bare names too
  bool required = false;
  std::vector<std::string> choices;  // allowed values (bare names, e.g. `start: earliest`)
  bool exactly_once_only = false;    // a sink's: refused without `exactly_once`
  bool generated = false;            // read by the code generator, not passed to the connector
};

enum class Need { kNo, kOptional, kRequired };

struct ConnectorSpec {
  std::string name;
  bool source = false;  // a source (`from`) or a sink (`into`)
  std::vector<ArgSpec> args;
  Need format = Need::kRequired;
  Need schema = Need::kRequired;  // sources: `as Schema`
  bool exactly_once = false;      // sinks: supports `exactly_once`
  bool dead_letter = false;       // sinks: may take a source's dead letters
  std::string example;
};

const std::vector<ConnectorSpec>& AllConnectors();
const ConnectorSpec* FindConnector(std::string_view name, bool source);

struct FormatSpec {
  std::string name;
  std::vector<ArgSpec> args;
};
const std::vector<FormatSpec>& AllFormats();
const FormatSpec* FindFormat(std::string_view name);

// The record type of a `nexmark(kind: ...)` event kind, or Error for an unknown kind.
types::Type NexmarkRecord(std::string_view kind);

}  // namespace flow::sema
