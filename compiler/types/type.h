#pragma once
// flow::types: the types of Flow values, shared by sema, plan, codegen and the stdlib registry.
// A Type is a small immutable value; compare with ==. `Error` is what the checker substitutes after
// reporting a problem, so one mistake does not cascade: every check accepts Error silently.

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace flow::types {

enum class Kind {
  kError,  // already reported; compatible with everything
  kNull,   // the type of the literal `null`; assignable to any nullable type
  kBool,
  kInt,     // 64-bit signed
  kFloat,   // 64-bit IEEE
  kString,  // UTF-8
  kBytes,
  kTimestamp,  // milliseconds since the Unix epoch, UTC
  kDuration,   // milliseconds
  kList,       // list<T>
  kRecord,     // a named schema or an anonymous record shape
};

struct Field;

class Type {
 public:
  Type() : Type(Kind::kError) {}
  static Type Error() { return Type(Kind::kError); }
  static Type Null() { return Type(Kind::kNull); }
  static Type Bool() { return Type(Kind::kBool); }
  static Type Int() { return Type(Kind::kInt); }
  static Type Float() { return Type(Kind::kFloat); }
  static Type String() { return Type(Kind::kString); }
  static Type Bytes() { return Type(Kind::kBytes); }
  static Type Timestamp() { return Type(Kind::kTimestamp); }
  static Type Duration() { return Type(Kind::kDuration); }
  static Type List(Type element);
  // A record type; `name` is the schema name, empty for an anonymous shape.
  static Type Record(std::string name, std::vector<Field> fields);

  Kind kind() const { return kind_; }
  bool nullable() const { return nullable_; }
  bool is_error() const { return kind_ == Kind::kError; }
  bool is_numeric() const { return kind_ == Kind::kInt || kind_ == Kind::kFloat; }
  // The same type with `nullable` set (T?). Null and Error stay as they are.
  Type AsNullable() const;
  Type AsNonNullable() const;

  // For kList: the element type.
  const Type& element() const;
  // For kRecord: the schema name (may be empty) and the fields in declaration order.
  const std::string& record_name() const;
  const std::vector<Field>& fields() const;
  // For kRecord: the field called `name`, or nullptr.
  const Field* FindField(const std::string& name) const;

  // Flow spelling: "int", "list<string>", "string?", "Click" / "{a: int, b: string}"; a field
  // whose wire name differs shows it as in a schema: `{"user-id" as user_id: string}`.
  std::string ToString() const;

  friend bool operator==(const Type& a, const Type& b);
  friend bool operator!=(const Type& a, const Type& b) { return !(a == b); }

 private:
  explicit Type(Kind kind) : kind_(kind) {}

  Kind kind_;
  bool nullable_ = false;
  // Shared so copies are cheap; never mutated after construction.
  std::shared_ptr<const Type> element_;
  std::shared_ptr<const std::string> record_name_;
  std::shared_ptr<const std::vector<Field>> fields_;
};

// A record field. `name` is what scripts write; `wire_name` is the name in the data (JSON keys,
// CSV header columns, and later Avro/Protobuf field names) when it differs, e.g. a schema field
// declared `"user-id" as user_id: string`. Formats read and write Wire(), never `name`.
struct Field {
  Field() = default;
  Field(std::string n, Type t, std::string wire = {})
      : name(std::move(n)), type(std::move(t)), wire_name(std::move(wire)) {}

  std::string name;
  Type type;
  std::string wire_name;  // empty: the wire name is `name` (an empty wire name is not allowed)

  const std::string& Wire() const { return wire_name.empty() ? name : wire_name; }
};

// True when a value of type `from` may be used where `to` is expected without a cast:
// identical types, int -> float (the only implicit conversion), T -> T?, null -> T?, and Error
// either way.
bool IsAssignable(const Type& from, const Type& to);

// The common type of two operands (int + float -> float, T and T? -> T?), or Error if none.
Type CommonType(const Type& a, const Type& b);

// A Flow string literal that denotes `text`: quotes and backslashes escaped, control bytes as
// \u{hex}, everything else (UTF-8 included) as is. The one quoting of script strings for humans:
// wire names in Type::ToString, literals in plan/explain text, diagnostics, hover.
std::string FlowStringLiteral(std::string_view text);

// Parses the Flow spelling of a primitive or list type ("int", "list<float>", "string?").
// Returns Error for anything else (record names are resolved by sema, not here).
Type ParsePrimitive(const std::string& spelling);

}  // namespace flow::types
