#pragma once
// What each connector kind can do, in one table: source and/or sink, the formats it reads or
// writes, the delivery guarantees a sink offers, whether it may take a source's dead letters.
// Everything that decides support reads this table, so they cannot drift apart: the checker
// (compiler/sema/connectors.cpp, and through it the LSP), flowc build's support check
// (compiler/plan/io_support.cpp), the connector factory (connector_factory.h), the exactly-once
// sink specs (txn/txn_sink_spec.h) and exec's MakeSink (exec/encoding_sink.h); their messages
// about unknown kinds list names from it. Tests check that the builders cover exactly what it
// lists (tests/runtime/connectors/connector_catalog_test.cpp) and that the checker and flowc build
// accept exactly that (tests/sema/connector_catalog_test.cpp). Option names are not here: each
// builder reads its own (connector_factory.h, txn_sink_spec.h, generators/generator_args.h).
//
// Header-only and free of other runtime headers, so the compiler uses it without linking the
// runtime. Constant data; thread-safe.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace flow::rt {

// A sink's delivery guarantee (`at_least_once` / `exactly_once` in scripts).
enum class Delivery : uint8_t { kAtLeastOnce, kExactlyOnce };

// The record formats, as bits of ConnectorCaps::formats.
// Avro and Protobuf are Confluent-framed with a schema registry (formats/avro_registry.h,
// formats/protobuf_registry.h): Kafka only.
enum class RecordFormat : uint8_t { kJson = 1, kCsv = 2, kRaw = 4, kAvro = 8, kProtobuf = 16 };

inline constexpr std::array<RecordFormat, 5> kRecordFormats = {
    RecordFormat::kJson, RecordFormat::kCsv, RecordFormat::kRaw, RecordFormat::kAvro,
    RecordFormat::kProtobuf};

constexpr std::string_view RecordFormatName(RecordFormat f) {
  switch (f) {
    case RecordFormat::kJson:
      return "json";
    case RecordFormat::kCsv:
      return "csv";
    case RecordFormat::kRaw:
      return "raw";
    case RecordFormat::kAvro:
      return "avro";
    case RecordFormat::kProtobuf:
      return "protobuf";
  }
  return "?";
}

constexpr std::optional<RecordFormat> ParseRecordFormat(std::string_view name) {
  for (RecordFormat f : kRecordFormats) {
    if (RecordFormatName(f) == name) return f;
  }
  return std::nullopt;
}

// Whether a script must name a format (`format json`), may (JSON when it does not), or may not.
enum class FormatUse : uint8_t { kNone, kOptional, kRequired };

struct ConnectorCaps {
  std::string_view kind;
  bool source = false;  // `from kind(...)`
  bool sink = false;    // `into kind(...)`
  // A source that makes its records itself (generators/), not bytes read by the connector factory.
  bool generator = false;
  uint8_t formats = 0;  // RecordFormat bits it reads (source) and writes (sink); 0 for none
  FormatUse format = FormatUse::kNone;
  // Sinks: the guarantees on offer. Exactly-once sinks are transactional (txn_sink_spec.h).
  bool at_least_once = false;
  bool exactly_once = false;
  bool dead_letter = false;  // sinks: may take a source's dead letters (one JSON object each)
};

namespace catalog_detail {
// The formats of byte streams (files, stdin, stdout): not Avro or Protobuf, whose records need a
// framing.
inline constexpr uint8_t kTextFormats = 1 | 2 | 4;
inline constexpr uint8_t kAllFormats = kTextFormats | 8 | 16;
}  // namespace catalog_detail

