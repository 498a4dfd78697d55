#include "codegen/escape.h"

#include <cctype>
#include <string>

namespace flow::codegen {
namespace {

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
  // Every script name gets a prefix, whatever it is: a keyword list cannot know every type,
  // function and macro the C and C++ libraries and the runtime declare (`int64_t`, `stdin`,
  // `EXIT_FAILURE`, `linux`), and a member named after a type changes what that type means in
  // the rest of its struct. Plain names read as `f_<name>`.
  bool plain = !name.empty() && std::isalpha(static_cast<unsigned char>(name[0])) &&
               name.find("__") == std::string_view::npos && name.back() != '_';
  for (char ch : name) plain = plain && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_');
  if (plain) return "f_" + std::string(name);
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

std::string CamelCase(std::string_view name) {
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
  return out.empty() ? std::string(name) : out;
}

}  // namespace flow::codegen
