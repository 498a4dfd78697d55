// Sources: a decoder per format (json, csv, raw, avro, protobuf) over the byte-level connectors
// (file, stdin, kafka) with the `on error` policy, a fill function for datagen, a converter for
// nexmark; then the job.Source call with the event-time function and watermark settings.

#include <algorithm>
#include <filesystem>

#include "codegen/escape.h"
#include "codegen/node_text.h"
#include "codegen/source_emitter.h"
#include "plan/state_schema.h"
#include "sema/connectors.h"
#include "sema/message_metadata.h"
#include "sema/protobuf_types.h"

namespace flow::codegen {

ExprEmitter IoEmitContext::Exprs(const std::string& record) const {
  ExprScope scope;
  scope.record = record;
  scope.flow_file = std::filesystem::path(options.flow_file).filename().string();
  return ExprEmitter(records, scope);
}

void IoEmitContext::Header(const plan::Node& n, const std::string& what) {
  NodeHeader(w, n, what, options.flow_file);
}

std::string IoEmitContext::StringArg(const std::vector<ast::NamedArg>& args,
                                     const std::string& name, const std::string& absent) {
  for (const ast::NamedArg& a : args) {
    if (a.name.name != name) continue;
    ExprEmitter ex = Exprs("");
    std::string v = ex.EmitAs(*a.value, types::Type::String());
    Take(ex);
    return v;
  }
  return absent;
}

bool IoEmitContext::ProtoFile(const ast::FormatClause& f, const std::string& name,
                              const diag::SourceRange& where) {
  for (const ast::NamedArg& a : f.args) {
    const auto* lit = ast::As<ast::LiteralExpr>(a.value.get());
    if (a.name.name != "proto" || lit == nullptr) continue;
    std::string text, error;
    if (!sema::ReadProtoFile(options.flow_file, lit->string_value, &text, &error)) {
      Unsupported(error, where);
      return false;
    }
    w.Line("inline const std::string " + name + " = " + CppStringObject(text) + ";");
    return true;
  }
  return false;
}

std::string IoEmitContext::ConnectorOptions(const ast::ConnectorCall& c, bool sink) {
  std::string s = "{";
  ExprEmitter ex = Exprs("");
  const sema::ConnectorSpec* spec = sema::FindConnector(c.name.name, !sink);
  for (const ast::NamedArg& a : c.args) {
    const std::string& key = a.name.name;
    if (spec != nullptr &&
        std::any_of(spec->args.begin(), spec->args.end(),
                    [&](const sema::ArgSpec& s) { return s.name == key && s.generated; })) {
      continue;  // e.g. `metadata:`: generated code does what it says
    }
    const auto* bare = ast::As<ast::NameExpr>(a.value.get());
    if (bare != nullptr && bare->target != ast::NameTarget::kParam) {
      s += "{" + CppStringObject(key) + ", " + CppStringObject(bare->name) + "}, ";  // `kind: bid`
      continue;
    }
    s += "{" + CppStringObject(key) + ", ::flow::exec::OptionText(" +
         ex.EmitAs(*a.value, a.value->type.AsNonNullable()) + ")}, ";
  }
  Take(ex);
  return s + "}";
}

std::string CsvCodec(const types::Type& t) {
  std::string base;
  switch (t.kind()) {
    case types::Kind::kBool:
      base = "::flow::rt::CsvBool";
      break;
    case types::Kind::kInt:
      base = "::flow::rt::CsvInt";
      break;
    case types::Kind::kFloat:
      base = "::flow::rt::CsvFloat";
      break;
    case types::Kind::kString:
      base = "::flow::rt::CsvString";
      break;
    case types::Kind::kBytes:
      base = "::flow::rt::CsvBytes";
      break;
    case types::Kind::kTimestamp:
      base = "::flow::rt::CsvTimestamp";
      break;
    case types::Kind::kDuration:
      base = "::flow::rt::CsvDuration";
      break;
    default:
      return "";
  }
  return t.nullable() ? "::flow::rt::CsvNullable<" + base + ">" : base;
}

std::string IoEmitContext::Name(const plan::Node& n, const char* what) const {
  return CppStringLiteral(plan::OperatorName(n, what));
}

namespace {

class SourceEmitter {
 public:
  SourceEmitter(IoEmitContext& cx, const plan::SourceNode& n)
      : cx_(cx),
        n_(n),
        src_(*n.source),
        id_(std::to_string(n.id)),
        rec_(cx.records.Cpp(n.output)),
        metadata_(sema::MessageMetadataOf(n.source->connector, false)) {}

