// Every argument the checker accepts on a connector or generator is accepted by the runtime that
// the generated job calls, and the generators' tables match one to one, so they cannot drift.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "flow/runtime/connectors/connector_factory.h"
#include "flow/runtime/generators/generator_args.h"
#include "flow/runtime/txn/txn_sink_spec.h"
#include "frontend/frontend.h"
#include "sema/connectors.h"

namespace flow {
namespace {

using types::Kind;

// A valid text for an argument of the checker's type, as generated code passes it.
std::string Sample(const sema::ArgSpec& a) {
  if (!a.choices.empty()) return a.choices.back();
  switch (a.type.kind()) {
    case Kind::kInt:
      return "3";
    case Kind::kFloat:
      return "0.5";  // in range for every float argument (nulls is a probability)
    case Kind::kBool:
      return "true";
    case Kind::kDuration:
      return "2s";
    case Kind::kTimestamp:
      return "2026-01-01T00:00:00Z";
    // Kafka's `properties`: a list, one entry per line (exec::OptionText), each key=value.
    case Kind::kList:
      return "client.id=flow\nlinger.ms=5";
    default:
      return "x";
  }
}

std::map<std::string, std::string> AllArgs(const sema::ConnectorSpec& spec) {
  std::map<std::string, std::string> args;
  for (const sema::ArgSpec& a : spec.args) args[a.name] = Sample(a);
  return args;
}

const char* TypeName(rt::GeneratorArgType t) {
  switch (t) {
    case rt::GeneratorArgType::kInt:
      return "int";
    case rt::GeneratorArgType::kNumber:
      return "float";
    case rt::GeneratorArgType::kDuration:
      return "duration";
    case rt::GeneratorArgType::kTimestamp:
      return "timestamp";
    case rt::GeneratorArgType::kKind:
      return "string";
  }
  return "?";
}

void ExpectSameTable(const char* source, std::span<const rt::GeneratorArgSpec> runtime) {
  const sema::ConnectorSpec* spec = sema::FindConnector(source, true);
  ASSERT_NE(spec, nullptr) << source;
  ASSERT_EQ(spec->args.size(), runtime.size()) << source;
  for (size_t i = 0; i < runtime.size(); ++i) {
    EXPECT_EQ(spec->args[i].name, runtime[i].name) << source;
    EXPECT_EQ(spec->args[i].type.ToString(), TypeName(runtime[i].type))
        << source << " " << runtime[i].name;
    EXPECT_EQ(spec->args[i].required, runtime[i].required) << source << " " << runtime[i].name;
  }
}

TEST(ConnectorArgs, GeneratorTablesMatchTheRuntime) {
  ExpectSameTable("nexmark", rt::NexmarkArgSpecs());
  ExpectSameTable("datagen", rt::DatagenArgSpecs());
}

TEST(ConnectorArgs, RuntimeParsesEveryGeneratorArgumentTheCheckerAccepts) {
  auto nexmark = rt::ParseNexmarkArgs(AllArgs(*sema::FindConnector("nexmark", true)));
  EXPECT_TRUE(nexmark.ok()) << nexmark.status().ToString();
  auto datagen = rt::ParseDatagenArgs(AllArgs(*sema::FindConnector("datagen", true)));
  EXPECT_TRUE(datagen.ok()) << datagen.status().ToString();
}

// Language argument names that the generated job passes to the runtime under another name.
// `exactly_once`: also the sink arguments the checker takes only with `exactly_once`.
std::map<std::string, std::string> ToRuntimeOptions(const sema::ConnectorSpec& spec,
                                                    bool exactly_once = false) {
  std::map<std::string, std::string> options;
  for (const auto& [name, value] : AllArgs(spec)) {
    auto arg = std::find_if(spec.args.begin(), spec.args.end(),
                            [&](const sema::ArgSpec& a) { return a.name == name; });
    if (!exactly_once && arg != spec.args.end() && arg->exactly_once_only) continue;
    if (arg != spec.args.end() && arg->generated) continue;  // never reaches the connector
    if (!spec.source && spec.name == "file" && name == "path") {
      options["directory"] = value;
    } else if (spec.source && spec.name == "kafka" && name == "group") {
      options["group_id"] = value;
    } else if (spec.source && spec.name == "kafka" && name == "read_committed") {
      options["isolation"] = value == "true" ? "read_committed" : "read_uncommitted";
    } else {
      options[name] = value;
    }
  }
  return options;
}

TEST(ConnectorArgs, RuntimeFactoriesAcceptEveryArgumentTheCheckerAccepts) {
  int checked = 0;
  for (const sema::ConnectorSpec& spec : sema::AllConnectors()) {
    if (spec.name == "nexmark" || spec.name == "datagen") continue;
    auto options = ToRuntimeOptions(spec);
    if (spec.source) {
      auto made = rt::MakeRawSource(spec.name, options);
      EXPECT_TRUE(made.ok()) << "source " << spec.name << ": " << made.status().ToString();
    } else {
      auto made = rt::MakeRawSink(spec.name, options);
      EXPECT_TRUE(made.ok()) << "sink " << spec.name << ": " << made.status().ToString();
    }
    ++checked;
  }
  EXPECT_EQ(checked, 7);  // kafka, file, stdin sources; kafka, file, stdout, blackhole sinks
}

// Where the checker accepts `exactly_once` (ConnectorSpec::exactly_once, from the catalog), the
// generated job's TxnSinkSpecFor builds the sink from the same arguments; elsewhere it refuses.
TEST(ConnectorArgs, RuntimeBuildsExactlyOnceSinksWhereTheCheckerAcceptsThem) {
  int accepted = 0;
  for (const sema::ConnectorSpec& spec : sema::AllConnectors()) {
    if (spec.source) continue;
    auto made = rt::TxnSinkSpecFor(spec.name, ToRuntimeOptions(spec, /*exactly_once=*/true));
    if (spec.exactly_once) {
      EXPECT_TRUE(made.ok()) << spec.name << ": " << made.status().ToString();
      ++accepted;
    } else {
      EXPECT_EQ(made.status().code(), rt::StatusCode::kInvalidArgument) << spec.name;
    }
  }
  EXPECT_GT(accepted, 0);
}

size_t Errors(const std::string& text) {
  diag::SourceManager sm;
  diag::DiagnosticEngine diags;
  frontend::CheckText("args.flow", text, sm, diags);
  size_t n = 0;
  for (const auto& d : diags.diagnostics()) n += d.severity == diag::Severity::kError;
  return n;
}

TEST(ConnectorArgs, CheckerAcceptsTheRuntimeArguments) {
  EXPECT_EQ(
      Errors("from nexmark(kind: bid, rate: 2.5, base_time: timestamp \"2020-01-01T00:00:00Z\",\n"
             "  first_event_id: 1, hot_bidders_ratio: 3, out_of_order_group_size: 4)\n"
             "  | into blackhole()\n"),
      0u);
  EXPECT_EQ(Errors("schema R { a: int? }\n"
                   "from datagen(count: 10, rate: 0.5, nulls: 0.25,\n"
                   "  base_time: timestamp \"2020-01-01T00:00:00Z\") as R | into blackhole()\n"),
            0u);
  EXPECT_EQ(
      Errors(
          "schema R { a: int }\n"
          "from kafka(topic: \"t\", brokers: \"b:9092\", start: committed, read_committed: false)\n"
          "  format json as R | into blackhole()\n"),
      0u);
}

TEST(ConnectorArgs, CheckerRejectsWhatTheRuntimeRejects) {
  EXPECT_EQ(Errors("from nexmark(kind: bid, seed: 1) | into blackhole()\n"), 1u);
  EXPECT_EQ(Errors("schema R { a: int }\nfrom datagen(size: 1) as R | into blackhole()\n"), 1u);
}

}  // namespace
}  // namespace flow
