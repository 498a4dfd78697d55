#pragma once
// Avro schemas and schema resolution (the Avro 1.11 specification, "Schema Resolution"), for
// `format avro`. A schema is parsed from its JSON text into a flat table of nodes; named types
// (records, enums, fixed) may be referenced by name later in the same schema, recursion included.
//
// A resolution pairs a writer's schema (from the schema registry, per record) with the script's
// reader schema (generated from the record type) and says, node by node, how bytes written with
// the first become values of the second:
//   - record fields are matched by name; writer fields the reader lacks are skipped, reader fields
//     the writer lacks take their default (Flow's nullable fields default to null; a missing
//     non-nullable field is an error when the resolution is made, not per record);
//   - promotions: int -> long, float, double; long -> float, double; float -> double;
//     string <-> bytes; and, beyond the specification because Flow has no enum or fixed type,
//     enum -> string (the symbol) and fixed -> bytes;
//   - unions: each writer branch is resolved on its own; a branch that cannot be read fails only
//     the records that use it ("union branch 2 (string) cannot be read as long");
//   - timestamps: a reader long with logicalType timestamp-millis reads writer longs in millis,
//     micros (divided by 1,000, rounding down) or nanos (by 1,000,000), and writer int `date`s.
// Record names are not compared: registries already check subjects, and producers name records
// freely. Errors are kInvalidArgument naming the field path and both types, e.g.
//   "field `user.age`: the writer's string cannot be read as long".
// Threading: immutable after construction; share freely.

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "flow/runtime/common/status.h"

namespace flow::rt {

enum class AvroType : uint8_t {
  kNull,
  kBoolean,
  kInt,
  kLong,
  kFloat,
  kDouble,
  kBytes,
  kString,
  kRecord,
  kEnum,
  kArray,
  kMap,
  kUnion,
  kFixed,
};

std::string_view AvroTypeName(AvroType t);

struct AvroField {
  std::string name;
  int32_t type = -1;         // node index
  bool has_default = false;  // the field's schema gives a default
};

struct AvroNode {
  AvroType type = AvroType::kNull;
  std::string name;                  // named types: the full name
  std::string logical;               // logicalType, e.g. "timestamp-millis"; empty for none
  std::vector<AvroField> fields;     // record
  std::vector<std::string> symbols;  // enum
  std::vector<int32_t> branches;     // union
  int32_t items = -1;                // array items, map values
  int64_t size = 0;                  // fixed
};

class AvroSchema {
 public:
  // Errors: kInvalidArgument, e.g. "avro schema: unknown type `Adress`", "avro schema: malformed
  // JSON: ...". Nesting deeper than kMaxDepth is refused.
  [[nodiscard]] static Result<AvroSchema> Parse(std::string_view json);

  static constexpr int kMaxDepth = 64;

  const AvroNode& node(int32_t i) const { return nodes_[static_cast<size_t>(i)]; }
  int32_t root() const { return 0; }
  size_t size() const { return nodes_.size(); }
  // "long", "record Click", "union [null, string]", for messages.
  std::string Describe(int32_t i) const;

 private:
  friend class AvroSchemaParser;
  std::vector<AvroNode> nodes_;
};

// How to read one writer node as one reader node (see the top of this file).
struct AvroResolved {
  static constexpr int32_t kNullBranch = -2;  // union branch: the writer wrote null
  static constexpr int32_t kBadBranch = -1;   // union branch: cannot be read as the reader's type

  AvroType writer_type = AvroType::kNull;  // the encoding to read
  int32_t writer = -1;                     // the writer node, for skipping and messages
  int64_t divide = 1;                      // timestamps: writer units per millisecond
  int64_t multiply = 1;                    // timestamps from a `date` (days): ms per day
  const AvroResolved* items = nullptr;     // array
  // Union: one entry per writer branch: a resolved node, or null with branch_state kNullBranch
  // or kBadBranch.
  std::vector<const AvroResolved*> branches;
  std::vector<int32_t> branch_state;
  // Record: one step per writer field, in writer order.
  struct Step {
    int32_t reader_field = -1;  // index in the reader's record; -1: skip the writer's field
    int32_t writer_type = -1;   // the writer field's node
    const AvroResolved* resolved = nullptr;
  };
  std::vector<Step> steps;
  const std::vector<std::string>* symbols = nullptr;  // enum -> string
};

class AvroResolution {
 public:
  // kInvalidArgument when no record written with `writer` can be read as `reader`.
  [[nodiscard]] static Result<std::shared_ptr<const AvroResolution>> Make(AvroSchema writer,
                                                                          const AvroSchema& reader);

  const AvroSchema& writer() const { return writer_; }
  const AvroResolved& root() const { return *root_; }

 private:
  friend class AvroResolver;
  AvroSchema writer_;
  std::deque<AvroResolved> nodes_;  // stable addresses
  const AvroResolved* root_ = nullptr;
};

}  // namespace flow::rt
