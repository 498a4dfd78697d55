#include "flow/runtime/formats/protobuf_schema.h"

#include <fmt/format.h>
#include <google/protobuf/compiler/parser.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <algorithm>

#include "flow/runtime/formats/value_text.h"

namespace flow::rt {

namespace pb = google::protobuf;

namespace {

// Keeps the first error of the tokenizer, the parser and the pool, with where it is.
class FirstError : public pb::io::ErrorCollector, public pb::DescriptorPool::ErrorCollector {
 public:
  void AddError(int line, pb::io::ColumnNumber column, const std::string& message) override {
    if (text.empty()) text = fmt::format("line {}:{}: {}", line + 1, column + 1, message);
  }
  void AddError(const std::string& /*filename*/, const std::string& element,
                const pb::Message* /*descriptor*/, ErrorLocation /*location*/,
                const std::string& message) override {
    if (text.empty()) text = element.empty() ? message : fmt::format("{}: {}", element, message);
  }
  std::string text;
};

// Confluent's clients register a serialized FileDescriptorProto in base64; people and other
// clients register .proto text. Base64 has no blanks or ';', which every .proto text has.
bool FromBase64(std::string_view text, pb::FileDescriptorProto* out) {
  if (text.empty() || text.find_first_of(" \t\r\n;{") != std::string_view::npos) return false;
  std::string bytes;
  return DecodeBase64(text, &bytes) && out->ParseFromString(bytes);
}

Status SchemaError(const std::string& what) {
  return Status::InvalidArgument("protobuf schema: " + what);
}

}  // namespace

ProtoSchema::~ProtoSchema() = default;

Result<std::shared_ptr<const ProtoSchema>> ProtoSchema::Parse(std::string_view text) {
  pb::FileDescriptorProto proto;
  FirstError errors;
  if (!FromBase64(text, &proto)) {
    pb::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
    pb::io::Tokenizer tokenizer(&input, &errors);
    pb::compiler::Parser parser;
    parser.RecordErrorsTo(&errors);
    if (!parser.Parse(&tokenizer, &proto) || !errors.text.empty())
      return SchemaError(errors.text.empty() ? "cannot be parsed" : errors.text);
  }
  for (const std::string& dep : proto.dependency()) {
    if (dep.rfind("google/protobuf/", 0) != 0) {
      return SchemaError(
          fmt::format("imports \"{}\": schema references (imports other than the well-known types "
                      "google/protobuf/*.proto) are not supported",
                      dep));
    }
  }
  if (proto.name().empty()) proto.set_name("flow_schema.proto");
  std::shared_ptr<ProtoSchema> schema(new ProtoSchema());
  // The generated pool underneath gives the well-known types libprotobuf itself is built with.
  schema->pool_ = std::make_unique<pb::DescriptorPool>(pb::DescriptorPool::generated_pool());
  schema->file_ = schema->pool_->BuildFileCollectingErrors(proto, &errors);
  if (schema->file_ == nullptr) return SchemaError(errors.text.empty() ? "invalid" : errors.text);
  return std::shared_ptr<const ProtoSchema>(std::move(schema));
}

Result<const pb::Descriptor*> ProtoSchema::MessageAt(const std::vector<int32_t>& path) const {
  const pb::Descriptor* m = nullptr;
  for (size_t i = 0; i < path.size(); ++i) {
    int count = m == nullptr ? file_->message_type_count() : m->nested_type_count();
    if (path[i] < 0 || path[i] >= count) {
      return Status::InvalidArgument(fmt::format(
          "message index {} at depth {} is out of range: {} has {} message types", path[i], i,
          m == nullptr ? "the schema" : "message `" + m->full_name() + "`", count));
    }
    m = m == nullptr ? file_->message_type(path[i]) : m->nested_type(path[i]);
  }
  if (m == nullptr) return Status::InvalidArgument("an empty message index path");
  return m;
}

const ProtoField* ProtoMessage::FindLarge(uint64_t number) const {
  auto it = std::lower_bound(large.begin(), large.end(), number,
                             [](const auto& e, uint64_t n) { return e.first < n; });
  return it != large.end() && it->first == number ? &it->second : nullptr;
}

class ProtoResolver {
 public:
  explicit ProtoResolver(ProtoResolution* out) : out_(out) {}

