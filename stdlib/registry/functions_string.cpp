// String functions. Lengths and positions count Unicode code points of UTF-8 text; case mapping is
// ASCII-only (other characters pass through unchanged).

#include "stdlib/registry/registry_internal.h"

namespace flow::stdlib::internal {

void AddStringFunctions(std::vector<FunctionSpec>* out) {
  const auto S = FunctionKind::kScalar;
  const char* c = "string";
  std::vector<Def> defs;
  defs.push_back(
      Def("lower", S, c)
          .Param("s", "string")
          .Returns("string")
          .Cpp("::flow::fn::Lower({0})")
          .Summary("ASCII letters of `s` in lower case; other characters are kept as they are.")
          .Example("lower(country)"));
  defs.push_back(
      Def("upper", S, c)
          .Param("s", "string")
          .Returns("string")
          .Cpp("::flow::fn::Upper({0})")
          .Summary("ASCII letters of `s` in upper case; other characters are kept as they are.")
          .Example("upper(url)"));
  defs.push_back(Def("length", S, c)
                     .Param("s", "string")
                     .Returns("int")
                     .Cpp("::flow::fn::Length({0})")
                     .Summary("Number of characters (Unicode code points) in `s`.")
                     .Example("length(name)"));
  defs.push_back(Def("trim", S, c)
                     .Param("s", "string")
                     .Returns("string")
                     .Cpp("::flow::fn::Trim({0})")
                     .Summary("`s` without leading and trailing ASCII whitespace.")
                     .Example("trim(raw_name)"));
  defs.push_back(Def("ltrim", S, c)
                     .Param("s", "string")
                     .Returns("string")
                     .Cpp("::flow::fn::Ltrim({0})")
                     .Summary("`s` without leading ASCII whitespace.")
                     .Example("ltrim(raw_name)"));
  defs.push_back(Def("rtrim", S, c)
                     .Param("s", "string")
                     .Returns("string")
                     .Cpp("::flow::fn::Rtrim({0})")
                     .Summary("`s` without trailing ASCII whitespace.")
                     .Example("rtrim(raw_name)"));
  defs.push_back(
      Def("substr", S, c)
          .Param("s", "string")
          .Param("start", "int")
          .Optional("len", "int")
          .Returns("string")
          .Cpp("::flow::fn::Substr({args})")
          .Summary(
              "The characters of `s` from position `start` (1-based) on, at most `len` of them; "
              "positions outside `s` are skipped (SQL rules), a negative `len` gives \"\".")
          .Example("substr(url, 1, 8)"));
  defs.push_back(Def("concat", S, c)
                     .Param("s", "string")
                     .Variadic()
                     .Returns("string")
                     .Cpp("::flow::fn::Concat({args})")
                     .Summary("The arguments joined together; null if any argument is null.")
                     .Example("concat(first_name, \" \", last_name)"));
  defs.push_back(Def("replace", S, c)
                     .Param("s", "string")
                     .Param("from", "string")
                     .Param("to", "string")
                     .Returns("string")
                     .Cpp("::flow::fn::Replace({0}, {1}, {2})")
                     .Summary("`s` with every occurrence of `from` replaced by `to`; an empty "
                              "`from` changes nothing.")
                     .Example("replace(path, \"/\", \".\")"));
  defs.push_back(Def("starts_with", S, c)
                     .Param("s", "string")
                     .Param("prefix", "string")
                     .Returns("bool")
                     .Cpp("::flow::fn::StartsWith({0}, {1})")
                     .Summary("True when `s` begins with `prefix`.")
                     .Example("starts_with(url, \"https://\")"));
  defs.push_back(Def("ends_with", S, c)
                     .Param("s", "string")
                     .Param("suffix", "string")
                     .Returns("bool")
                     .Cpp("::flow::fn::EndsWith({0}, {1})")
                     .Summary("True when `s` ends with `suffix`.")
                     .Example("ends_with(file, \".json\")"));
  defs.push_back(
      Def("contains", S, c)
          .Param("s", "string")
          .Param("part", "string")
          .Returns("bool")
          .Cpp("::flow::fn::Contains({0}, {1})")
          .Summary("True when `part` occurs in `s` (the empty string occurs everywhere).")
          .Example("contains(agent, \"bot\")"));
  defs.push_back(Def("split", S, c)
                     .Param("s", "string")
                     .Param("sep", "string")
                     .Returns("list<string>")
                     .Cpp("::flow::fn::Split({0}, {1})")
                     .Summary("The pieces of `s` between occurrences of `sep`; an empty `sep` "
                              "splits into characters, "
                              "an empty `s` gives an empty list.")
                     .Example("split(tags, \",\")"));
  defs.push_back(
      Def("regexp_like", S, c)
          .Param("s", "string")
          .Param("pattern", "string")
          .Returns("bool")
          .Cpp("::flow::fn::RegexpLike({0}, {1})")
          .Summary(
              "True when the POSIX extended regular expression `pattern` matches somewhere in `s`; "
              "an invalid pattern matches nothing.")
          .Example("regexp_like(url, \"^/api/v[0-9]+/\")"));
  defs.push_back(
      Def("regexp_extract", S, c)
          .Param("s", "string")
          .Param("pattern", "string")
          .Optional("group", "int")
          .Returns("string?")
          .Cpp("::flow::fn::RegexpExtract({args})")
          .Summary(
              "The text matched by capture group `group` (default 0, the whole match) of the first "
              "match of `pattern` in `s`; null if there is no match, no such group or the pattern "
              "is invalid.")
          .Example("regexp_extract(url, \"id=([0-9]+)\", 1)"));
  defs.push_back(Def("lpad", S, c)
                     .Param("s", "string")
                     .Param("len", "int")
                     .Optional("pad", "string")
                     .Returns("string")
                     .Cpp("::flow::fn::Lpad({args})")
                     .Summary("`s` padded on the left with `pad` (default a space) to `len` "
                              "characters; a longer `s` "
                              "is cut to `len`.")
                     .Example("lpad(to_string(id), 8, \"0\")"));
  defs.push_back(Def("rpad", S, c)
                     .Param("s", "string")
                     .Param("len", "int")
                     .Optional("pad", "string")
                     .Returns("string")
                     .Cpp("::flow::fn::Rpad({args})")
                     .Summary("`s` padded on the right with `pad` (default a space) to `len` "
                              "characters; a longer `s` "
                              "is cut to `len`.")
                     .Example("rpad(name, 20)"));
  defs.push_back(
      Def("reverse", S, c)
          .Param("s", "string")
          .Returns("string")
          .Cpp("::flow::fn::Reverse({0})")
          .Summary("The characters of `s` in reverse order (code points, so UTF-8 stays valid).")
          .Example("reverse(domain)"));
  defs.push_back(Def("to_string", S, c)
                     .Param("x", "any")
                     .Returns("string")
                     .Cpp("::flow::fn::ToString({0}, {tag0})")
                     .Summary("`x` as text: numbers in decimal (floats shortest round-trip), "
                              "timestamps in RFC 3339 "
                              "UTC, durations as e.g. \"1500ms\", lists as [a, b].")
                     .Example("to_string(user_id)"));
  defs.push_back(
      Def("parse_int", S, c)
          .Param("s", "string")
          .Returns("int?")
          .Cpp("::flow::fn::ParseInt({0})")
          .Summary(
              "The integer written in `s` (optional sign, surrounding whitespace ignored); null if "
              "`s` is not an integer or out of range.")
          .Example("parse_int(header_value)"));
  defs.push_back(Def("parse_float", S, c)
                     .Param("s", "string")
                     .Returns("float?")
                     .Cpp("::flow::fn::ParseFloat({0})")
                     .Summary("The number written in `s` (surrounding whitespace ignored); null if "
                              "`s` is not a number.")
                     .Example("parse_float(price_text)"));
  for (const Def& d : defs) out->push_back(d.spec());
}

}  // namespace flow::stdlib::internal
