#pragma once
// flow::types: the types of Flow values, shared by sema, plan, codegen and the stdlib registry.
// A Type is a small immutable value; compare with ==. `Error` is what the checker substitutes after
// reporting a problem, so one mistake does not cascade: every check accepts Error silently.

#include <memory>
#include <string>
#include <vector>

namespace flow::types {

enum class Kind {
  kError,      // already reported; compatible with everything
  kNull,       // the type of the literal `null`; assignable to any nullable type
  kBool,
  kInt,        // 64-bit signed
  kFloat,      // 64-bit IEEE
  kString,     // UTF-8
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

  // Flow spelling: "int", "list<string>", "string?", "Click" / "{a: int, b: string}".
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

struct Field {
  std::string name;
  Type type;
};

// True when a value of type `from` may be used where `to` is expected without a cast:
// identical types, int -> float (the only implicit conversion), T -> T?, null -> T?, and Error
// either way.
bool IsAssignable(const Type& from, const Type& to);

// The common type of two operands (int + float -> float, T and T? -> T?), or Error if none.
Type CommonType(const Type& a, const Type& b);

// Parses the Flow spelling of a primitive or list type ("int", "list<float>", "string?").
// Returns Error for anything else (record names are resolved by sema, not here).
Type ParsePrimitive(const std::string& spelling);

}  // namespace flow::types
