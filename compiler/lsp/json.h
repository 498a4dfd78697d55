#pragma once
// flow::lsp::Json: the small JSON value the language server reads and writes. Objects keep their
// members in insertion order (so replies read naturally); lookups are linear, which is fine for
// the handful of keys an LSP message has.
//
// Parse: RFC 8259 text -> Json. Rejects trailing data, nesting deeper than kMaxJsonDepth and
// invalid escapes; \u escapes (with surrogate pairs) become UTF-8, a lone surrogate becomes
// U+FFFD. Numbers without fraction or exponent that fit in int64 stay exact integers (request ids).
// Write: Json -> compact text; every string is escaped and invalid UTF-8 is replaced by U+FFFD,
// so the output is always valid JSON whatever bytes a document contained.
// Threading: values are plain data; no shared state.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace flow::lsp {

inline constexpr size_t kMaxJsonDepth = 128;

class Json {
 public:
  enum class Type { kNull, kBool, kInt, kDouble, kString, kArray, kObject };
  using Array = std::vector<Json>;
  using Object = std::vector<std::pair<std::string, Json>>;

  Json() = default;
  Json(std::nullptr_t) {}
  Json(bool b) : type_(Type::kBool), bool_(b) {}
  Json(int v) : type_(Type::kInt), int_(v) {}
  Json(int64_t v) : type_(Type::kInt), int_(v) {}
  Json(uint32_t v) : type_(Type::kInt), int_(v) {}
  Json(size_t v) : type_(Type::kInt), int_(static_cast<int64_t>(v)) {}
  Json(double v) : type_(Type::kDouble), double_(v) {}
  Json(const char* s) : type_(Type::kString), string_(s) {}
  Json(std::string s) : type_(Type::kString), string_(std::move(s)) {}
  Json(std::string_view s) : type_(Type::kString), string_(s) {}
  Json(Array a) : type_(Type::kArray), array_(std::move(a)) {}
  Json(Object o) : type_(Type::kObject), object_(std::move(o)) {}

  static Json MakeObject() { return Json(Object{}); }
  static Json MakeArray() { return Json(Array{}); }

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::kNull; }
  bool is_bool() const { return type_ == Type::kBool; }
  bool is_int() const { return type_ == Type::kInt; }
  bool is_number() const { return type_ == Type::kInt || type_ == Type::kDouble; }
  bool is_string() const { return type_ == Type::kString; }
  bool is_array() const { return type_ == Type::kArray; }
  bool is_object() const { return type_ == Type::kObject; }

  bool as_bool() const { return bool_; }
  int64_t as_int() const { return type_ == Type::kInt ? int_ : static_cast<int64_t>(double_); }
  double as_double() const { return type_ == Type::kInt ? static_cast<double>(int_) : double_; }
  const std::string& as_string() const { return string_; }
  const Array& as_array() const { return array_; }
  Array& as_array() { return array_; }
  const Object& as_object() const { return object_; }

  // Object member `key`, or nullptr (also when this is not an object).
  const Json* Get(std::string_view key) const;
  // Typed lookups: nullopt/nullptr when missing or of another type.
  const std::string* GetString(std::string_view key) const;
  std::optional<int64_t> GetInt(std::string_view key) const;
  const Json* GetObject(std::string_view key) const;
  const Json* GetArray(std::string_view key) const;

  // Sets (or replaces) an object member; turns a null value into an object first.
  Json& Set(std::string key, Json value);
  // Appends to an array; turns a null value into an array first.
  void Push(Json value);

  friend bool operator==(const Json& a, const Json& b);

 private:
  Type type_ = Type::kNull;
  bool bool_ = false;
  int64_t int_ = 0;
  double double_ = 0;
  std::string string_;
  Array array_;
  Object object_;
};

struct JsonParseResult {
  std::optional<Json> value;
  std::string error;  // "at byte 12: expected `:`" when value is empty
};
JsonParseResult ParseJson(std::string_view text);

std::string WriteJson(const Json& value);
// Appends `s` as a quoted, escaped JSON string: rt::AppendJsonString with DEL escaped too, as
// what editors show (invalid UTF-8 -> U+FFFD).
void AppendJsonString(std::string_view s, std::string* out);

}  // namespace flow::lsp