  Result<const ProtoMessage*> Message(const pb::Descriptor* w, const pb::Descriptor* r,
                                      const std::string& path) {
    ProtoMessage& m = out_->messages_.emplace_back();
    m.defaulted.assign(static_cast<size_t>(r->field_count()), 0);
    m.default_text.assign(static_cast<size_t>(r->field_count()), "");
    for (int i = 0; i < r->field_count(); ++i) {
      const pb::FieldDescriptor* rf = r->field(i);
      std::string at = path.empty() ? rf->name() : path + "." + rf->name();
      bool nullable = rf->has_optional_keyword();
      const pb::FieldDescriptor* wf = w->FindFieldByName(rf->name());
      if (wf == nullptr) {
        if (nullable || rf->is_repeated()) continue;  // always null, or empty
        return Status::InvalidArgument(fmt::format(
            "field `{}`: the writer's message `{}` has no field `{}`, and the script's field is "
            "not nullable (declare it with `?`)",
            at, w->full_name(), rf->name()));
      }
      if (wf->is_repeated() && !rf->is_repeated()) {
        return Status::InvalidArgument(fmt::format(
            "field `{}`: the writer's field is repeated; declare the script's field as a list",
            at));
      }
      ProtoField f;
      f.reader_field = i;
      FLOW_RETURN_IF_ERROR(Kind(wf, rf, at, &f));
      if ((nullable && !wf->has_presence()) || rf->is_repeated())
        m.defaulted[static_cast<size_t>(i)] = 1;
      // An enum left off the wire is its value numbered 0 (proto3) or its first (proto2).
      if (f.enum_type != nullptr && !wf->is_repeated())
        m.default_text[static_cast<size_t>(i)] = wf->default_value_enum()->name();
      auto number = static_cast<uint64_t>(wf->number());
      if (number < ProtoMessage::kDirect) {
        if (m.by_number.size() <= number) m.by_number.resize(number + 1);
        m.by_number[number] = f;
      } else {
        m.large.emplace_back(number, f);
      }
    }
    std::sort(m.large.begin(), m.large.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    return &m;
  }

 private:
  static bool IsInteger(ProtoKind k) { return k <= ProtoKind::kEnum; }

  static std::string WriterType(const pb::FieldDescriptor* wf) {
    if (wf->type() == pb::FieldDescriptor::TYPE_MESSAGE)
      return fmt::format("message `{}`", wf->message_type()->full_name());
    if (wf->type() == pb::FieldDescriptor::TYPE_ENUM)
      return fmt::format("enum `{}`", wf->enum_type()->full_name());
    return wf->type_name();
  }

  static std::string ReaderType(const pb::FieldDescriptor* rf) {
    switch (rf->type()) {
      case pb::FieldDescriptor::TYPE_INT64:
        return "int";
      case pb::FieldDescriptor::TYPE_DOUBLE:
        return "float";
      case pb::FieldDescriptor::TYPE_MESSAGE:
        if (rf->message_type()->full_name() == "google.protobuf.Timestamp") return "timestamp";
        if (rf->message_type()->full_name() == "google.protobuf.Duration") return "duration";
        return "a record";
      default:
        return rf->type_name();
    }
  }

  static Result<ProtoKind> WriterKind(const pb::FieldDescriptor* wf) {
    using F = pb::FieldDescriptor;
    switch (wf->type()) {
      case F::TYPE_INT32:
        return ProtoKind::kInt32;
      case F::TYPE_INT64:
        return ProtoKind::kInt64;
      case F::TYPE_UINT32:
        return ProtoKind::kUint32;
      case F::TYPE_UINT64:
        return ProtoKind::kUint64;
      case F::TYPE_SINT32:
        return ProtoKind::kSint32;
      case F::TYPE_SINT64:
        return ProtoKind::kSint64;
      case F::TYPE_FIXED32:
        return ProtoKind::kFixed32;
      case F::TYPE_FIXED64:
        return ProtoKind::kFixed64;
      case F::TYPE_SFIXED32:
        return ProtoKind::kSfixed32;
      case F::TYPE_SFIXED64:
        return ProtoKind::kSfixed64;
      case F::TYPE_ENUM:
        return ProtoKind::kEnum;
      case F::TYPE_BOOL:
        return ProtoKind::kBool;
      case F::TYPE_FLOAT:
        return ProtoKind::kFloat;
      case F::TYPE_DOUBLE:
        return ProtoKind::kDouble;
      case F::TYPE_STRING:
        return ProtoKind::kString;
      case F::TYPE_BYTES:
        return ProtoKind::kBytes;
      case F::TYPE_MESSAGE: {
        const std::string& name = wf->message_type()->full_name();
        if (name == "google.protobuf.Timestamp") return ProtoKind::kTimestamp;
        if (name == "google.protobuf.Duration") return ProtoKind::kDuration;
        return ProtoKind::kMessage;
      }
      case F::TYPE_GROUP:
        break;
    }
    return Status::InvalidArgument("groups (proto2) are not supported");
  }

  Status Kind(const pb::FieldDescriptor* wf, const pb::FieldDescriptor* rf, const std::string& at,
              ProtoField* f) {
    using F = pb::FieldDescriptor;
    auto kind = WriterKind(wf);
    if (!kind.ok())
      return Status::InvalidArgument(fmt::format("field `{}`: {}", at, kind.status().message()));
    f->kind = *kind;
    ProtoKind k = *kind;
    bool ok = false;
    switch (rf->type()) {
      case F::TYPE_INT64:
        ok = IsInteger(k);
        break;
      case F::TYPE_DOUBLE:
        ok = IsInteger(k) || k == ProtoKind::kFloat || k == ProtoKind::kDouble;
        break;
      case F::TYPE_BOOL:
        ok = k == ProtoKind::kBool;
        break;
      case F::TYPE_STRING:
      case F::TYPE_BYTES:
        ok = k == ProtoKind::kString || k == ProtoKind::kBytes ||
             (k == ProtoKind::kEnum && rf->type() == F::TYPE_STRING);
        if (k == ProtoKind::kEnum) f->enum_type = wf->enum_type();
        break;
      case F::TYPE_MESSAGE: {
        const std::string& name = rf->message_type()->full_name();
        if (name == "google.protobuf.Timestamp") {
          ok = k == ProtoKind::kTimestamp || (IsInteger(k) && k != ProtoKind::kEnum);
        } else if (name == "google.protobuf.Duration") {
          ok = k == ProtoKind::kDuration || (IsInteger(k) && k != ProtoKind::kEnum);
        } else if (k == ProtoKind::kMessage) {
          auto m = Message(wf->message_type(), rf->message_type(), at);
          if (!m.ok()) return m.status();
          f->message = *m;
          ok = true;
        }
        break;
      }
      default:
        break;
    }
    if (!ok) {
      return Status::InvalidArgument(fmt::format("field `{}`: the writer's {} cannot be read as {}",
                                                 at, WriterType(wf), ReaderType(rf)));
    }
    return Status::Ok();
  }

  ProtoResolution* out_;
};

Result<std::shared_ptr<const ProtoResolution>> ProtoResolution::Make(
    std::shared_ptr<const ProtoSchema> writer, const pb::Descriptor* message,
    const pb::Descriptor* reader) {
  std::shared_ptr<ProtoResolution> r(new ProtoResolution());
  r->writer_ = std::move(writer);
  ProtoResolver resolver(r.get());
  auto root = resolver.Message(message, reader, "");
  if (!root.ok()) return root.status();
  r->root_ = *root;
  return std::shared_ptr<const ProtoResolution>(std::move(r));
}

Result<const pb::Descriptor*> FindProtoMessage(const ProtoSchema& schema,
                                               const std::string& full_name) {
  const pb::Descriptor* m = schema.file()->pool()->FindMessageTypeByName(full_name);
  if (m != nullptr && m->file() == schema.file()) return m;
  std::string names;
  for (int i = 0; i < schema.file()->message_type_count(); ++i)
    names += (i == 0 ? "" : ", ") + schema.file()->message_type(i)->full_name();
  return Status::InvalidArgument(fmt::format(
      "the .proto has no message `{}` (its top-level messages: {}; nested ones are named "
      "Outer.Inner, with the package first)",
      full_name, names.empty() ? "none" : names));
}

class ProtoPlanner {
 public:
  explicit ProtoPlanner(ProtoFileWriter* out) : out_(out) {}

