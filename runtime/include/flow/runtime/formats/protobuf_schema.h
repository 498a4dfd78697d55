#pragma once
// Protobuf schemas and how a writer's message is read as the script's record, for
// `format protobuf`. A schema is one .proto file, parsed with libprotobuf (the language's own
// parser and descriptors): either its text, or a serialized FileDescriptorProto in base64, the
// form Confluent's clients register. Imports of the well-known types (google/protobuf/*.proto)
// resolve from libprotobuf itself; other imports (registry schema references) are refused.
//
// A resolution pairs the writer's message (from the registry, per record) with the script's
// reader message (generated from the record type) and says, per writer field number, how to read
// it:
//   - fields are matched by name; writer fields the reader lacks are skipped; a reader field the
//     writer's message lacks is null when nullable, else an error when the resolution is made;
//   - an absent field (not on the wire) is null when the reader's field is nullable and the
//     writer's field tracks presence (`optional`, messages, oneof members); otherwise it is the
//     type's default: 0, false, "", an empty list (proto3's rule for fields without presence);
//   - integers: any of int32, int64, uint32, uint64 (above 2^63-1 is a record error), sint32,
//     sint64, fixed32, fixed64, sfixed32, sfixed64, and enums (their number) read as int; as
//     float too, with float and double;
//   - string <-> bytes (strings are checked UTF-8); an enum reads as string as its value's name;
//   - timestamp reads google.protobuf.Timestamp (rounded down to milliseconds) or an integer of
//     milliseconds; duration reads google.protobuf.Duration or milliseconds;
//   - a list reads a repeated field, packed or not; a map field is a list of its entries (records
//     with fields `key` and `value`); a singular field read as a list gives one element.
// Errors are kInvalidArgument naming the field path and both types, e.g.
//   "field `user.age`: the writer's string cannot be read as int".
// Threading: immutable after construction; share freely.

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "flow/runtime/common/status.h"

namespace google::protobuf {
class Descriptor;
class DescriptorPool;
class EnumDescriptor;
class FileDescriptor;
}  // namespace google::protobuf

namespace flow::rt {

class ProtoSchema {
 public:
  // Errors: kInvalidArgument, e.g. "protobuf schema: line 3:12: Expected \";\".",
  // "protobuf schema: imports other.proto: schema references are not supported".
  [[nodiscard]] static Result<std::shared_ptr<const ProtoSchema>> Parse(std::string_view text);
  ~ProtoSchema();

  // The message at Confluent's message-index path: {i} is the file's i-th top-level message,
  // {i, j} its j-th nested message, and so on. kInvalidArgument when there is none.
  [[nodiscard]] Result<const google::protobuf::Descriptor*> MessageAt(
      const std::vector<int32_t>& path) const;
  const google::protobuf::FileDescriptor* file() const { return file_; }

 private:
  ProtoSchema() = default;
  std::unique_ptr<google::protobuf::DescriptorPool> pool_;
  const google::protobuf::FileDescriptor* file_ = nullptr;
};

// How a writer field's bytes are read.
enum class ProtoKind : uint8_t {
  kInt32,
  kInt64,
  kUint32,
  kUint64,
  kSint32,
  kSint64,
  kFixed32,
  kFixed64,
  kSfixed32,
  kSfixed64,
  kEnum,
  kBool,
  kFloat,
  kDouble,
  kString,
  kBytes,
  kMessage,
  kTimestamp,  // google.protobuf.Timestamp
  kDuration,   // google.protobuf.Duration
};

struct ProtoMessage;

// One writer field the reader reads.
struct ProtoField {
  int32_t reader_field = -1;  // index of the reader's field
  ProtoKind kind = ProtoKind::kInt64;
  const ProtoMessage* message = nullptr;                        // kMessage
  const google::protobuf::EnumDescriptor* enum_type = nullptr;  // kEnum read as a string
};

struct ProtoMessage {
  // The writer's field `number`, or null: a field the reader skips.
  const ProtoField* Find(uint64_t number) const {
    if (number < by_number.size()) [[likely]] {
      const ProtoField& f = by_number[number];
      return f.reader_field >= 0 ? &f : nullptr;
    }
    return FindLarge(number);
  }
  const ProtoField* FindLarge(uint64_t number) const;
  // Per reader field: an absent value is the type's default rather than null (see the top).
  bool Defaulted(int32_t reader_field) const {
    return defaulted[static_cast<size_t>(reader_field)] != 0;
  }