  void Run() {
    const std::string& kind = src_.connector.name.name;
    cx_.Header(n_, "source " + CommentText(kind));
    std::string factory = "source" + id_;
    bool ok = kind == "nexmark"   ? Nexmark(factory)
              : kind == "datagen" ? Datagen(factory)
                                  : Connector(factory);
    if (ok) SourceCall(factory);
  }

 private:
  // nexmark(kind: ...): the generator's events converted field by field (the built-in schemas
  // use the generator's member names).
  bool Nexmark(const std::string& factory) {
    const std::string& name = n_.output.record_name();
    std::string member = name == "Bid"       ? "bid"
                         : name == "Auction" ? "auction"
                         : name == "Person"  ? "person"
                                             : "";
    if (member.empty()) {
      cx_.Unsupported("a nexmark source whose `kind` is not a literal", src_.range);
      return false;
    }
    std::string fn = "FromNexmark" + id_;
    cx_.w.Line("inline void " + fn + "(::flow::rt::NexmarkEvent& e, " + rec_ + "* out) {");
    for (const types::Field& f : n_.output.fields()) {
      if (!n_.decoded.count(f.name)) continue;
      cx_.w.Line("  out->" + MangleIdent(f.name) + " = std::move(e." + member + "." + f.name +
                 ");");
    }
    cx_.w.Line("}");
    std::string args = "args" + id_;
    cx_.Build("auto " + args + " = ::flow::rt::ParseNexmarkArgs(" +
              cx_.ConnectorOptions(src_.connector, false) + ");");
    cx_.Build("if (!" + args + ".ok()) return " + args + ".status();");
    cx_.Build("auto " + factory + " = ::flow::rt::NexmarkSourceFactory<" + rec_ + ">(" + args +
              "->config, " + args + "->kind, &" + fn + ");");
    cx_.Build("if (!" + factory + ".ok()) return " + factory + ".status();");
    return true;
  }

  // One value of type `t` for field `field`, drawn from `rng` (docs/language.md, datagen). Every
  // field is drawn, decoded or not, so values do not depend on which fields the job reads.
  std::string Draw(const types::Type& t, const std::string& field) {
    std::string cpp = cx_.records.Cpp(t);
    if (t.nullable()) {
      return "[&]() -> " + cpp + " { if (rng.IsNull()) return std::nullopt; return " +
             Draw(t.AsNonNullable(), field) + "; }()";
    }
    switch (t.kind()) {
      case types::Kind::kString:
        return "rng.VocabString(" + CppStringLiteral(field) + ")";
      case types::Kind::kInt:
        return "rng.Int()";
      case types::Kind::kFloat:
        return "rng.NextFloat(0.0, 1.0)";
      case types::Kind::kBool:
        return "rng.NextBool()";
      case types::Kind::kBytes:
        return "::flow::exec::DatagenBytes(rng)";
      case types::Kind::kDuration:
        return "::flow::exec::DatagenDuration(rng)";
      case types::Kind::kTimestamp:
        return "rng.Timestamp()";
      case types::Kind::kList:
        return "[&] { " + cpp +
               " v(static_cast<size_t>(rng.ListLength())); for (auto& x : v) x = " +
               Draw(t.element(), field) + "; return v; }()";
      default:
        cx_.Unsupported("a " + t.ToString() + " field in a datagen schema", src_.range);
        return "{}";
    }
  }