  // `script`: the generated message of the record; `file`: the .proto's.
  Result<const ProtoWritePlan*> Plan(const pb::Descriptor* script, const pb::Descriptor* file,
                                     const std::string& path) {
    ProtoWritePlan& plan = out_->plans_.emplace_back();
    for (int i = 0; i < script->field_count(); ++i) {
      const pb::FieldDescriptor* sf = script->field(i);
      std::string at = path.empty() ? sf->name() : path + "." + sf->name();
      const pb::FieldDescriptor* ff = file->FindFieldByName(sf->name());
      if (ff == nullptr) {
        return Status::InvalidArgument(
            fmt::format("field `{}`: the .proto's message `{}` has no field `{}`", at,
                        file->full_name(), sf->name()));
      }
      if (ff->is_repeated() != sf->is_repeated()) {
        return Status::InvalidArgument(
            fmt::format("field `{}`: the .proto's field is {}repeated, the script's is {}a list",
                        at, ff->is_repeated() ? "" : "not ", sf->is_repeated() ? "" : "not "));
      }
      ProtoTarget t;
      t.number = static_cast<uint32_t>(ff->number());
      t.presence = ff->has_presence();
      t.packed = ff->is_packed();
      FLOW_RETURN_IF_ERROR(Target(sf, ff, at, &t));
      plan.fields.push_back(t);
    }
    return &plan;
  }