// In the order messages list them (sources first, then the sink-only kinds).
inline constexpr std::array<ConnectorCaps, 7> kConnectors = {{
    {.kind = "kafka",
     .source = true,
     .sink = true,
     .formats = catalog_detail::kAllFormats,
     .format = FormatUse::kRequired,
     .at_least_once = true,
     .exactly_once = true,
     .dead_letter = true},
    {.kind = "file",
     .source = true,
     .sink = true,
     .formats = catalog_detail::kTextFormats,
     .format = FormatUse::kRequired,
     .at_least_once = true,
     .exactly_once = true,
     .dead_letter = true},
    {.kind = "stdin",
     .source = true,
     .formats = catalog_detail::kTextFormats,
     .format = FormatUse::kRequired},
    {.kind = "datagen", .source = true, .generator = true},
    {.kind = "nexmark", .source = true, .generator = true},
    // JSON when no format is given.
    {.kind = "stdout",
     .sink = true,
     .formats = catalog_detail::kTextFormats,
     .format = FormatUse::kOptional,
     .at_least_once = true,
     .dead_letter = true},
    // Drops what it gets: nothing to encode, and dead letters sent there would be lost.
    {.kind = "blackhole", .sink = true, .at_least_once = true},
}};

constexpr const ConnectorCaps* FindConnectorCaps(std::string_view kind) {
  for (const ConnectorCaps& c : kConnectors) {
    if (c.kind == kind) return &c;
  }
  return nullptr;
}

constexpr bool IsSourceKind(std::string_view kind) {
  const ConnectorCaps* c = FindConnectorCaps(kind);
  return c != nullptr && c->source;
}

constexpr bool IsSinkKind(std::string_view kind) {
  const ConnectorCaps* c = FindConnectorCaps(kind);
  return c != nullptr && c->sink;
}

// A source the connector factory builds (MakeRawSource): not a generator.
constexpr bool IsByteSourceKind(std::string_view kind) {
  const ConnectorCaps* c = FindConnectorCaps(kind);
  return c != nullptr && c->source && !c->generator;
}

constexpr bool HasFormat(const ConnectorCaps& c, RecordFormat f) {
  return (c.formats & static_cast<uint8_t>(f)) != 0;
}

// Whether `kind` reads or writes the format named `format` ("json", ...).
constexpr bool TakesFormat(std::string_view kind, std::string_view format) {
  const ConnectorCaps* c = FindConnectorCaps(kind);
  std::optional<RecordFormat> f = ParseRecordFormat(format);
  return c != nullptr && f.has_value() && HasFormat(*c, *f);
}

constexpr bool SinkOffers(std::string_view kind, Delivery d) {
  const ConnectorCaps* c = FindConnectorCaps(kind);
  if (c == nullptr || !c->sink) return false;
  return d == Delivery::kExactlyOnce ? c->exactly_once : c->at_least_once;
}

constexpr bool IsDeadLetterSinkKind(std::string_view kind) {
  const ConnectorCaps* c = FindConnectorCaps(kind);
  return c != nullptr && c->sink && c->dead_letter;
}

// The kinds that `pick` selects, in table order, as a list for messages: "kafka, file and
// stdout" with `last` " and ", "kafka, file, stdin" with ", ".
template <typename Pick>
std::string ConnectorKindList(Pick pick, std::string_view last = " and ") {
  std::string out;
  size_t n = 0, total = 0;
  for (const ConnectorCaps& c : kConnectors) total += pick(c) ? 1 : 0;
  for (const ConnectorCaps& c : kConnectors) {
    if (!pick(c)) continue;
    if (n > 0) out += n + 1 == total ? last : std::string_view(", ");
    out += c.kind;
    ++n;
  }
  return out;
}

// "json, csv and raw" (with `last` " and "), for messages.
inline std::string RecordFormatList(std::string_view last = " and ") {
  std::string out;
  for (size_t i = 0; i < kRecordFormats.size(); ++i) {
    if (i > 0) out += i + 1 == kRecordFormats.size() ? last : std::string_view(", ");
    out += RecordFormatName(kRecordFormats[i]);
  }
  return out;
}

// "the kafka and file sinks": the sinks that offer exactly-once, for messages.
inline std::string ExactlyOnceSinksText() {
  return "the " +
         ConnectorKindList([](const ConnectorCaps& c) { return c.sink && c.exactly_once; }) +
         " sinks";
}

}  // namespace flow::rt
