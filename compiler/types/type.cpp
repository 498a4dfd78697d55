#include "types/type.h"

#include <cassert>
#include <cstdio>

namespace flow::types {

Type Type::List(Type element) {
  Type t(Kind::kList);
  t.element_ = std::make_shared<const Type>(std::move(element));
  return t;
}

Type Type::Record(std::string name, std::vector<Field> fields) {
  Type t(Kind::kRecord);
  t.record_name_ = std::make_shared<const std::string>(std::move(name));
  t.fields_ = std::make_shared<const std::vector<Field>>(std::move(fields));
  return t;
}

Type Type::AsNullable() const {
  if (kind_ == Kind::kError || kind_ == Kind::kNull) return *this;
  Type t = *this;
  t.nullable_ = true;
  return t;
}

Type Type::AsNonNullable() const {
  Type t = *this;
  t.nullable_ = false;
  return t;
}

const Type& Type::element() const {
  assert(kind_ == Kind::kList && "element() on a non-list type");
  return *element_;
}

const std::string& Type::record_name() const {
  assert(kind_ == Kind::kRecord && "record_name() on a non-record type");
  return *record_name_;
}

const std::vector<Field>& Type::fields() const {
  assert(kind_ == Kind::kRecord && "fields() on a non-record type");
  return *fields_;
}

const Field* Type::FindField(const std::string& name) const {
  if (kind_ != Kind::kRecord) return nullptr;
  for (const Field& f : *fields_) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::string Type::ToString() const {
  std::string s;
  switch (kind_) {
    case Kind::kError:
      return "<error>";
    case Kind::kNull:
      return "null";
    case Kind::kBool:
      s = "bool";
      break;
    case Kind::kInt:
      s = "int";
      break;
    case Kind::kFloat:
      s = "float";
      break;
    case Kind::kString:
      s = "string";
      break;
    case Kind::kBytes:
      s = "bytes";
      break;
    case Kind::kTimestamp:
      s = "timestamp";
      break;
    case Kind::kDuration:
      s = "duration";
      break;
    case Kind::kList:
      s = "list<" + element_->ToString() + ">";
      break;
    case Kind::kRecord:
      if (!record_name_->empty()) {
        s = *record_name_;
      } else {
        s = "{";
        for (size_t i = 0; i < fields_->size(); ++i) {
          if (i) s += ", ";
          const Field& f = (*fields_)[i];
          if (!f.wire_name.empty()) s += FlowStringLiteral(f.wire_name) + " as ";
          s += f.name + ": " + f.type.ToString();
        }
        s += "}";
      }
      break;
  }
  if (nullable_) s += "?";
  return s;
}

bool operator==(const Type& a, const Type& b) {
  if (a.kind_ != b.kind_ || a.nullable_ != b.nullable_) return false;
  switch (a.kind_) {
    case Kind::kList:
      return *a.element_ == *b.element_;
    case Kind::kRecord: {
      if (*a.record_name_ != *b.record_name_) return false;
      const auto& fa = *a.fields_;
      const auto& fb = *b.fields_;
      if (fa.size() != fb.size()) return false;
      for (size_t i = 0; i < fa.size(); ++i) {
        if (fa[i].name != fb[i].name || fa[i].Wire() != fb[i].Wire() || fa[i].type != fb[i].type)
          return false;
      }
      return true;
    }
    default:
      return true;
  }
}

bool IsAssignable(const Type& from, const Type& to) {
  if (from.is_error() || to.is_error()) return true;
  if (from.kind() == Kind::kNull) return to.nullable();
  if (from.nullable() && !to.nullable()) return false;
  Type f = from.AsNonNullable();
  Type t = to.AsNonNullable();
  if (f == t) return true;
  return f.kind() == Kind::kInt && t.kind() == Kind::kFloat;
}

Type CommonType(const Type& a, const Type& b) {
  if (a.is_error() || b.is_error()) return Type::Error();
  if (a.kind() == Kind::kNull) return b.kind() == Kind::kNull ? a : b.AsNullable();
  if (b.kind() == Kind::kNull) return a.AsNullable();
  bool nullable = a.nullable() || b.nullable();
  Type x = a.AsNonNullable();
  Type y = b.AsNonNullable();
  Type common;
  if (x == y) {
    common = x;
  } else if (x.is_numeric() && y.is_numeric()) {
    common = Type::Float();
  } else {
    return Type::Error();
  }
  return nullable ? common.AsNullable() : common;
}

std::string FlowStringLiteral(std::string_view text) {
  std::string s = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      s.push_back('\\');
      s.push_back(static_cast<char>(c));
    } else if (c < 0x20 || c == 0x7f) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "\\u{%x}", c);
      s += buf;
    } else {
      s.push_back(static_cast<char>(c));
    }
  }
  return s + "\"";
}

Type ParsePrimitive(const std::string& spelling) {
  std::string s = spelling;
  bool nullable = false;
  if (!s.empty() && s.back() == '?') {
    nullable = true;
    s.pop_back();
  }
  Type t = Type::Error();
  if (s == "bool")
    t = Type::Bool();
  else if (s == "int")
    t = Type::Int();
  else if (s == "float")
    t = Type::Float();
  else if (s == "string")
    t = Type::String();
  else if (s == "bytes")
    t = Type::Bytes();
  else if (s == "timestamp")
    t = Type::Timestamp();
  else if (s == "duration")
    t = Type::Duration();
  else if (s.size() > 6 && s.rfind("list<", 0) == 0 && s.back() == '>') {
    Type e = ParsePrimitive(s.substr(5, s.size() - 6));
    if (!e.is_error()) t = Type::List(e);
  }
  if (t.is_error()) return t;
  return nullable ? t.AsNullable() : t;
}

}  // namespace flow::types
