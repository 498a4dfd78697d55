#include "sema/connectors.h"

#include <algorithm>
#include <set>
#include <span>

#include "flow/runtime/connectors/connector_catalog.h"
#include "flow/runtime/generators/generator_args.h"
#include "sema/checker_impl.h"

namespace flow::sema {
namespace {

using types::Type;

ArgSpec Arg(std::string name, Type type, bool required, std::vector<std::string> choices = {}) {
  return ArgSpec{std::move(name), std::move(type), required, std::move(choices)};
}

// A sink argument that configures its transaction: refused without `exactly_once`.
ArgSpec TxnArg(std::string name, Type type) {
  ArgSpec a = Arg(std::move(name), std::move(type), false);
  a.exactly_once_only = true;
  return a;
}

// A kafka source's or sink's `metadata:` (sema/message_metadata.h): generated code moves the
// fields between the records and the messages.
ArgSpec MetadataArg() {
  ArgSpec a = Arg("metadata", Type::List(Type::String()), false);
  a.generated = true;
  return a;
}

// The generators' arguments come from the runtime's own tables, so the checker accepts exactly
// what the generated job's argument parser accepts.
std::vector<ArgSpec> FromRuntime(std::span<const rt::GeneratorArgSpec> specs) {
  std::vector<ArgSpec> out;
  for (const rt::GeneratorArgSpec& s : specs) {
    std::string name(s.name);
    switch (s.type) {
      case rt::GeneratorArgType::kInt:
        out.push_back(Arg(name, Type::Int(), s.required));
        break;
      case rt::GeneratorArgType::kNumber:
        out.push_back(Arg(name, Type::Float(), s.required));
        break;
      case rt::GeneratorArgType::kDuration:
        out.push_back(Arg(name, Type::Duration(), s.required));
        break;
      case rt::GeneratorArgType::kTimestamp:
        out.push_back(Arg(name, Type::Timestamp(), s.required));
        break;
      case rt::GeneratorArgType::kKind:
        out.push_back(Arg(name, Type::String(), s.required,
                          {rt::NexmarkKindName(rt::NexmarkKind::kBid),
                           rt::NexmarkKindName(rt::NexmarkKind::kAuction),
                           rt::NexmarkKindName(rt::NexmarkKind::kPerson)}));
        break;
    }
  }
  return out;
}

// The language side of one connector: its arguments, whether a source needs `as Schema`, an
// example. Which connectors exist and what they support is the runtime catalog's.
struct LanguageSide {
  std::string_view kind;
  bool source;
  std::vector<ArgSpec> args;
  Need schema;
  std::string example;
};

const std::vector<LanguageSide>& LanguageSides() {
  static const std::vector<LanguageSide> sides = {
      {"kafka",
       true,
       {Arg("topic", Type::String(), true), Arg("brokers", Type::String(), true),
        Arg("group", Type::String(), false),
        Arg("start", Type::String(), false, {"earliest", "latest", "committed"}),
        Arg("read_committed", Type::Bool(), false),
        Arg("partition_discovery", Type::Duration(), false),
        Arg("properties", Type::List(Type::String()), false), MetadataArg()},
       Need::kRequired,
       "kafka(topic: \"clicks\", brokers: brokers)"},
      {"file",
       true,
       {Arg("path", Type::String(), true)},
       Need::kRequired,
       "file(path: \"in.jsonl\")"},
      {"stdin", true, {}, Need::kRequired, "stdin()"},
      {"datagen", true, FromRuntime(rt::DatagenArgSpecs()), Need::kRequired,
       "datagen(count: 1000, rate: 100, seed: 7) as Schema"},
      {"nexmark", true, FromRuntime(rt::NexmarkArgSpecs()), Need::kNo,
       "nexmark(kind: bid, events: 100000)"},
      {"kafka",
       false,
       {Arg("topic", Type::String(), true), Arg("brokers", Type::String(), true),
        Arg("properties", Type::List(Type::String()), false),
        TxnArg("transaction_timeout", Type::Duration()), TxnArg("retry_timeout", Type::Duration()),
        MetadataArg()},
       Need::kNo,
       "kafka(topic: \"out\", brokers: brokers) format json"},
      {"file",
       false,
       {Arg("path", Type::String(), true)},
       Need::kNo,
       "file(path: \"out/\") format json"},
      {"stdout", false, {}, Need::kNo, "stdout() format json"},
      {"blackhole", false, {}, Need::kNo, "blackhole()"},
  };
  return sides;
}

Need NeedOf(rt::FormatUse use) {
  switch (use) {
    case rt::FormatUse::kNone:
      return Need::kNo;
    case rt::FormatUse::kOptional:
      return Need::kOptional;
    case rt::FormatUse::kRequired:
      return Need::kRequired;
  }
  return Need::kRequired;
}

// `format json`, `format csv` or `format raw`: the formats `kind` takes, for a help text.
std::string FormatChoices(std::string_view kind) {
  const rt::ConnectorCaps* caps = rt::FindConnectorCaps(kind);
  std::vector<std::string> names;
  for (rt::RecordFormat f : rt::kRecordFormats) {
    if (caps != nullptr && rt::HasFormat(*caps, f))
      names.push_back("`format " + std::string(rt::RecordFormatName(f)) + "`");
  }
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

}  // namespace

const std::vector<ConnectorSpec>& AllConnectors() {
  // Sources, then sinks, each in the catalog's order.
  static const std::vector<ConnectorSpec> specs = [] {
    std::vector<ConnectorSpec> out;
    for (bool source : {true, false}) {
      for (const rt::ConnectorCaps& c : rt::kConnectors) {
        if (source ? !c.source : !c.sink) continue;
        ConnectorSpec spec;
        spec.name = std::string(c.kind);
        spec.source = source;
        spec.format = NeedOf(c.format);
        spec.exactly_once = !source && c.exactly_once;
        spec.dead_letter = !source && c.dead_letter;
        for (const LanguageSide& l : LanguageSides()) {
          if (l.kind != c.kind || l.source != source) continue;
          spec.args = l.args;
          spec.schema = l.schema;
          spec.example = l.example;
        }
        out.push_back(std::move(spec));
      }
    }
    return out;
  }();
  return specs;
}

const ConnectorSpec* FindConnector(std::string_view name, bool source) {
  for (const ConnectorSpec& s : AllConnectors()) {
    if (s.name == name && s.source == source) return &s;
  }
  return nullptr;
}

const std::vector<FormatSpec>& AllFormats() {
  static const std::vector<FormatSpec> specs = [] {
    std::vector<FormatSpec> out;
    for (rt::RecordFormat f : rt::kRecordFormats) {
      FormatSpec spec{std::string(rt::RecordFormatName(f)), {}};
      if (f == rt::RecordFormat::kCsv) {
        spec.args = {Arg("header", Type::Bool(), false), Arg("delimiter", Type::String(), false)};
      }
      // `subject` is a sink's: where its schema is registered (default "<topic>-value").
      if (f == rt::RecordFormat::kAvro) {
        spec.args = {Arg("registry", Type::String(), true), Arg("subject", Type::String(), false),
                     Arg("credentials", Type::String(), false)};
      }
      // Protobuf: a registry, or a .proto file read when the job is compiled and the message
      // of it to read or write (CheckProtobufSource, check_protobuf.cpp).
      if (f == rt::RecordFormat::kProtobuf) {
        spec.args = {Arg("registry", Type::String(), false), Arg("subject", Type::String(), false),
                     Arg("credentials", Type::String(), false), Arg("proto", Type::String(), false),
                     Arg("message", Type::String(), false)};
      }
      out.push_back(std::move(spec));
    }
    return out;
  }();
  return specs;
}

const FormatSpec* FindFormat(std::string_view name) {
  for (const FormatSpec& s : AllFormats()) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

Type NexmarkRecord(std::string_view kind) {
  using types::Field;
  if (kind == "bid") {
    return Type::Record("Bid", {{"auction", Type::Int()},
                                {"bidder", Type::Int()},
                                {"price", Type::Int()},
                                {"channel", Type::String()},
                                {"url", Type::String()},
                                {"dateTime", Type::Timestamp()},
                                {"extra", Type::String()}});
  }
  if (kind == "auction") {
    return Type::Record("Auction", {{"id", Type::Int()},
                                    {"itemName", Type::String()},
                                    {"description", Type::String()},
                                    {"initialBid", Type::Int()},
                                    {"reserve", Type::Int()},
                                    {"dateTime", Type::Timestamp()},
                                    {"expires", Type::Timestamp()},
                                    {"seller", Type::Int()},
                                    {"category", Type::Int()},
                                    {"extra", Type::String()}});
  }
  if (kind == "person") {
    return Type::Record("Person", {{"id", Type::Int()},
                                   {"name", Type::String()},
                                   {"emailAddress", Type::String()},
                                   {"creditCard", Type::String()},
                                   {"city", Type::String()},
                                   {"state", Type::String()},
                                   {"dateTime", Type::Timestamp()},
                                   {"extra", Type::String()}});
  }
  return Type::Error();
}

namespace {

std::vector<std::string> ArgNames(const std::vector<ArgSpec>& specs) {
  std::vector<std::string> names;
  for (const ArgSpec& a : specs) names.push_back(a.name);
  return names;
}

}  // namespace

// Checks named arguments against `specs`: unknown, duplicate, missing, type, constant-ness.
static void CheckArgs(Checker& c, std::vector<ast::NamedArg>& args,
                      const std::vector<ArgSpec>& specs, const std::string& owner,
                      const diag::SourceRange& owner_range) {
  std::map<std::string, diag::SourceRange> seen;
  for (ast::NamedArg& a : args) {
    const ArgSpec* spec = nullptr;
    for (const ArgSpec& s : specs) {
      if (s.name == a.name.name) spec = &s;
    }
    if (auto it = seen.find(a.name.name); it != seen.end()) {
      c.diags_
          .Report(diag::Kind::kDuplicateArgument, a.name.range,
                  "argument `" + a.name.name + "` is given twice")
          .AddNote(it->second, "first given here");
      continue;
    }
    seen[a.name.name] = a.name.range;
    if (spec == nullptr) {
      auto& d = c.diags_.Report(diag::Kind::kUnknownArgument, a.name.range,
                                "`" + owner + "` has no argument `" + a.name.name + "`");
      if (auto hint = DidYouMean(a.name.name, ArgNames(specs)))
        d.Help(*hint);
      else if (specs.empty())
        d.Help("`" + owner + "` takes no arguments");
      else {
        std::string list;
        for (const ArgSpec& s : specs) list += (list.empty() ? "" : ", ") + s.name;
        d.Help("`" + owner + "` takes: " + list);
      }
      if (a.value) {
        ExprContext cx;
        c.CheckExpr(*a.value, cx);
      }
      continue;
    }
    if (!a.value) continue;
    std::set<std::string> choices(spec->choices.begin(), spec->choices.end());
    ExprContext cx;
    cx.where = "in connector arguments";
    if (!choices.empty()) cx.enum_values = &choices;
    types::Type t = c.CheckExpr(*a.value, cx);
    if (t.is_error() && !(choices.size() && ast::As<ast::NameExpr>(a.value.get()))) continue;
    if (!choices.empty()) {
      const auto* name = ast::As<ast::NameExpr>(a.value.get());
      const auto* lit = ast::As<ast::LiteralExpr>(a.value.get());
      std::string value = name                                               ? name->name
                          : lit && lit->literal == ast::LiteralKind::kString ? lit->string_value
                                                                             : "";
      if ((name && name->target == ast::NameTarget::kParam) ||
          (!value.empty() && choices.count(value)))
        continue;
      std::string list;
      for (const std::string& s : spec->choices) list += (list.empty() ? "" : ", ") + s;
      auto& d = c.diags_.Report(diag::Kind::kInvalidArgument, a.value->range,
                                "`" + a.name.name + "` must be one of " + list +
                                    (value.empty() ? "" : ", not `" + value + "`"));
      if (auto hint = DidYouMean(value, spec->choices)) d.Help(*hint);
      continue;
    }
    if (!types::IsAssignable(t, spec->type)) {
      c.diags_.Report(diag::Kind::kInvalidArgument, a.value->range,
                      "argument `" + a.name.name + "` of `" + owner + "` must be " +
                          spec->type.ToString() + ", found " + t.ToString());
    }
  }
  for (const ArgSpec& s : specs) {
    if (s.required && !seen.count(s.name)) {
      c.diags_
          .Report(diag::Kind::kMissingArgument, owner_range,
                  "`" + owner + "` needs the argument `" + s.name + "`")
          .Help("add `" + s.name + ": ...`");
    }
  }
}

void Checker::CheckConnectorArgs(ast::ConnectorCall& c, bool source) {
  const ConnectorSpec* spec = FindConnector(c.name.name, source);
  if (spec == nullptr) return;
  CheckArgs(*this, c.args, spec->args, c.name.name, c.range);
}

void Checker::CheckFormat(const std::optional<ast::FormatClause>& f, const ast::ConnectorCall& c,
                          bool source) {
  const ConnectorSpec* spec = FindConnector(c.name.name, source);
  if (spec == nullptr) return;
  if (!f) {
    if (spec->format == Need::kRequired) {
      diags_.Report(diag::Kind::kMissingFormat, c.range, "`" + c.name.name + "` needs a format")
          .Help("add " + FormatChoices(c.name.name) + " after `" + c.name.name + "(...)`");
    }
    return;
  }
  if (spec->format == Need::kNo) {
    diags_.Report(diag::Kind::kInvalidArgument, f->range,
                  "`" + c.name.name + "` does not take a format");
    return;
  }
  const FormatSpec* fs = FindFormat(f->name.name);
  if (fs == nullptr) {
    std::vector<std::string> names;
    for (const FormatSpec& s : AllFormats()) names.push_back(s.name);
    auto& d = diags_.Report(diag::Kind::kUnknownFormat, f->name.range,
                            "unknown format `" + f->name.name + "`");
    d.Help(DidYouMean(f->name.name, names).value_or("formats are " + rt::RecordFormatList()));
    return;
  }
  if (!rt::TakesFormat(c.name.name, fs->name)) {
    diags_
        .Report(diag::Kind::kInvalidArgument, f->name.range,
                "`" + c.name.name + "` does not take `format " + fs->name + "`")
        .Help("use " + FormatChoices(c.name.name));
    return;
  }
  auto& args = const_cast<ast::FormatClause&>(*f).args;
  CheckArgs(*this, args, fs->args, f->name.name, f->range);
  // A source reads the writer's schema id from each record; only a sink registers a subject.
  if (source && (fs->name == "avro" || fs->name == "protobuf")) {
    for (const ast::NamedArg& a : args) {
      if (a.name.name != "subject") continue;
      diags_
          .Report(diag::Kind::kInvalidArgument, a.name.range,
                  "`subject` of `format " + fs->name +
                      "` is for sinks: a source finds each record's schema by "
                      "the id in the record")
          .Help("remove `subject: ...`");
    }
  }
  if (fs->name == "protobuf") CheckProtobufArgs(*f, c);
  // A header line is read by CSV sources; sinks write none (what `flowc build` supports).
  if (!source && fs->name == "csv") {
    for (const ast::NamedArg& a : args) {
      if (a.name.name != "header") continue;
      diags_
          .Report(diag::Kind::kInvalidArgument, a.name.range,
                  "`header` of `format csv` is for sources: a CSV sink writes no header line")
          .Help(
              "remove `header: ...`; the columns are written in the order of the record's fields");
    }
  }
}

types::Type Checker::CheckSource(ast::Source& s, bool* event_time) {
  *event_time = false;
  const std::string& n = s.connector.name.name;
  const ConnectorSpec* spec = FindConnector(n, true);
  if (spec == nullptr) {
    std::vector<std::string> names;
    for (const ConnectorSpec& c : AllConnectors()) {
      if (c.source) names.push_back(c.name);
    }
    auto& d = diags_.Report(diag::Kind::kUnknownConnector, s.connector.name.range,
                            FindConnector(n, false)
                                ? "`" + n + "` is a sink; it cannot be read with `from`"
                                : "unknown source `" + n + "`");
    d.Help(DidYouMean(n, names).value_or(
        "sources are " +
        rt::ConnectorKindList([](const rt::ConnectorCaps& k) { return k.source; })));
    return types::Type::Error();
  }
  CheckConnectorArgs(s.connector, true);
  CheckFormat(s.format, s.connector, true);
  types::Type record = types::Type::Error();
  if (n == "nexmark") {
    if (s.schema) {
      diags_.Report(
          diag::Kind::kInvalidArgument, s.schema->range,
          "`nexmark` has built-in schemas chosen by `kind`; remove `as " + s.schema->name + "`");
    }
    for (ast::NamedArg& a : s.connector.args) {
      const auto* name = a.value ? ast::As<ast::NameExpr>(a.value.get()) : nullptr;
      if (a.name.name == "kind" && name) record = NexmarkRecord(name->name);
    }
  } else if (s.schema) {
    auto it = out_.schemas.find(s.schema->name);
    if (it == out_.schemas.end()) {
      std::vector<std::string> names;
      for (auto& [name, _] : out_.schemas) names.push_back(name);
      auto& d = diags_.Report(diag::Kind::kUnknownType, s.schema->range,
                              "unknown schema `" + s.schema->name + "`");
      if (auto hint = DidYouMean(s.schema->name, names)) d.Help(*hint);
    } else {
      record = it->second->resolved;
      if (s.format && s.format->name.name == "raw") {
        const auto& fields = record.fields();
        if (fields.size() != 1 || fields[0].type.AsNonNullable() != types::Type::String()) {
          diags_
              .Report(diag::Kind::kTypeMismatch, s.schema->range,
                      "`format raw` needs a schema with exactly one string field, one line each")
              .AddNote(it->second->name.range, "schema `" + s.schema->name + "` declared here");
        }
      }
    }
  } else if (s.format && s.format->name.name == "raw") {
    record = types::Type::Record("", {{"line", types::Type::String()}});
  } else if (spec->schema == Need::kRequired) {
    diags_
        .Report(diag::Kind::kMissingSchema, s.connector.range,
                "`" + n + "` needs a schema for its records")
        .Help("add `as SchemaName` after the format");
  }
  if (n == "kafka" && !record.is_error()) CheckMetadata(s.connector, record, false);
  if (s.format && s.format->name.name == "protobuf" && !record.is_error())
    CheckProtobuf(*s.format, s.connector, record, false);
  if (s.event_time) {
    FlowState st;
    st.record = record;
    st.sides.push_back({"", record, {}});
    st.broken = record.is_error();
    ExprContext cx;
    cx.state = &st;
    cx.where = "in `event time`";
    types::Type t = CheckExpr(*s.event_time->expr, cx);
    if (!t.is_error() && t != types::Type::Timestamp()) {
      diags_
          .Report(diag::Kind::kEventTimeType, s.event_time->expr->range,
                  "event time must be a timestamp, found " + t.ToString())
          .Help(t.AsNonNullable() == types::Type::Timestamp()
                    ? "a nullable timestamp cannot be event time; use `coalesce(x, ...)`"
                    : "convert it, e.g. `cast(x as timestamp)` for epoch milliseconds");
    }
    CheckDuration(s.event_time->watermark, "watermark");
    if (s.event_time->idle) CheckDuration(*s.event_time->idle, "idle timeout");
    *event_time = true;
  }
  if (s.on_error && s.on_error->kind == ast::ErrorPolicyKind::kDeadLetter && s.on_error->sink) {
    ast::ConnectorCall& sink = *s.on_error->sink;
    const ConnectorSpec* ss = FindConnector(sink.name.name, false);
    if (ss == nullptr || !ss->dead_letter) {
      auto dead_letter = [](const rt::ConnectorCaps& k) { return k.sink && k.dead_letter; };
      diags_
          .Report(diag::Kind::kUnknownConnector, sink.name.range,
                  "unknown dead-letter sink `" + sink.name.name + "`")
          .Help("dead letters can go to " + rt::ConnectorKindList(dead_letter, " or "));
    } else {
      CheckConnectorArgs(sink, false);
      CheckFormat(s.on_error->format, sink, false);
    }
  }
  return record;
}

void Checker::CheckLateSink(ast::WindowOp& window, const FlowState& st) {
  ast::IntoOp& sink = *window.late_sink;
  sink.output = st.broken ? types::Type::Error() : st.record;  // late records are input records
  if (window.spec.processing_time) {
    diags_
        .Report(diag::Kind::kWindowNeedsTime, sink.range,
                "a processing-time window has no late records to route")
        .AddNote(window.spec.range, "this window counts records at their arrival time")
        .Help(
            "remove `on late into ...`, or make the window event time by removing `processing "
            "time`");
    return;
  }
  CheckSink(sink, sink.output);
  // Like a source's `format raw`: one string field per line, checked here because the record
  // type the sink gets is not written next to it.
  const auto& fields = sink.output.kind() == types::Kind::kRecord ? sink.output.fields()
                                                                  : std::vector<types::Field>{};
  if (sink.format && sink.format->name.name == "raw" && !st.broken &&
      (fields.size() != 1 || fields[0].type.AsNonNullable() != types::Type::String())) {
    diags_
        .Report(diag::Kind::kTypeMismatch, sink.format->range,
                "`format raw` needs records with exactly one string field; late records of this "
                "window are " +
                    sink.output.ToString())
        .Help("use `format json` or `format csv`");
  }
}

void Checker::CheckSink(ast::IntoOp& into, const types::Type& record) {
  const std::string& n = into.sink.name.name;
  const ConnectorSpec* spec = FindConnector(n, false);
  if (spec == nullptr) {
    std::vector<std::string> names;
    for (const ConnectorSpec& c : AllConnectors()) {
      if (!c.source) names.push_back(c.name);
    }
    auto& d = diags_.Report(diag::Kind::kUnknownConnector, into.sink.name.range,
                            FindConnector(n, true)
                                ? "`" + n + "` is a source; it cannot be written with `into`"
                                : "unknown sink `" + n + "`");
    d.Help(DidYouMean(n, names).value_or(
        "sinks are " + rt::ConnectorKindList([](const rt::ConnectorCaps& k) { return k.sink; })));
    return;
  }
  CheckConnectorArgs(into.sink, false);
  CheckFormat(into.format, into.sink, false);
  if (n == "kafka" && !record.is_error()) CheckMetadata(into.sink, record, true);
  if (into.format && into.format->name.name == "protobuf" && !record.is_error())
    CheckProtobuf(*into.format, into.sink, record, true);
  // An at-least-once sink has no transaction; its runtime factory would refuse the option only
  // when the job starts.
  if (into.delivery != ast::Delivery::kExactlyOnce) {
    for (const ast::NamedArg& a : into.sink.args) {
      auto arg = std::find_if(spec->args.begin(), spec->args.end(),
                              [&](const ArgSpec& s) { return s.name == a.name.name; });
      if (arg == spec->args.end() || !arg->exactly_once_only) continue;
      diags_
          .Report(diag::Kind::kInvalidArgument, a.name.range,
                  "`" + a.name.name + "` is for `exactly_once` " + n +
                      " sinks: an at-least-once sink has no transaction")
          .Help("write `exactly_once` after the format, or remove `" + a.name.name + ": ...`");
    }
  }
  if (into.delivery == ast::Delivery::kExactlyOnce && !spec->exactly_once) {
    diags_
        .Report(diag::Kind::kExactlyOnceUnsupported, into.delivery_range.value_or(into.range),
                "`" + n + "` cannot write exactly once")
        .Help("exactly_once is supported by " + rt::ExactlyOnceSinksText() +
              "; remove it or use at_least_once");
  }
}

}  // namespace flow::sema