  bool Datagen(const std::string& factory) {
    std::string fn = "Generate" + id_;
    cx_.w.Line("inline void " + fn + "(::flow::rt::DatagenRng& rng, " + rec_ + "* out) {");
    for (const types::Field& f : n_.output.fields()) {
      std::string value = Draw(f.type, f.name);
      if (n_.decoded.count(f.name)) {
        cx_.w.Line("  out->" + MangleIdent(f.name) + " = " + value + ";");
      } else {
        cx_.w.Line("  (void)" + value + ";  // " + CommentText(f.name) + ": drawn, not used");
      }
    }
    cx_.w.Line("}");
    std::string args = "args" + id_;
    cx_.Build("auto " + args + " = ::flow::rt::ParseDatagenArgs(" +
              cx_.ConnectorOptions(src_.connector, false) + ");");
    cx_.Build("if (!" + args + ".ok()) return " + args + ".status();");
    cx_.Build("auto " + factory + " = ::flow::rt::DatagenSourceFactory<" + rec_ + ">(*" + args +
              ", &" + fn + ");");
    cx_.Build("if (!" + factory + ".ok()) return " + factory + ".status();");
    return true;
  }

  // Fields the message's metadata fills (`metadata:` on a kafka source): not in the payload.
  bool IsMetadata(const std::string& field) const {
    return sema::IsMetadataField(metadata_, field);
  }

  std::vector<const types::Field*> Decoded() const {
    std::vector<const types::Field*> fields;
    for (const types::Field& f : n_.output.fields()) {
      if (n_.decoded.count(f.name) && !IsMetadata(f.name)) fields.push_back(&f);
    }
    return fields;
  }

  // Status FillMetaN(const RawRecord&, Rec*): the metadata fields, after the payload's decoder.
  std::string WithMetadata(const std::string& make) {
    if (metadata_.empty()) return make;
    std::string fn = "FillMeta" + id_;
    auto& w = cx_.w;
    w.Line("inline ::flow::rt::Status " + fn + "(const ::flow::rt::RawRecord& r, " + rec_ +
           "* out) {");
    bool any = false;
    for (const sema::MessageMetadata& m : metadata_) {
      const types::Field* f = n_.output.FindField(m.field);
      if (f == nullptr || !n_.decoded.count(f->name)) continue;  // unused by the job
      any = true;
      std::string dst = "out->" + MangleIdent(f->name);
      std::string field = CppStringLiteral(f->name);
      bool nullable = f->type.nullable();
      auto absent = [&](const std::string& what) {
        return nullable ? dst + ".reset();"
                        : "return ::flow::exec::MissingMetadata(" + CppStringLiteral(what) + ", " +
                              field + ");";
      };
      std::string utf8 = f->type.AsNonNullable() == types::Type::String() ? "true" : "false";
      std::string target = nullable ? "&" + dst + ".emplace()" : "&" + dst;
      switch (m.what) {
        case sema::MessageMetadata::What::kKey:
          w.Line("  if (r.has_key) { FLOW_RETURN_IF_ERROR(::flow::exec::MetadataBytes(r.key, " +
                 utf8 + ", \"key\", " + target + ")); } else { " + absent("key") + " }");
          break;
        case sema::MessageMetadata::What::kHeader: {
          std::string what = "header " + m.header;
          // The name is made once, not per record.
          w.Line("  { static const std::string name = " + CppStringObject(m.header) +
                 "; std::string_view v; if (r.headers != nullptr && r.headers->Last(name, &v)) { "
                 "FLOW_RETURN_IF_ERROR(::flow::exec::MetadataBytes(v, " +
                 utf8 + ", " + CppStringLiteral(what) + ", " + target + ")); } else { " +
                 absent(what) + " } }");
          break;
        }
        case sema::MessageMetadata::What::kTimestamp:
          w.Line("  if (r.timestamp != ::flow::rt::kNoTimestamp) { " + dst +
                 " = r.timestamp; } else { " + absent("timestamp") + " }");
          break;
        case sema::MessageMetadata::What::kPartition:
          w.Line("  " + dst + " = r.partition;");
          break;
        case sema::MessageMetadata::What::kOffset:
          w.Line("  " + dst + " = r.offset;");
          break;
      }
    }
    if (!any) w.Line("  (void)r; (void)out;");
    w.Line("  return ::flow::rt::Status::Ok();");
    w.Line("}");
    return "[m = " + make + "] { return ::flow::exec::MetadataDecoder<" + rec_ +
           ", decltype(m()), decltype(&" + fn + ")>(m(), &" + fn + "); }";
  }

