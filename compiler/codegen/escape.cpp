#include "codegen/escape.h"

#include <array>
#include <cctype>
#include <string>

namespace flow::codegen {
namespace {

// C++20 keywords and alternative tokens, plus identifiers with special meaning in generated code.
constexpr std::string_view kReserved[] = {
    "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch",
    "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr",
    "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete",
    "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for",
    "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
    "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register", "reinterpret_cast",
    "requires", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct",
    "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid", "typename",
    "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
    "final", "override", "import", "module", "main", "std", "flow", "rec", "assert", "errno", "NULL"};

bool IsReserved(std::string_view s) {
  for (std::string_view k : kReserved) {
    if (k == s) return true;
  }
  return false;
}

void AppendOctal(std::string* out, unsigned char c) {
  out->push_back('\\');
  out->push_back(static_cast<char>('0' + ((c >> 6) & 7)));
  out->push_back(static_cast<char>('0' + ((c >> 3) & 7)));
  out->push_back(static_cast<char>('0' + (c & 7)));
}

}  // namespace

std::string CppStringLiteral(std::string_view bytes) {
  std::string out = "\"";
  for (char ch : bytes) {
    auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\' || c == '?' || c < 0x20 || c >= 0x7f) {
      AppendOctal(&out, c);
    } else {
      out.push_back(ch);
    }
  }
  out.push_back('"');
  return out;
}

std::string CppStringObject(std::string_view bytes) {
  return "std::string(" + CppStringLiteral(bytes) + ", " + std::to_string(bytes.size()) + ")";
}

std::string CommentText(std::string_view text, size_t max) {
  std::string out;
  for (char ch : text) {
    if (out.size() >= max) {
      out.append("...");
      break;
    }
    auto c = static_cast<unsigned char>(ch);
    bool safe = c >= 0x20 && c < 0x7f && c != '\\' && c != '*' && c != '/' && c != '?';
    out.push_back(safe ? ch : '.');
  }
  return out;
}

std::string MangleIdent(std::string_view name) {
  bool plain = !name.empty() && std::isalpha(static_cast<unsigned char>(name[0])) && !IsReserved(name) &&
               name.find("__") == std::string_view::npos && name.back() != '_' &&
               !(name.size() >= 2 && name[0] == 'x' && name[1] == '_');
  for (char ch : name) plain = plain && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_');
  if (plain) return std::string(name);
  // x_ + each byte: letters and digits as is except `Z`; `Z` and every other byte as Z + two hex
  // digits. The encoding has no `_`, so no `__`, and decodes uniquely; plain names never start
  // with `x_`, so mangled and plain names cannot meet.
  std::string out = "x_";
  static const char* kHex = "0123456789abcdef";
  for (char ch : name) {
    auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) && c != 'Z') {
      out.push_back(ch);
    } else {
      out.push_back('Z');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string CamelIdent(std::string_view name) {
  std::string out;
  bool upper = true;
  for (char ch : name) {
    if (ch == '_') {
      upper = true;
      continue;
    }
    out.push_back(upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(ch))) : ch);
    upper = false;
  }
  return MangleIdent(out.empty() ? std::string_view(name) : std::string_view(out));
}

}  // namespace flow::codegen
