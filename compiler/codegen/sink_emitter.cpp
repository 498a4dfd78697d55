// Sinks: one encode function per sink (payload in the sink's format, and for Kafka the message
// key) and one MakeSink call carrying the delivery guarantee.
//
// The key (Kafka only) is the stream's key (plan/sink_node.h): one `string` key is its bytes as
// they are; any other key (one non-string value, or several values) is its CSV text
// ("7", "eu,42"). A null single string key means no key.
//
// A kafka sink's `metadata:` (sema/message_metadata.h) takes fields out of the payload: the key
// field replaces the stream's key, the timestamp and header fields go to the encoder's OutMeta.

#include <cctype>

#include "codegen/escape.h"
#include "codegen/sink_emitter.h"
#include "sema/message_metadata.h"

namespace flow::codegen {
namespace {

class SinkEmitter {
 public:
  SinkEmitter(IoEmitContext& cx, const plan::SinkNode& n)
      : cx_(cx),
        n_(n),
        id_(std::to_string(n.id)),
        rec_(cx.records.Cpp(n.output)),
        kind_(n.into->sink.name.name) {
    if (kind_ == "kafka") metadata_ = sema::MessageMetadataOf(n.into->sink, true);
    for (const types::Field& f : n.output.fields()) {
      if (!sema::IsMetadataField(metadata_, f.name)) payload_.push_back(&f);
    }
  }

  void Run() {
    cx_.Header(n_, "sink " + CommentText(kind_));
    std::string format = n_.into->format ? n_.into->format->name.name : "json";
    std::string fn = "Encode" + id_;
    if (format == "protobuf") ProtoFileWriter();
    cx_.w.Line("inline void " + fn + "(const " + rec_ +
               "& r, ::flow::exec::SinkEncoders& e, std::string* key, std::string* payload" +
               (metadata_.empty() ? "" : ", ::flow::rt::OutMeta* meta") + ") {");
    bool ok = format == "csv"        ? Csv()
              : format == "raw"      ? Raw()
              : format == "avro"     ? Avro()
              : format == "protobuf" ? Protobuf()
                                     : Json();
    if (!ok) {
      cx_.w.Line("}");
      return;
    }
    if (kind_ == "kafka") {
      Key();
      Meta();
    } else {
      cx_.w.Line("  (void)key;");
    }
    cx_.w.Line("}");
    std::string factory = "sink" + id_;
    std::string kind = CppStringObject(kind_);
    // A late sink reads its window's side output of late records (job_emitter.cpp, LateStream).
    std::string in = "s" + std::to_string(n_.inputs[0]) + (n_.late ? "_late" : "");
    bool registry = format == "avro" || (format == "protobuf" && !proto_file_);
    std::string header = registry ? ", std::string(*schema_header" + id_ + ")" : "";
    if (registry) Register(format);
    if (n_.delivery == ast::Delivery::kExactlyOnce) {
      // Transactional sinks are their own node kind (engine/txn_sink.h): no SinkFactory. Only the
      // sinks the connector catalog lists as exactly-once get here (plan/io_support.cpp).
      cx_.Build("if (auto st = ::flow::rt::AddExactlyOnceSink<" + rec_ + ">(job, " + in + ", " +
                cx_.Name(n_, n_.late ? "late_sink" : "sink") + ", " + kind +
                ", ::flow::exec::SinkOptions(" + kind + ", " +
                cx_.ConnectorOptions(n_.into->sink, true) + "), ::flow::exec::EncodeRecord<" +
                rec_ + ", decltype(&" + fn + ")>(&" + fn + header + ")); !st.ok()) return st;");
      return;
    }
    // Every other sink is at least once.
    cx_.Build("auto " + factory + " = ::flow::exec::MakeSink<" + rec_ + ">(" + kind +
              ", ::flow::exec::SinkOptions(" + kind + ", " +
              cx_.ConnectorOptions(n_.into->sink, true) + "), &" + fn + header + ");");
    cx_.Build("if (!" + factory + ".ok()) return " + factory + ".status();");
    cx_.Build(in + ".Sink(" + cx_.Name(n_, n_.late ? "late_sink" : "sink") + ", std::move(*" +
              factory + "));");
  }