  // Per reader field: the default of a string read from an enum, the name of its value 0 ("" for
  // every other field).
  const std::string& DefaultText(int32_t reader_field) const {
    return default_text[static_cast<size_t>(reader_field)];
  }

  static constexpr uint64_t kDirect = 64;              // numbers below this are looked up by index
  std::vector<ProtoField> by_number;                   // index: field number
  std::vector<std::pair<uint64_t, ProtoField>> large;  // sorted by number
  std::vector<uint8_t> defaulted;
  std::vector<std::string> default_text;
};

class ProtoResolution {
 public:
  // kInvalidArgument when no message written as `writer` can be read as `reader`.
  [[nodiscard]] static Result<std::shared_ptr<const ProtoResolution>> Make(
      std::shared_ptr<const ProtoSchema> writer, const google::protobuf::Descriptor* message,
      const google::protobuf::Descriptor* reader);

  const ProtoMessage& root() const { return *root_; }

 private:
  friend class ProtoResolver;
  std::shared_ptr<const ProtoSchema> writer_;  // keeps the descriptors alive
  std::deque<ProtoMessage> messages_;          // stable addresses
  const ProtoMessage* root_ = nullptr;
};

// Writing the script's records as a message of a given .proto file (`format protobuf(proto:
// ...)`): per script field, the file's field it is written as. Matched by name; a script field
// the file's message lacks is an error, a file field the script lacks is left unset. Only
// encodings that hold every value are allowed, so no record can fail or lose precision:
//   int -> int64, sint64, sfixed64          float -> double
//   timestamp -> google.protobuf.Timestamp, or int64/sint64/sfixed64 milliseconds
//   duration -> google.protobuf.Duration, or int64/sint64/sfixed64 milliseconds
//   bool, string, bytes -> the same type      list<T> -> repeated, as T
//   a record -> a message, matched the same way
// e.g. "field `qty`: int cannot be written as the .proto's int32; declare it int64, sint64 or
// sfixed64".
struct ProtoWritePlan;

struct ProtoTarget {
  uint32_t number = 0;
  ProtoKind kind = ProtoKind::kInt64;
  bool presence = false;  // an `optional` or message field: written even when 0 or empty
  bool packed = false;    // a repeated number or bool written as one run
  const ProtoWritePlan* message = nullptr;  // records
};

struct ProtoWritePlan {
  std::vector<ProtoTarget> fields;  // by the script record's field index
};

class ProtoFileWriter {
 public:
  // `file`: the .proto text; `message`: the full name of its message to write; `script`: the
  // generated .proto whose first message is the record. kInvalidArgument as above, or for a bad
  // file or an unknown message.
  [[nodiscard]] static Result<std::shared_ptr<const ProtoFileWriter>> Make(
      std::string_view file, const std::string& message, std::string_view script);

  const ProtoWritePlan& plan() const { return *root_; }

 private:
  friend class ProtoPlanner;
  std::shared_ptr<const ProtoSchema> file_;
  std::deque<ProtoWritePlan> plans_;  // stable addresses
  const ProtoWritePlan* root_ = nullptr;
};

// The message named `full_name` in `schema`, or kInvalidArgument listing the file's messages.
[[nodiscard]] Result<const google::protobuf::Descriptor*> FindProtoMessage(
    const ProtoSchema& schema, const std::string& full_name);

}  // namespace flow::rt