  // Status DecodeN(JsonDecoder&, std::string_view, Rec*): only the decoded fields are looked up.
  std::string JsonDecoder() {
    std::string fn = "Decode" + id_;
    std::vector<const types::Field*> fields = Decoded();
    std::string names, required;
    for (size_t i = 0; i < fields.size(); ++i) {
      names += (i ? ", " : "") + CppStringLiteral(fields[i]->Wire());
      required += std::string(i ? ", " : "") + (fields[i]->type.nullable() ? "false" : "true");
    }
    std::string cnt = std::to_string(fields.size());
    std::string table = "kDecoded" + id_;
    auto& w = cx_.w;
    if (fields.empty()) {
      w.Line("inline ::flow::rt::Status " + fn +
             "(::flow::rt::JsonDecoder& d, std::string_view payload, " + rec_ + "* out) {");
      w.Line("  (void)out;");
      w.Line("  FLOW_RETURN_IF_ERROR(d.Begin(payload));");
      w.Line("  std::string_view key;");
      w.Line("  while (d.NextField(&key)) {}");
      w.Line("  return d.End();");
      w.Line("}");
    } else {
      w.Line("inline constexpr ::flow::rt::JsonFieldTable<" + cnt + "> " + table + "{{" + names +
             "}, {" + required + "}};");
      w.Line("inline ::flow::rt::Status " + fn +
             "(::flow::rt::JsonDecoder& d, std::string_view payload, " + rec_ + "* out) {");
      w.Line("  FLOW_RETURN_IF_ERROR(d.Begin(payload));");
      w.Line("  std::bitset<" + cnt + "> seen;");
      w.Line("  std::string_view key;");
      w.Line("  while (d.NextField(&key)) {");
      w.Line("    switch (" + table + ".Find(key)) {");
      for (size_t i = 0; i < fields.size(); ++i) {
        std::string idx = std::to_string(i);
        w.Line("      case " + idx + ": FLOW_RETURN_IF_ERROR(d.Read<" +
               cx_.records.JsonCodec(fields[i]->type) + ">(" + table + ".names[" + idx +
               "], &out->" + MangleIdent(fields[i]->name) + ")); seen.set(" + idx + "); break;");
      }
      w.Line("      default: break;");
      w.Line("    }");
      w.Line("  }");
      w.Line("  FLOW_RETURN_IF_ERROR(d.End());");
      for (size_t i = 0; i < fields.size(); ++i) {
        if (fields[i]->type.nullable()) {
          w.Line("  if (!seen[" + std::to_string(i) + "]) out->" + MangleIdent(fields[i]->name) +
                 ".reset();");
        }
      }
      w.Line("  return d.CheckRequired(" + table + ", seen);");
      w.Line("}");
    }
    return "[] { return ::flow::exec::JsonRecordDecoder<" + rec_ + ", decltype(&" + fn + ")>(&" +
           fn + "); }";
  }

