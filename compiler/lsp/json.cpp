#include "lsp/json.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "flow/runtime/common/json_escape.h"
#include "parse/literals.h"

namespace flow::lsp {

const Json* Json::Get(std::string_view key) const {
  if (type_ != Type::kObject) return nullptr;
  for (const auto& [k, v] : object_) {
    if (k == key) return &v;
  }
  return nullptr;
}

const std::string* Json::GetString(std::string_view key) const {
  const Json* v = Get(key);
  return v && v->is_string() ? &v->string_ : nullptr;
}

std::optional<int64_t> Json::GetInt(std::string_view key) const {
  const Json* v = Get(key);
  if (v == nullptr) return std::nullopt;
  if (v->is_int()) return v->int_;
  // Some clients send integral doubles (1.0); anything else is not an integer.
  if (v->type_ == Type::kDouble && std::isfinite(v->double_) &&
      v->double_ == std::floor(v->double_) && std::fabs(v->double_) < 9.0e15) {
    return static_cast<int64_t>(v->double_);
  }
  return std::nullopt;
}

const Json* Json::GetObject(std::string_view key) const {
  const Json* v = Get(key);
  return v && v->is_object() ? v : nullptr;
}

const Json* Json::GetArray(std::string_view key) const {
  const Json* v = Get(key);
  return v && v->is_array() ? v : nullptr;
}

Json& Json::Set(std::string key, Json value) {
  if (type_ == Type::kNull) type_ = Type::kObject;
  for (auto& [k, v] : object_) {
    if (k == key) {
      v = std::move(value);
      return v;
    }
  }
  object_.emplace_back(std::move(key), std::move(value));
  return object_.back().second;
}

void Json::Push(Json value) {
  if (type_ == Type::kNull) type_ = Type::kArray;
  array_.push_back(std::move(value));
}

bool operator==(const Json& a, const Json& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_int() && b.is_int()) return a.int_ == b.int_;
    return a.as_double() == b.as_double();
  }
  if (a.type_ != b.type_) return false;
  switch (a.type_) {
    case Json::Type::kNull:
      return true;
    case Json::Type::kBool:
      return a.bool_ == b.bool_;
    case Json::Type::kString:
      return a.string_ == b.string_;
    case Json::Type::kArray:
      return a.array_ == b.array_;
    case Json::Type::kObject:
      return a.object_ == b.object_;
    default:
      return false;
  }
}

namespace {

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  JsonParseResult Run() {
    JsonParseResult r;
    Json v;
    SkipSpace();
    if (!ParseValue(&v, 0)) {
      r.error = error_;
      return r;
    }
    SkipSpace();
    if (pos_ != text_.size()) {
      r.error = At("unexpected data after the JSON value");
      return r;
    }
    r.value = std::move(v);
    return r;
  }

