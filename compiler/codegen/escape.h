#pragma once
// The only ways script text enters generated C++:
//   CppStringLiteral  any bytes -> a C++ string literal that denotes exactly those bytes
//   CommentText       any bytes -> text safe inside a // comment (lossy, for humans only)
//   MangleIdent       a script identifier -> a C++ identifier under a prefix of its own (`f_`,
//                     or `x_` for names that need escaping), so it is never a keyword, a type,
//                     function or macro of the libraries, or a name of the generated code; it
//                     never holds `__` (reserved) nor ends in `_`, and it is injective
// Threading: pure functions.

#include <string>
#include <string_view>

namespace flow::codegen {

// "..." where every byte outside printable ASCII, and `"`, `\`, `?` (trigraphs), is an escape
// (\ooo octal, always three digits so a following digit is never swallowed). Use
// CppStringObject for values that may contain NUL bytes.
std::string CppStringLiteral(std::string_view bytes);
// std::string(LITERAL, N): keeps embedded NUL bytes.
std::string CppStringObject(std::string_view bytes);
// Printable ASCII except `\`, `*`, `/` and `?` (no `*/`, no line splice, no trigraph); every
// other byte becomes `.`; at most `max` characters (then "...").
std::string CommentText(std::string_view text, size_t max = 60);
std::string MangleIdent(std::string_view name);
// CamelCase of a snake_case script name, not mangled: "per_minute" -> "PerMinute". For parts of
// a generated type name; the whole name then goes through MangleIdent.
std::string CamelCase(std::string_view name);

}  // namespace flow::codegen
