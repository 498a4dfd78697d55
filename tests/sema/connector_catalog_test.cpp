// The checker and flowc build's support check against the runtime's connector catalog: the
// checker knows exactly the catalog's sources and sinks, and accepts `exactly_once`, a dead-letter
// sink and a format exactly where the catalog says the runtime has them; what it accepts, flowc
// build lowers. The runtime side is tests/runtime/connectors/connector_catalog_test.cpp.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>

#include "flow/runtime/connectors/connector_catalog.h"
#include "frontend/frontend.h"
#include "plan/plan.h"
#include "plan/sink_node.h"
#include "plan/source_node.h"
#include "sema/connectors.h"

namespace flow {
namespace {

// `kind(arg: value, ...)` with the required arguments of the checker's spec.
std::string Call(const sema::ConnectorSpec& spec) {
  std::string args;
  for (const sema::ArgSpec& a : spec.args) {
    if (!a.required) continue;
    std::string value = !a.choices.empty()                      ? a.choices.front()
                        : a.type.kind() == types::Kind::kString ? "\"x\""
                                                                : "3";
    args += (args.empty() ? "" : ", ") + a.name + ": " + value;
  }
  return spec.name + "(" + args + ")";
}

struct Checked {
  size_t errors = 0;
  std::set<diag::Kind> kinds;
  std::string lowered;  // flowc build's refusal, when the checker found no error
};

Checked Check(const std::string& text) {
  diag::SourceManager sm;
  diag::DiagnosticEngine diags;
  auto program = frontend::CheckText("catalog.flow", text, sm, diags);
  Checked out;
  for (const auto& d : diags.diagnostics()) {
    if (d.severity != diag::Severity::kError) continue;
    ++out.errors;
    out.kinds.insert(d.kind);
  }
  if (program && out.errors == 0 && plan::Lower(*program, diags) == nullptr) {
    out.lowered = diags.diagnostics().back().message;
  }
  return out;
}

const char* kSchema = "schema R { a: string }\n";

TEST(ConnectorCatalog, CheckerKnowsExactlyTheCatalogsConnectors) {
  std::set<std::pair<std::string, bool>> catalog, checker;
  for (const rt::ConnectorCaps& c : rt::kConnectors) {
    if (c.source) catalog.insert({std::string(c.kind), true});
    if (c.sink) catalog.insert({std::string(c.kind), false});
  }
  for (const sema::ConnectorSpec& s : sema::AllConnectors()) {
    checker.insert({s.name, s.source});
    EXPECT_FALSE(s.example.empty()) << s.name << ": no language arguments for a catalog kind";
  }
  EXPECT_EQ(checker, catalog);
  std::set<std::string> formats;
  for (const sema::FormatSpec& f : sema::AllFormats()) formats.insert(f.name);
  for (rt::RecordFormat f : rt::kRecordFormats)
    EXPECT_EQ(formats.count(std::string(rt::RecordFormatName(f))), 1u);
  EXPECT_EQ(formats.size(), rt::kRecordFormats.size());
}

TEST(ConnectorCatalog, ExactlyOnceIsAcceptedOnExactlyTheCatalogsSinks) {
  for (const sema::ConnectorSpec& s : sema::AllConnectors()) {
    if (s.source) continue;
    bool offered = rt::SinkOffers(s.name, rt::Delivery::kExactlyOnce);
    std::string format = s.format == sema::Need::kNo ? "" : " format json";
    Checked c = Check(std::string(kSchema) + "stream s = from stdin() format json as R\n" +
                      "s | into " + Call(s) + format + " exactly_once\n");
    if (offered) {
      EXPECT_EQ(c.errors, 0u) << s.name;
      EXPECT_EQ(c.lowered, "") << s.name;
    } else {
      EXPECT_EQ(c.errors, 1u) << s.name;
      EXPECT_EQ(c.kinds.count(diag::Kind::kExactlyOnceUnsupported), 1u) << s.name;
    }
    // flowc build's own check, for a program that reached it.
    ast::IntoOp into;
    into.sink.name.name = s.name;
    into.delivery = ast::Delivery::kExactlyOnce;
    diag::SourceRange where;
    EXPECT_EQ(plan::UnsupportedSink(into, &where).empty(), offered) << s.name;
  }
}

TEST(ConnectorCatalog, DeadLettersGoToExactlyTheCatalogsDeadLetterSinks) {
  for (const sema::ConnectorSpec& s : sema::AllConnectors()) {
    if (s.source) continue;
    bool allowed = rt::IsDeadLetterSinkKind(s.name);
    std::string format = s.format == sema::Need::kNo ? "" : " format json";
    Checked c =
        Check(std::string(kSchema) + "stream s = from stdin() format json as R" +
              " on error dead_letter " + Call(s) + format + "\n" + "s | into blackhole()\n");
    EXPECT_EQ(c.errors, allowed ? 0u : 1u) << s.name;
    if (allowed) {
      EXPECT_EQ(c.lowered, "") << s.name;
    }
    ast::Source source;
    source.connector.name.name = "stdin";
    source.format.emplace().name.name = "json";
    source.on_error.emplace().kind = ast::ErrorPolicyKind::kDeadLetter;
    source.on_error->sink.emplace().name.name = s.name;
    diag::SourceRange where;
    EXPECT_EQ(plan::UnsupportedSource(source, &where).empty(), allowed) << s.name;
  }
}

// `name` with its required arguments (all strings: avro's `registry`); protobuf takes a
// `registry` or a `proto` file (check_protobuf.cpp): a registry here.
std::string FormatWithArgs(const std::string& name) {
  if (name == "protobuf") return "protobuf(registry: \"x\")";
  std::string args;
  for (const sema::ArgSpec& a : sema::FindFormat(name)->args) {
    if (!a.required) continue;
    EXPECT_EQ(a.type, types::Type::String()) << name << " " << a.name;
    args += (args.empty() ? "" : ", ") + a.name + ": \"x\"";
  }
  return args.empty() ? name : name + "(" + args + ")";
}

TEST(ConnectorCatalog, FormatsAreAcceptedAsTheCatalogLists) {
  for (const sema::ConnectorSpec& s : sema::AllConnectors()) {
    for (rt::RecordFormat f : rt::kRecordFormats) {
      std::string name = FormatWithArgs(std::string(rt::RecordFormatName(f)));
      bool listed = rt::TakesFormat(s.name, rt::RecordFormatName(f));
      std::string text =
          s.source ? std::string(kSchema) + "stream s = from " + Call(s) + " format " + name +
                         (s.schema == sema::Need::kNo ? "" : " as R") + "\ns | into blackhole()\n"
                   : std::string(kSchema) + "stream s = from stdin() format json as R\n" +
                         "s | into " + Call(s) + " format " + name + "\n";
      Checked c = Check(text);
      EXPECT_EQ(c.errors == 0, listed) << s.name << " format " << name;
      if (listed) {
        EXPECT_EQ(c.lowered, "") << s.name << " format " << name;
      }
    }
  }
}

}  // namespace
}  // namespace flow
