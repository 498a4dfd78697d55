#pragma once
// The named arguments of the `nexmark(...)` and `datagen(...)` sources, in one place: the spec
// tables (name, type, required, default, meaning) that the checker and docs/language.md follow,
// and parsers from argument text to the generator configs. Generated code passes each argument
// as text (literal or param value):
//
//   auto args = ParseNexmarkArgs({{"kind", "bid"}, {"events", "1000000"}});
//   // args->config, args->kind
//
// Text forms: int "42"; number "1000" or "2.5"; duration "250ms" "5s" "1m" "2h" "1d" or plain
// milliseconds; timestamp RFC 3339 or integer epoch milliseconds; kind person|auction|bid.
// Errors: InvalidArgument naming the source and the argument, e.g.
//   "nexmark: argument `events`: expected an integer, got `ten`",
//   "datagen: unknown argument `size` (valid: count, rate, seed, ...)",
//   "nexmark: missing argument `kind`". Threading: pure functions.

#include <map>
#include <span>
#include <string>
#include <string_view>

#include "flow/runtime/common/status.h"
#include "flow/runtime/generators/datagen.h"
#include "flow/runtime/generators/nexmark.h"

namespace flow::rt {

enum class GeneratorArgType { kInt, kNumber, kDuration, kTimestamp, kKind };

struct GeneratorArgSpec {
  std::string_view name;
  GeneratorArgType type;
  bool required;
  std::string_view default_text;  // as written in docs ("unbounded", "10000", ...)
  std::string_view meaning;
};

std::span<const GeneratorArgSpec> NexmarkArgSpecs();
std::span<const GeneratorArgSpec> DatagenArgSpecs();

struct NexmarkSourceArgs {
  NexmarkConfig config;
  NexmarkKind kind = NexmarkKind::kBid;
};

// Unknown, missing, malformed and out-of-range arguments are InvalidArgument.
Result<NexmarkSourceArgs> ParseNexmarkArgs(const std::map<std::string, std::string>& args);
Result<DatagenConfig> ParseDatagenArgs(const std::map<std::string, std::string>& args);

}  // namespace flow::rt