  // Status DecodeCsvN(CsvDecoder&, Rec*): reads the decoded fields by schema position.
  std::string CsvDecoder() {
    std::string fn = "DecodeCsv" + id_;
    std::vector<types::Field> all;  // the columns: every field but the metadata ones
    for (const types::Field& f : n_.output.fields()) {
      if (!IsMetadata(f.name)) all.push_back(f);
    }
    std::string names, required;
    for (size_t i = 0; i < all.size(); ++i) {
      names += (i ? ", " : "") + CppStringLiteral(all[i].Wire());
      // Only the fields the job reads must have a column.
      bool needed = n_.decoded.count(all[i].name) && !all[i].type.nullable();
      required += std::string(i ? ", " : "") + (needed ? "true" : "false");
    }
    std::string cnt = std::to_string(all.size());
    auto& w = cx_.w;
    w.Line("inline constexpr std::array<std::string_view, " + cnt + "> kCsvNames" + id_ + "{" +
           names + "};");
    w.Line("inline constexpr std::array<bool, " + cnt + "> kCsvRequired" + id_ + "{" + required +
           "};");
    w.Line("inline ::flow::rt::Status " + fn + "(::flow::rt::CsvDecoder& d, " + rec_ + "* out) {");
    bool any = false;
    for (size_t i = 0; i < all.size(); ++i) {
      if (!n_.decoded.count(all[i].name)) continue;
      std::string codec = CsvCodec(all[i].type);
      if (codec.empty()) {
        cx_.Unsupported(
            "a " + all[i].type.ToString() + " field (`" + all[i].name + "`) in `format csv`",
            src_.range);
        continue;
      }
      any = true;
      w.Line("  FLOW_RETURN_IF_ERROR(d.Read<" + codec + ">(" + std::to_string(i) + ", &out->" +
             MangleIdent(all[i].name) + "));");
    }
    if (!any) w.Line("  (void)d; (void)out;");
    w.Line("  return ::flow::rt::Status::Ok();");
    w.Line("}");
    // Format arguments are constants (literals or params).
    std::string format = "csv" + id_;
    cx_.Build("::flow::exec::CsvFormat " + format + ";");
    ExprEmitter ex = cx_.Exprs("");
    for (const ast::NamedArg& a : src_.format->args) {
      if (a.name.name == "header") {
        cx_.Build(format + ".header = " + ex.EmitAs(*a.value, types::Type::Bool()) + ";");
      } else if (a.name.name == "delimiter") {
        std::string d = "delimiter" + id_;
        cx_.Build("auto " + d + " = ::flow::exec::CsvDelimiter(" +
                  ex.EmitAs(*a.value, types::Type::String()) + ");");
        cx_.Build("if (!" + d + ".ok()) return " + d + ".status();");
        cx_.Build(format + ".delimiter = *" + d + ";");
      }
    }
    cx_.Take(ex);
    return "[" + format + "] { return ::flow::exec::CsvRecordDecoder<" + rec_ + ", decltype(&" +
           fn + ")>(&" + fn + ", " + format + ", kCsvNames" + id_ + ", kCsvRequired" + id_ + "); }";
  }