 private:
  bool Json() {
    cx_.w.Line("  e.json.Clear();");
    if (metadata_.empty()) {
      cx_.w.Line("  " + cx_.records.JsonCodec(n_.output) + "::Write(r, &e.json);");
    } else {
      // The record's codec without the metadata fields.
      const auto& all = n_.output.fields();
      cx_.w.Line("  e.json.BeginObject();");
      for (size_t i = 0; i < all.size(); ++i) {
        if (sema::IsMetadataField(metadata_, all[i].name)) continue;
        cx_.w.Line("  e.json.QuotedField<" + cx_.records.JsonCodec(all[i].type) + ">(" +
                   QuotedJsonKey(all[i].Wire()) + ", r." + MangleIdent(all[i].name) + ");");
      }
      cx_.w.Line("  e.json.EndObject();");
    }
    // A swap, not a copy: the encoder's next Clear() reuses the buffer the payload had.
    cx_.w.Line("  payload->swap(e.json.buffer());");
    return true;
  }

  bool Csv() {
    if (n_.into->format) {
      for (const ast::NamedArg& a : n_.into->format->args) {
        if (a.name.name != "delimiter") {
          cx_.Unsupported("`format csv(" + a.name.name + ": ...)` on a sink", a.name.range);
          return false;
        }
        // Encoders are made per subtask with the default delimiter; the first record sets this one.
        ExprEmitter ex = cx_.Exprs("");
        std::string d = ex.EmitAs(*a.value, types::Type::String());
        cx_.Take(ex);
        cx_.w.Line("  static const char kDelimiter = [] { auto d = ::flow::exec::CsvDelimiter(" +
                   d + "); return d.ok() ? *d : ','; }();");
        cx_.w.Line("  if (!e.initialized) e.csv = ::flow::rt::CsvEncoder(kDelimiter);");
        cx_.w.Line("  e.initialized = true;");
        std::string check = "delimiter" + id_;
        cx_.Build("auto " + check + " = ::flow::exec::CsvDelimiter(" + d + ");");
        cx_.Build("if (!" + check + ".ok()) return " + check + ".status();");
      }
    }
    cx_.w.Line("  e.csv.Clear();");
    for (const types::Field* f : payload_) {
      std::string c = CsvCodec(f->type);
      if (c.empty()) {
        cx_.Unsupported("a " + f->type.ToString() + " field (`" + f->name + "`) in `format csv`",
                        n_.range);
        return false;
      }
      cx_.w.Line("  e.csv.Field<" + c + ">(r." + MangleIdent(f->name) + ");");
    }
    cx_.w.Line("  payload->assign(e.csv.view());");
    return true;
  }

  // The record's Avro schema is registered when the job is built; each payload is the header
  // (magic byte and schema id) and the record's Avro binary encoding.
  bool Avro() {
    for (const types::Field* f : payload_) {  // metadata fields are not in the Avro schema
      if (!AvroName(*f)) return false;
    }
    cx_.w.Line("  payload->assign(e.header);");
    cx_.w.Line("  ::flow::rt::AvroOut out(payload);");
    if (metadata_.empty()) {
      cx_.w.Line("  " + cx_.records.AvroCodec(n_.output) + "::Write(r, out);");
      return true;
    }
    for (const types::Field* f : payload_)
      cx_.w.Line("  " + cx_.records.AvroCodec(f->type) + "::Write(r." + MangleIdent(f->name) +
                 ", out);");
    if (payload_.empty()) cx_.w.Line("  (void)out;");
    return true;
  }

  // Avro names are [A-Za-z_][A-Za-z0-9_]*; readers such as Java's refuse others.
  bool AvroNames(const types::Type& t) {
    if (t.kind() == types::Kind::kList) return AvroNames(t.element());
    if (t.kind() != types::Kind::kRecord) return true;
    for (const types::Field& f : t.fields()) {
      if (!AvroName(f)) return false;
    }
    return true;
  }
  bool AvroName(const types::Field& f) {
    const std::string& name = f.Wire();
    bool ok = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
    for (char c : name) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (!ok) {
      cx_.Unsupported("field name \"" + CommentText(name) +
                          "\" in `format avro`: Avro names are letters, digits and `_`",
                      n_.range);
      return false;
    }
    return AvroNames(f.type);
  }