 private:
  static bool Int64Like(pb::FieldDescriptor::Type t) {
    return t == pb::FieldDescriptor::TYPE_INT64 || t == pb::FieldDescriptor::TYPE_SINT64 ||
           t == pb::FieldDescriptor::TYPE_SFIXED64;
  }
  static ProtoKind IntKind(pb::FieldDescriptor::Type t) {
    return t == pb::FieldDescriptor::TYPE_SINT64     ? ProtoKind::kSint64
           : t == pb::FieldDescriptor::TYPE_SFIXED64 ? ProtoKind::kSfixed64
                                                     : ProtoKind::kInt64;
  }

  Status Target(const pb::FieldDescriptor* sf, const pb::FieldDescriptor* ff, const std::string& at,
                ProtoTarget* t) {
    using F = pb::FieldDescriptor;
    F::Type ft = ff->type();
    const char* want = nullptr;
    std::string script_type = sf->type_name();
    switch (sf->type()) {
      case F::TYPE_INT64:
        script_type = "int";
        if (Int64Like(ft))
          t->kind = IntKind(ft);
        else
          want = "int64, sint64 or sfixed64";
        break;
      case F::TYPE_DOUBLE:
        script_type = "float";
        if (ft == F::TYPE_DOUBLE)
          t->kind = ProtoKind::kDouble;
        else
          want = "double";
        break;
      case F::TYPE_BOOL:
      case F::TYPE_STRING:
      case F::TYPE_BYTES:
        if (ft == sf->type()) {
          t->kind = ft == F::TYPE_BOOL     ? ProtoKind::kBool
                    : ft == F::TYPE_STRING ? ProtoKind::kString
                                           : ProtoKind::kBytes;
        } else {
          want =
              ft == F::TYPE_ENUM ? "string (enums are not written from strings)" : sf->type_name();
        }
        break;
      case F::TYPE_MESSAGE: {
        const std::string& name = sf->message_type()->full_name();
        bool timestamp = name == "google.protobuf.Timestamp";
        if (timestamp || name == "google.protobuf.Duration") {
          script_type = timestamp ? "timestamp" : "duration";
          if (ft == F::TYPE_MESSAGE && ff->message_type()->full_name() == name) {
            t->kind = timestamp ? ProtoKind::kTimestamp : ProtoKind::kDuration;
          } else if (Int64Like(ft)) {
            t->kind = IntKind(ft);  // milliseconds
          } else {
            want = timestamp ? "google.protobuf.Timestamp, or int64, sint64 or sfixed64 "
                               "milliseconds"
                             : "google.protobuf.Duration, or int64, sint64 or sfixed64 "
                               "milliseconds";
          }
          break;
        }
        script_type = "a record";
        if (ft != F::TYPE_MESSAGE) {
          want = "a message";
          break;
        }
        t->kind = ProtoKind::kMessage;
        auto nested = Plan(sf->message_type(), ff->message_type(), at);
        if (!nested.ok()) return nested.status();
        t->message = *nested;
        break;
      }
      default:
        want = "?";
        break;
    }
    if (want == nullptr) return Status::Ok();
    std::string file_type = ft == F::TYPE_MESSAGE ? ff->message_type()->full_name()
                            : ft == F::TYPE_ENUM  ? "enum " + ff->enum_type()->full_name()
                                                  : ff->type_name();
    return Status::InvalidArgument(
        fmt::format("field `{}`: {} cannot be written as the .proto's {}; declare it {}", at,
                    script_type, file_type, want));
  }

  ProtoFileWriter* out_;
};

Result<std::shared_ptr<const ProtoFileWriter>> ProtoFileWriter::Make(std::string_view file,
                                                                     const std::string& message,
                                                                     std::string_view script) {
  auto parsed = ProtoSchema::Parse(file);
  if (!parsed.ok()) return parsed.status();
  auto target = FindProtoMessage(**parsed, message);
  if (!target.ok()) return target.status();
  auto generated = ProtoSchema::Parse(script);
  if (!generated.ok())
    return Status::Internal("the generated Protobuf schema: " + generated.status().message());
  std::shared_ptr<ProtoFileWriter> w(new ProtoFileWriter());
  w->file_ = *parsed;
  ProtoPlanner planner(w.get());
  auto root = planner.Plan((*generated)->file()->message_type(0), *target, "");
  if (!root.ok()) {
    return Status::InvalidArgument(
        fmt::format("the records cannot be written as message `{}` "
                    "of the .proto: {}",
                    message, root.status().message()));
  }
  w->root_ = *root;
  return std::shared_ptr<const ProtoFileWriter>(std::move(w));
}

}  // namespace flow::rt