  // Status DecodeAvroN(AvroIn&, const AvroResolved&, Rec*), or for Protobuf
  // DecodeProtobufN(ProtoIn&, const ProtoMessage&, Rec*), and the reader of the registry's
  // schemas: the reader schema (Avro's, or a .proto whose first message is the record) holds only
  // the decoded fields, so the writer's others are skipped, and only those must be in its schema.
  std::string RegistryDecoder(const std::string& format) {
    std::vector<const types::Field*> fields = Decoded();
    bool avro = format == "avro";
    if (std::string p = avro ? "" : ProtobufProblem(fields, /*sink=*/false); !p.empty()) {
      cx_.Unsupported(p, src_.range);
      return "";
    }
    std::string kind = avro ? "Avro" : "Protobuf";
    std::string fn = "Decode" + kind + id_;
    std::string schema = "k" + kind + "Reader" + id_;
    auto& w = cx_.w;
    w.Line("inline const std::string " + schema + " = " +
           CppStringObject(avro ? cx_.records.AvroSchema(n_.output, &fields)
                                : cx_.records.ProtobufSchema(n_.output, &fields)) +
           ";");
    w.Line("inline ::flow::rt::Status " + fn +
           (avro ? "(::flow::rt::AvroIn& in, const ::flow::rt::AvroResolved& r, "
                 : "(::flow::rt::ProtoIn& in, const ::flow::rt::ProtoMessage& m, ") +
           rec_ + "* out) {");
    if (avro) {
      cx_.records.EmitAvroRead(w, fields, "  ");
    } else {
      cx_.records.EmitProtobufRead(w, fields, "  ");
    }
    w.Line("}");
    std::string reader = format + id_;
    if (!avro && cx_.ProtoFile(*src_.format, "kProtoFile" + id_, src_.range)) {
      // Plain messages of the file's message, resolved once when the job starts.
      cx_.Build("auto " + reader + " = ::flow::rt::ProtobufFileResolution(kProtoFile" + id_ + ", " +
                cx_.StringArg(src_.format->args, "message") + ", " + schema + ");");
      cx_.Build("if (!" + reader + ".ok()) return " + reader + ".status();");
      return "[reader = *" + reader + "] { return ::flow::exec::ProtobufPlainDecoder<" + rec_ +
             ", decltype(&" + fn + ")>(&" + fn + ", reader); }";
    }
    if (!cx_.error.empty()) return "";
    cx_.Build("auto " + reader + " = ::flow::rt::" + kind + "Reader::Make(" +
              cx_.StringArg(src_.format->args, "registry") + ", " +
              cx_.StringArg(src_.format->args, "credentials", "std::string()") + ", " + schema +
              ");");
    cx_.Build("if (!" + reader + ".ok()) return " + reader + ".status();");
    return "[reader = *" + reader + "] { return ::flow::exec::" + kind + "RecordDecoder<" + rec_ +
           ", decltype(&" + fn + ")>(&" + fn + ", reader); }";
  }

  std::string RawDecoder() {
    const auto& all = n_.output.fields();
    if (all.size() != 1 || all[0].type.kind() != types::Kind::kString) {
      cx_.Unsupported("`format raw` needs a schema with one string field", src_.range);
      return "";
    }
    std::string fn = "DecodeRaw" + id_;
    cx_.w.Line("inline ::flow::rt::Status " + fn + "(const ::flow::rt::RawRecord& raw, " + rec_ +
               "* out) {");
    cx_.w.Line("  out->" + MangleIdent(all[0].name) +
               ".assign(raw.payload.data(), raw.payload.size());");
    cx_.w.Line("  return ::flow::rt::Status::Ok();");
    cx_.w.Line("}");
    return "[] { return ::flow::exec::RawRecordDecoder<" + rec_ + ", decltype(&" + fn + ")>(&" +
           fn + "); }";
  }

  // The `on error` policy; dead letters go to a connector built like a sink's.
  std::string Policy() {
    std::string p = "errors" + id_;
    std::string where = std::filesystem::path(cx_.options.flow_file).filename().string() + ":" +
                        std::to_string(src_.range.line);
    cx_.Build("::flow::exec::ErrorPolicy " + p + ";");
    cx_.Build(p + ".source = " + CppStringObject("source at " + where) + ";");
    if (!src_.on_error) return p;
    switch (src_.on_error->kind) {
      case ast::ErrorPolicyKind::kFail:
        break;
      case ast::ErrorPolicyKind::kSkip:
        cx_.Build(p + ".on_error = ::flow::exec::OnError::kSkip;");
        break;
      case ast::ErrorPolicyKind::kDeadLetter: {
        const ast::ConnectorCall& sink = *src_.on_error->sink;
        std::string dl = "dead_letter" + id_;
        std::string kind = CppStringObject(sink.name.name);
        cx_.Build("auto " + dl + " = ::flow::exec::RawSinkFactoryFor(" + kind +
                  ", ::flow::exec::SinkOptions(" + kind + ", " + cx_.ConnectorOptions(sink, true) +
                  "));");
        cx_.Build("if (!" + dl + ".ok()) return " + dl + ".status();");
        cx_.Build(p + ".on_error = ::flow::exec::OnError::kDeadLetter;");
        cx_.Build(p + ".dead_letter = std::move(*" + dl + ");");
        break;
      }
    }
    return p;
  }

