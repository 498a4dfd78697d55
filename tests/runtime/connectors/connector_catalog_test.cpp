// The connector catalog against what the runtime builds: the connector factory has a builder for
// exactly the catalog's byte sources and sinks, TxnSinkSpecFor for exactly its exactly-once
// sinks; each listed kind (in each listed format, through exec's option translation) builds, and
// every other kind is refused with the catalog's list. The checker and flowc build side:
// tests/sema/connector_catalog_test.cpp.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <string_view>

#include "flow/runtime/connectors/connector_catalog.h"
#include "flow/runtime/connectors/connector_factory.h"
#include "flow/runtime/exec/decoding_source.h"
#include "flow/runtime/exec/encoding_sink.h"
#include "flow/runtime/exec/io.h"
#include "flow/runtime/txn/txn_sink_spec.h"

namespace flow::rt {
namespace {

using Options = std::map<std::string, std::string>;

// The fewest options each kind needs; a kind missing here fails below on its required options.
Options SourceOptions(std::string_view kind) {
  if (kind == "file") return {{"path", "/tmp/in.jsonl"}};
  if (kind == "kafka") return {{"brokers", "127.0.0.1:9092"}, {"topic", "t"}};
  return {};
}

Options SinkOptions(std::string_view kind) {
  if (kind == "file") return {{"directory", "/tmp/out"}};
  if (kind == "kafka") return {{"brokers", "127.0.0.1:9092"}, {"topic", "t"}};
  return {};
}

template <typename Pick>
std::set<std::string_view> Kinds(Pick pick) {
  std::set<std::string_view> out;
  for (const ConnectorCaps& c : kConnectors) {
    if (pick(c)) out.insert(c.kind);
  }
  return out;
}

std::set<std::string_view> AsSet(const std::vector<std::string_view>& v) {
  return {v.begin(), v.end()};
}

bool ByteSource(const ConnectorCaps& c) {
  return c.source && !c.generator;
}
bool Sink(const ConnectorCaps& c) {
  return c.sink;
}
bool ExactlyOnceSink(const ConnectorCaps& c) {
  return c.sink && c.exactly_once;
}

// Kinds to try besides the catalog's: none of them exists.
constexpr std::string_view kStrangers[] = {"ftp", "printer", ""};

TEST(ConnectorCatalog, TableIsConsistent) {
  std::set<std::string_view> seen;
  for (const ConnectorCaps& c : kConnectors) {
    EXPECT_TRUE(seen.insert(c.kind).second) << "listed twice: " << c.kind;
    EXPECT_TRUE(c.source || c.sink) << c.kind;
    // A format clause needs formats to name; generators and blackhole take none.
    EXPECT_EQ(c.formats == 0, c.format == FormatUse::kNone) << c.kind;
    EXPECT_TRUE(!c.generator || (c.source && !c.sink && c.formats == 0)) << c.kind;
    if (c.sink) {
      EXPECT_TRUE(c.at_least_once) << c.kind;
    }
    if (!c.sink) {
      EXPECT_FALSE(c.at_least_once || c.exactly_once || c.dead_letter) << c.kind;
    }
    // Dead letters are JSON objects.
    if (c.dead_letter) {
      EXPECT_TRUE(HasFormat(c, RecordFormat::kJson)) << c.kind;
    }
  }
}

TEST(ConnectorCatalog, FactoryBuildsExactlyTheCatalogsConnectors) {
  EXPECT_EQ(AsSet(RawSourceBuilderKinds()), Kinds(ByteSource));
  EXPECT_EQ(AsSet(RawSinkBuilderKinds()), Kinds(Sink));
  for (const ConnectorCaps& c : kConnectors) {
    auto source = MakeRawSource(c.kind, SourceOptions(c.kind));
    if (ByteSource(c)) {
      EXPECT_TRUE(source.ok()) << c.kind << ": " << source.status().ToString();
    } else {
      EXPECT_EQ(source.status().code(), StatusCode::kInvalidArgument) << c.kind;
    }
    auto sink = MakeRawSink(c.kind, SinkOptions(c.kind));
    if (c.sink) {
      EXPECT_TRUE(sink.ok()) << c.kind << ": " << sink.status().ToString();
    } else {
      EXPECT_EQ(sink.status().code(), StatusCode::kInvalidArgument) << c.kind;
    }
  }
  for (std::string_view k : kStrangers) {
    EXPECT_EQ(MakeRawSource(k, {}).status().message(),
              "unknown source `" + std::string(k) +
                  "` (known: " + ConnectorKindList(ByteSource, ", ") + ")");
    EXPECT_EQ(
        MakeRawSink(k, {}).status().message(),
        "unknown sink `" + std::string(k) + "` (known: " + ConnectorKindList(Sink, ", ") + ")");
  }
}

TEST(ConnectorCatalog, ExactlyOnceSinksAreTheCatalogs) {
  EXPECT_EQ(AsSet(TxnSinkBuilderKinds()), Kinds(ExactlyOnceSink));
  std::string refused_tail = ", not by `";
  for (const ConnectorCaps& c : kConnectors) {
    std::string kind(c.kind);
    auto spec = TxnSinkSpecFor(kind, SinkOptions(c.kind));
    EXPECT_EQ(SinkOffers(c.kind, Delivery::kExactlyOnce), c.sink && c.exactly_once) << kind;
    if (ExactlyOnceSink(c)) {
      EXPECT_TRUE(spec.ok()) << kind << ": " << spec.status().ToString();
    } else {
      EXPECT_EQ(spec.status().message(), "`exactly_once` is supported by " +
                                             ExactlyOnceSinksText() + refused_tail + kind + "`");
    }
  }
  for (std::string_view k : kStrangers) {
    EXPECT_EQ(TxnSinkSpecFor(std::string(k), {}).status().code(), StatusCode::kInvalidArgument);
  }
}

// Formats reach a connector through exec's option translation (a csv source asks the file and
// stdin readers for quoted newlines): every format the catalog lists must build.
TEST(ConnectorCatalog, EveryListedFormatBuildsThroughExec) {
  for (const ConnectorCaps& c : kConnectors) {
    if (!ByteSource(c)) continue;
    std::string kind(c.kind);
    for (RecordFormat f : kRecordFormats) {
      if (!HasFormat(c, f)) continue;
      auto options =
          exec::SourceOptions(kind, SourceOptions(c.kind), std::string(RecordFormatName(f)),
                              /*csv_header=*/false);
      ASSERT_TRUE(options.ok()) << kind << " " << RecordFormatName(f) << ": "
                                << options.status().ToString();
      auto made = exec::RawSourceFactoryFor(kind, *options);
      EXPECT_TRUE(made.ok()) << kind << " " << RecordFormatName(f) << ": "
                             << made.status().ToString();
    }
  }
}

// MakeSink takes every catalog sink that offers at least once (exactly-once sinks are built
// elsewhere, AddExactlyOnceSink).
TEST(ConnectorCatalog, MakeSinkFollowsTheCatalogsGuarantees) {
  for (const ConnectorCaps& c : kConnectors) {
    if (!c.sink) continue;
    std::string kind(c.kind);
    // Scripts call the file sink's directory `path`; exec translates it.
    Options script = SinkOptions(c.kind);
    if (kind == "file") script = {{"path", "/tmp/out"}};
    auto options = exec::SinkOptions(kind, script);
    auto at_least_once = exec::RawSinkFactoryFor(kind, options);
    EXPECT_EQ(at_least_once.ok(), c.at_least_once)
        << kind << ": " << at_least_once.status().ToString();
  }
}

TEST(ConnectorCatalog, Lists) {
  EXPECT_EQ(ExactlyOnceSinksText(), "the kafka and file sinks");
  EXPECT_EQ(RecordFormatList(), "json, csv, raw, avro and protobuf");
  EXPECT_EQ(ConnectorKindList([](const ConnectorCaps& c) { return c.dead_letter; }, " or "),
            "kafka, file or stdout");
  EXPECT_TRUE(TakesFormat("kafka", "csv"));
  EXPECT_FALSE(TakesFormat("blackhole", "json"));
  EXPECT_TRUE(TakesFormat("kafka", "avro"));
  EXPECT_FALSE(TakesFormat("file", "avro"));  // Avro records need Kafka's message framing
  EXPECT_TRUE(TakesFormat("kafka", "protobuf"));
  EXPECT_FALSE(TakesFormat("stdout", "protobuf"));  // likewise
  EXPECT_FALSE(TakesFormat("kafka", "parquet"));
  EXPECT_FALSE(IsByteSourceKind("nexmark"));
  EXPECT_TRUE(IsDeadLetterSinkKind("stdout"));
  EXPECT_FALSE(IsDeadLetterSinkKind("blackhole"));
}

}  // namespace
}  // namespace flow::rt