  // The record as a Protobuf message (the first of the registered .proto file); the header is
  // the schema id and the message index {0}.
  bool Protobuf() {
    if (std::string p = ProtobufProblem(payload_, /*sink=*/true); !p.empty()) {
      cx_.Unsupported(p, n_.range);
      return false;
    }
    cx_.w.Line("  payload->assign(e.header);");
    cx_.w.Line("  ::flow::rt::ProtoOut out(payload);");
    if (proto_file_) {
      cx_.w.Line("  const ::flow::rt::ProtoWritePlan& plan = proto_writer" + id_ + "->plan();");
      cx_.records.EmitProtobufWriteAs(cx_.w, "r", payload_, "plan", "  ");
      if (payload_.empty()) cx_.w.Line("  (void)plan;");
    } else {
      cx_.records.EmitProtobufWrite(cx_.w, "r", payload_, "  ");
    }
    if (payload_.empty()) cx_.w.Line("  (void)out;");
    return true;
  }

  // `format protobuf(proto: ..., message: ...)`: the file's text, and proto_writerN, which maps
  // the record's fields to the file message's (numbers and encodings) when the job starts.
  void ProtoFileWriter() {
    proto_file_ = cx_.ProtoFile(*n_.into->format, "kProtoFile" + id_, n_.range);
    if (!proto_file_) return;
    std::string schema = "kSchemaWriter" + id_;
    std::string writer = "proto_writer" + id_;
    cx_.w.Line("inline const std::string " + schema + " = " +
               CppStringObject(
                   cx_.records.ProtobufSchema(n_.output, metadata_.empty() ? nullptr : &payload_)) +
               ";");
    cx_.w.Line("inline std::shared_ptr<const ::flow::rt::ProtoFileWriter> " + writer + ";");
    cx_.Build("auto " + writer + "_made = ::flow::rt::ProtoFileWriter::Make(kProtoFile" + id_ +
              ", " + cx_.StringArg(n_.into->format->args, "message") + ", " + schema + ");");
    cx_.Build("if (!" + writer + "_made.ok()) return " + writer + "_made.status();");
    cx_.Build(writer + " = *" + writer + "_made;");
  }

  // schema_headerN: the registered schema's header; the subject defaults to "<topic>-value".
  void Register(const std::string& format) {
    std::string registry = cx_.StringArg(n_.into->format->args, "registry");
    std::string subject = cx_.StringArg(n_.into->format->args, "subject");
    if (subject.empty())
      subject = "std::string(" + cx_.StringArg(n_.into->sink.args, "topic") + ") + \"-value\"";
    std::string h = "schema_header" + id_;
    std::string schema = "kSchemaWriter" + id_;
    const std::vector<const types::Field*>* only = metadata_.empty() ? nullptr : &payload_;
    std::string text = format == "avro" ? cx_.records.AvroSchema(n_.output, only)
                                        : cx_.records.ProtobufSchema(n_.output, only);
    cx_.w.Line("inline const std::string " + schema + " = " + CppStringObject(text) + ";");
    std::string make = format == "avro" ? "AvroSinkHeader" : "ProtobufSinkHeader";
    cx_.Build("auto " + h + " = ::flow::rt::" + make + "(" + registry + ", " +
              cx_.StringArg(n_.into->format->args, "credentials", "std::string()") + ", " +
              subject + ", " + schema + ");");
    cx_.Build("if (!" + h + ".ok()) return " + h + ".status();");
  }

  bool Raw() {
    if (payload_.size() != 1 || payload_[0]->type.kind() != types::Kind::kString) {
      cx_.Unsupported(metadata_.empty()
                          ? "`format raw` needs a record with one string field"
                          : "`format raw` needs one string field besides the `metadata` fields",
                      n_.range);
      return false;
    }
    const types::Field& f = *payload_[0];
    std::string v = "r." + MangleIdent(f.name);
    cx_.w.Line("  (void)e;");
    cx_.w.Line("  payload->assign(" +
               (f.type.nullable() ? "(" + v + " ? *" + v + " : std::string())" : v) + ");");
    return true;
  }