  bool Connector(const std::string& factory) {
    std::string format = plan::SourceFormat(src_);
    std::string make = format == "csv"                            ? CsvDecoder()
                       : format == "raw"                          ? RawDecoder()
                       : format == "avro" || format == "protobuf" ? RegistryDecoder(format)
                                                                  : JsonDecoder();
    if (make.empty()) return false;
    make = WithMetadata(make);
    std::string policy = Policy();
    std::string kind = CppStringObject(src_.connector.name.name);
    std::string opts = "options" + id_;
    std::string header = format == "csv" ? "csv" + id_ + ".header" : "false";
    cx_.Build("auto " + opts + " = ::flow::exec::SourceOptions(" + kind + ", " +
              cx_.ConnectorOptions(src_.connector, false) + ", " + CppStringObject(format) + ", " +
              header + ");");
    cx_.Build("if (!" + opts + ".ok()) return " + opts + ".status();");
    cx_.Build("auto " + factory + " = ::flow::exec::MakeDecodingSource<" + rec_ + ">(" + kind +
              ", std::move(*" + opts + "), " + make + ", std::move(" + policy + "));");
    cx_.Build("if (!" + factory + ".ok()) return " + factory + ".status();");
    return true;
  }

  // The job.Source call with watermarks and the event-time function.
  void SourceCall(const std::string& factory) {
    std::string spec = "spec" + id_;
    std::string s = "s" + id_;
    cx_.Build("::flow::rt::WatermarkSpec " + spec + ";");
    std::string parallelism = src_.connector.name.name == "stdin" ? "1" : "0";
    if (src_.event_time) {
      std::string ts = "EventTime" + id_;
      ExprEmitter ex = cx_.Exprs("r");
      cx_.w.Line("inline ::flow::rt::TimestampMs " + ts + "(const " + rec_ + "& r) {");
      cx_.w.FlowLine(src_.event_time->range.line);
      cx_.w.Line("  return ::flow::exec::ops::As<int64_t>(" + ex.Emit(*src_.event_time->expr) +
                 ");");
      cx_.w.CppLine();
      cx_.w.Line("}");
      cx_.Take(ex);
      cx_.Build(spec + ".max_out_of_orderness = " + CppDuration(src_.event_time->watermark) + ";");
      if (src_.event_time->idle)
        cx_.Build(spec + ".idle_timeout = " + CppDuration(*src_.event_time->idle) + ";");
      cx_.Build("auto " + s + " = job.Source<" + rec_ + ">(" + cx_.Name(n_, "source") +
                ", std::move(*" + factory + "), " + spec + ", " + parallelism + ", [](const " +
                rec_ + "& r) { return " + ts + "(r); });");
    } else {
      cx_.Build(spec + ".mode = ::flow::rt::TimeMode::kNone;");
      cx_.Build("auto " + s + " = job.Source<" + rec_ + ">(" + cx_.Name(n_, "source") +
                ", std::move(*" + factory + "), " + spec + ", " + parallelism + ");");
    }
  }

  IoEmitContext& cx_;
  const plan::SourceNode& n_;
  const ast::Source& src_;
  std::string id_;
  std::string rec_;
  std::vector<sema::MessageMetadata> metadata_;
};

}  // namespace

void EmitSource(IoEmitContext cx, const plan::SourceNode& n) {
  SourceEmitter(cx, n).Run();
}

}  // namespace flow::codegen
