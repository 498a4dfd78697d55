#pragma once
// Record shapes: one C++ struct per distinct Flow record type of the job (in namespace `rec`),
// named after its schema, or after the stream that makes it (`PerMinuteOut`), made unique.
// Also maps every Flow type to its C++ type and JSON codec type.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/writer.h"
#include "types/type.h"

namespace flow::codegen {

// A field's wire name as the C++ literal of its JSON key: the name as a JSON string, then ':'.
std::string QuotedJsonKey(std::string_view wire_name);

class RecordTypes {
 public:
  // Registers `type` (and nested record types); `hint` names anonymous shapes. Returns its name.
  std::string Register(const types::Type& type, const std::string& hint);
  // The C++ type of a Flow value (types::CppType, types/cpp_type.h), records named rec::Name.
  // Records must be registered.
  std::string Cpp(const types::Type& type) const;
  // The JSON codec type (formats/json_codecs.h) or the generated JsonName codec for records.
  std::string JsonCodec(const types::Type& type) const;
  // The struct's name without `rec::`.
  std::string Name(const types::Type& type) const;

  // Emits the structs (dependencies first) and their JSON codecs.
  void EmitStructs(Writer& w) const;
  void EmitJsonCodecs(Writer& w) const;

  // Avro (records_avro.cpp, formats/avro.h): the codec type of a Flow type, a record's Avro schema
  // as JSON text (`only`: just these fields, for a source that reads a few), and the record codecs
  // AvroName, emitted when a job uses `format avro`.
  std::string AvroCodec(const types::Type& type) const;
  std::string AvroSchema(const types::Type& record,
                         const std::vector<const types::Field*>* only = nullptr) const;
  void EmitAvroCodecs(Writer& w) const;
  // The body of a read function over `in`, `r` and `out`: reader field j is fields[j].
  void EmitAvroRead(Writer& w, const std::vector<const types::Field*>& fields,
                    const std::string& indent) const;

  // Protobuf (records_protobuf.cpp, formats/protobuf.h): the codec type of a Flow type, a
  // record's .proto schema (the record is the file's first message; fields numbered 1.. in order;
  // `only`: just these fields), and the record codecs ProtoName, emitted when a job uses
  // `format protobuf`.
  std::string ProtobufCodec(const types::Type& type) const;
  std::string ProtobufSchema(const types::Type& record,
                             const std::vector<const types::Field*>* only = nullptr) const;
  void EmitProtobufCodecs(Writer& w) const;
  // The body of a read function over `in`, `m` and `out`: reader field j is fields[j].
  void EmitProtobufRead(Writer& w, const std::vector<const types::Field*>& fields,
                        const std::string& indent) const;
  // Writes `fields` of `value` to `out` as the fields of a given .proto message: field j as
  // `plan`.fields[j] (formats/protobuf_schema.h, ProtoFileWriter).
  void EmitProtobufWriteAs(Writer& w, const std::string& value,
                           const std::vector<const types::Field*>& fields, const std::string& plan,
                           const std::string& indent) const;
  // Writes `fields` of `value` to `out`, numbered 1.. in order.
  void EmitProtobufWrite(Writer& w, const std::string& value,
                         const std::vector<const types::Field*>& fields,
                         const std::string& indent) const;

 private:
  struct Entry {
    types::Type type;
    std::string name;
  };
  std::map<std::string, size_t> by_shape_;  // Type::ToString() of the shape (with field names)
  std::vector<Entry> entries_;              // in registration order: nested types first
  std::map<std::string, int> used_names_;
};

// Why `fields` cannot be read (`sink`: written) as Protobuf, or "": names must be identifiers;
// lists of lists, and for sinks lists with nullable elements, have no field type.
std::string ProtobufProblem(const std::vector<const types::Field*>& fields, bool sink);

// A record's shape key: its fields with types (record names ignored for anonymous shapes).
std::string ShapeKey(const types::Type& type);

}  // namespace flow::codegen