  // The message key: the `metadata:` key field, or values of the key fields or of the `key by`
  // expressions.
  void Key() {
    std::vector<std::pair<std::string, types::Type>> parts;  // C++ expression, type
    ExprEmitter ex = cx_.Exprs("r");
    if (const sema::MessageMetadata* m = Find(sema::MessageMetadata::What::kKey)) {
      // string or bytes: either way the key is the value's bytes as they are.
      const types::Field* f = n_.output.FindField(m->field);
      if (f != nullptr) {
        parts.emplace_back("r." + MangleIdent(f->name), f->type.nullable()
                                                            ? types::Type::String().AsNullable()
                                                            : types::Type::String());
      }
    } else if (n_.key_by != nullptr) {
      cx_.w.FlowLine(n_.key_by->range.line);
      for (const auto& k : n_.key_by->keys) parts.emplace_back(ex.EmitAs(*k, k->type), k->type);
    } else {
      for (const std::string& name : n_.key_fields) {
        const types::Field* f = n_.output.FindField(name);
        if (f != nullptr) parts.emplace_back("r." + MangleIdent(f->name), f->type);
      }
    }
    cx_.Take(ex);
    if (parts.empty()) {
      cx_.w.Line("  key->clear();  // the stream is not keyed");
    } else if (parts.size() == 1 && parts[0].second.kind() == types::Kind::kString) {
      const std::string& v = parts[0].first;
      if (parts[0].second.nullable()) {
        cx_.w.Line("  { const auto& k = " + v + "; if (k) key->assign(*k); else key->clear(); }");
      } else {
        cx_.w.Line("  key->assign(" + v + ");");
      }
    } else {
      cx_.w.Line("  e.key.Clear();");
      for (const auto& [v, t] : parts) {
        std::string c = CsvCodec(t);
        if (c.empty()) {
          cx_.Unsupported("a " + t.ToString() + " value in a Kafka message key", n_.range);
          return;
        }
        cx_.w.Line("  e.key.Field<" + c + ">(" + v + ");");
      }
      cx_.w.Line("  key->assign(e.key.view());");
    }
    cx_.w.CppLine();
  }

  const sema::MessageMetadata* Find(sema::MessageMetadata::What what) const {
    for (const sema::MessageMetadata& m : metadata_) {
      if (m.what == what) return &m;
    }
    return nullptr;
  }

  // The message's timestamp and headers from the `metadata:` fields; a null one is left out.
  void Meta() {
    if (metadata_.empty()) return;
    for (const sema::MessageMetadata& m : metadata_) {
      const types::Field* f = n_.output.FindField(m.field);
      if (f == nullptr) continue;
      const std::string v = "r." + MangleIdent(f->name);
      const std::string value = f->type.nullable() ? "*" + v : v;
      const std::string open = f->type.nullable() ? "  if (" + v + ") " : "  ";
      switch (m.what) {
        case sema::MessageMetadata::What::kTimestamp:
          cx_.w.Line(open + "meta->timestamp = " + value + ";");
          break;
        case sema::MessageMetadata::What::kHeader:
          cx_.w.Line(open + "meta->headers.push_back(::flow::rt::OutHeader{" +
                     CppStringObject(m.header) + ", " + value + "});");
          break;
        default:
          break;
      }
    }
  }

  IoEmitContext& cx_;
  const plan::SinkNode& n_;
  std::string id_;
  std::string rec_;
  std::string kind_;
  std::vector<sema::MessageMetadata> metadata_;  // a kafka sink's `metadata:`
  std::vector<const types::Field*> payload_;     // the fields the format writes
  bool proto_file_ = false;  // `format protobuf(proto: ...)`: plain messages of the file's message
};

}  // namespace

void EmitSink(IoEmitContext cx, const plan::SinkNode& n) {
  SinkEmitter(cx, n).Run();
}

}  // namespace flow::codegen