 private:
  std::string At(const std::string& what) const {
    return "at byte " + std::to_string(pos_) + ": " + what;
  }
  bool Fail(const std::string& what) {
    if (error_.empty()) error_ = At(what);
    return false;
  }
  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool Literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return Fail("invalid literal");
    pos_ += word.size();
    return true;
  }

  bool ParseValue(Json* out, size_t depth) {
    if (depth >= kMaxJsonDepth) return Fail("nesting deeper than " + std::to_string(kMaxJsonDepth));
    if (pos_ >= text_.size()) return Fail("unexpected end of input");
    char c = text_[pos_];
    switch (c) {
      case 'n':
        *out = Json();
        return Literal("null");
      case 't':
        *out = Json(true);
        return Literal("true");
      case 'f':
        *out = Json(false);
        return Literal("false");
      case '"': {
        std::string s;
        if (!ParseString(&s)) return false;
        *out = Json(std::move(s));
        return true;
      }
      case '[':
        return ParseArray(out, depth);
      case '{':
        return ParseObject(out, depth);
      default:
        if (c == '-' || (c >= '0' && c <= '9')) return ParseNumber(out);
        return Fail(std::string("unexpected character `") + (c >= 0x20 && c < 0x7f ? c : '?') +
                    "`");
    }
  }

  bool ParseArray(Json* out, size_t depth) {
    ++pos_;  // [
    Json::Array items;
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == ']') {
      ++pos_;
      *out = Json(std::move(items));
      return true;
    }
    while (true) {
      SkipSpace();
      Json v;
      if (!ParseValue(&v, depth + 1)) return false;
      items.push_back(std::move(v));
      SkipSpace();
      if (pos_ >= text_.size()) return Fail("unterminated array");
      if (text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (text_[pos_] == ']') {
        ++pos_;
        *out = Json(std::move(items));
        return true;
      }
      return Fail("expected `,` or `]`");
    }
  }

  bool ParseObject(Json* out, size_t depth) {
    ++pos_;  // {
    Json obj = Json::MakeObject();
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == '}') {
      ++pos_;
      *out = std::move(obj);
      return true;
    }
    while (true) {
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != '"') return Fail("expected a member name");
      std::string key;
      if (!ParseString(&key)) return false;
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != ':') return Fail("expected `:`");
      ++pos_;
      SkipSpace();
      Json v;
      if (!ParseValue(&v, depth + 1)) return false;
      obj.Set(std::move(key), std::move(v));
      SkipSpace();
      if (pos_ >= text_.size()) return Fail("unterminated object");
      if (text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (text_[pos_] == '}') {
        ++pos_;
        *out = std::move(obj);
        return true;
      }
      return Fail("expected `,` or `}`");
    }
  }

  bool Hex4(uint32_t* v) {
    if (pos_ + 4 > text_.size()) return Fail("truncated \\u escape");
    *v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text_[pos_++];
      *v <<= 4;
      if (c >= '0' && c <= '9')
        *v |= static_cast<uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f')
        *v |= static_cast<uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        *v |= static_cast<uint32_t>(c - 'A' + 10);
      else
        return Fail("invalid \\u escape");
    }
    return true;
  }

  bool ParseString(std::string* out) {
    ++pos_;  // "
    while (true) {
      if (pos_ >= text_.size()) return Fail("unterminated string");
      char c = text_[pos_];
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (static_cast<unsigned char>(c) < 0x20) return Fail("control character in string");
      if (c != '\\') {
        out->push_back(c);
        ++pos_;
        continue;
      }
      ++pos_;
      if (pos_ >= text_.size()) return Fail("unterminated string");
      char e = text_[pos_++];
      switch (e) {
        case '"':
          out->push_back('"');
          break;
        case '\\':
          out->push_back('\\');
          break;
        case '/':
          out->push_back('/');
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'n':
          out->push_back('\n');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'u': {
          uint32_t cp;
          if (!Hex4(&cp)) return false;
          if (cp >= 0xD800 && cp < 0xDC00) {
            // A high surrogate pairs with an immediately following \uDC00-\uDFFF.
            uint32_t low = 0;
            if (pos_ + 6 <= text_.size() && text_[pos_] == '\\' && text_[pos_ + 1] == 'u') {
              size_t save = pos_;
              pos_ += 2;
              if (!Hex4(&low)) return false;
              if (low >= 0xDC00 && low < 0xE000) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
              } else {
                pos_ = save;
                cp = 0xFFFD;
              }
            } else {
              cp = 0xFFFD;
            }
          } else if (cp >= 0xDC00 && cp < 0xE000) {
            cp = 0xFFFD;
          }
          parse::AppendUtf8(cp, out);
          break;
        }
        default:
          --pos_;
          return Fail("invalid escape");
      }
    }
  }

  bool ParseNumber(Json* out) {
    size_t start = pos_;
    if (text_[pos_] == '-') ++pos_;
    auto digits = [&] {
      size_t d = pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
      return pos_ - d;
    };
    size_t int_start = pos_;
    if (digits() == 0) return Fail("invalid number");
    if (pos_ - int_start > 1 && text_[int_start] == '0') return Fail("leading zero in number");
    bool integral = true;
    if (pos_ < text_.size() && text_[pos_] == '.') {
      ++pos_;
      integral = false;
      if (digits() == 0) return Fail("invalid number");
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      ++pos_;
      integral = false;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      if (digits() == 0) return Fail("invalid number");
    }
    std::string num(text_.substr(start, pos_ - start));
    if (integral) {
      errno = 0;
      long long v = std::strtoll(num.c_str(), nullptr, 10);
      if (errno == 0) {
        *out = Json(static_cast<int64_t>(v));
        return true;
      }
    }
    *out = Json(std::strtod(num.c_str(), nullptr));
    return true;
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::string error_;
};

void WriteValue(const Json& v, std::string* out) {
  switch (v.type()) {
    case Json::Type::kNull:
      out->append("null");
      break;
    case Json::Type::kBool:
      out->append(v.as_bool() ? "true" : "false");
      break;
    case Json::Type::kInt:
      out->append(std::to_string(v.as_int()));
      break;
    case Json::Type::kDouble: {
      double d = v.as_double();
      if (!std::isfinite(d)) {
        out->append("null");  // JSON has no NaN or infinity
      } else {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.17g", d);
        out->append(buf);
      }
      break;
    }
    case Json::Type::kString:
      AppendJsonString(v.as_string(), out);
      break;
    case Json::Type::kArray: {
      out->push_back('[');
      bool first = true;
      for (const Json& item : v.as_array()) {
        if (!first) out->push_back(',');
        first = false;
        WriteValue(item, out);
      }
      out->push_back(']');
      break;
    }
    case Json::Type::kObject: {
      out->push_back('{');
      bool first = true;
      for (const auto& [k, item] : v.as_object()) {
        if (!first) out->push_back(',');
        first = false;
        AppendJsonString(k, out);
        out->push_back(':');
        WriteValue(item, out);
      }
      out->push_back('}');
      break;
    }
  }
}

}  // namespace

JsonParseResult ParseJson(std::string_view text) {
  return Parser(text).Run();
}

std::string WriteJson(const Json& value) {
  std::string out;
  WriteValue(value, &out);
  return out;
}

void AppendJsonString(std::string_view s, std::string* out) {
  rt::AppendJsonString(s, out, rt::JsonControls::kAlsoDel);
}

}  // namespace flow::lsp
