#include "stdlib/registry/registry.h"

#include <regex.h>

#include <algorithm>
#include <cassert>
#include <cctype>
#include <unordered_map>

#include "flow/runtime/common/time_zone.h"
#include "stdlib/registry/registry_internal.h"

namespace flow::stdlib {
namespace {

using flow::types::Kind;
using flow::types::Type;

struct Registry {
  std::vector<FunctionSpec> functions;
  std::unordered_map<std::string, size_t> by_name;
};

const Registry& GetRegistry() {
  static const Registry registry = [] {
    Registry r;
    internal::AddStringFunctions(&r.functions);
    internal::AddMathFunctions(&r.functions);
    internal::AddTimeFunctions(&r.functions);
    internal::AddConditionalFunctions(&r.functions);
    internal::AddAggregates(&r.functions);
    for (size_t i = 0; i < r.functions.size(); ++i) {
      bool inserted = r.by_name.emplace(r.functions[i].name, i).second;
      assert(inserted && "duplicate function name in the stdlib registry");
      (void)inserted;
    }
    return r;
  }();
  return registry;
}

bool IsComparable(const Type& t) {
  switch (t.kind()) {
    case Kind::kInt:
    case Kind::kFloat:
    case Kind::kString:
    case Kind::kTimestamp:
    case Kind::kDuration:
    case Kind::kBool:
      return true;
    default:
      return false;
  }
}

// The pattern variable T while one call is being checked.
struct Binding {
  bool bound = false;
  Type type;  // non-nullable
};

// Unifies T with `t` (non-nullable). False when they have no common type.
bool Bind(Binding* b, const Type& t) {
  if (!b->bound) {
    b->bound = true;
    b->type = t;
    return true;
  }
  Type common = flow::types::CommonType(b->type, t);
  if (common.is_error()) return false;
  b->type = common;
  return true;
}

std::string Describe(const std::string& pattern, const Binding& b) {
  if (pattern == "numeric" || pattern == "T:numeric")
    return b.bound ? b.type.ToString() : "int or float";
  if (pattern == "comparable" || pattern == "T:comparable") {
    return b.bound ? b.type.ToString()
                   : "a comparable type (int, float, string, timestamp, duration or bool)";
  }
  if (pattern == "T") return b.bound ? b.type.ToString() : "any type";
  if (pattern == "list<T>") return b.bound ? "list<" + b.type.ToString() + ">" : "a list";
  return pattern;
}

// Checks one non-error, non-null argument against a parameter pattern.
bool Match(const std::string& pattern, const Type& arg, Binding* b) {
  Type t = arg.AsNonNullable();
  if (pattern == "any") return true;
  if (pattern == "numeric") return t.is_numeric();
  if (pattern == "comparable") return IsComparable(t);
  if (pattern == "T") return Bind(b, t);
  if (pattern == "T:numeric") return t.is_numeric() && Bind(b, t);
  if (pattern == "T:comparable")
    return IsComparable(t) && (!b->bound || IsComparable(b->type)) && Bind(b, t);
  if (pattern == "list<T>") return t.kind() == Kind::kList && Bind(b, t.element().AsNonNullable());
  Type concrete = flow::types::ParsePrimitive(pattern);
  assert(!concrete.is_error() && "unknown type pattern in the stdlib registry");
  return flow::types::IsAssignable(t, concrete);
}

std::string ArityText(const FunctionSpec& fn) {
  auto plural = [](size_t n) { return std::to_string(n) + (n == 1 ? " argument" : " arguments"); };
  if (fn.variadic) return "at least " + plural(fn.min_args);
  if (fn.min_args == fn.params.size()) return plural(fn.min_args);
  return std::to_string(fn.min_args) + " to " + plural(fn.params.size());
}

}  // namespace

const std::vector<FunctionSpec>& AllFunctions() {
  return GetRegistry().functions;
}

const FunctionSpec* FindFunction(std::string_view name) {
  const Registry& r = GetRegistry();
  auto it = r.by_name.find(std::string(name));
  return it == r.by_name.end() ? nullptr : &r.functions[it->second];
}

CallResolution ResolveCallDetailed(const FunctionSpec& fn, const std::vector<Type>& args,
                                   std::string* error) {
  auto fail = [&](std::string message) {
    if (error) *error = std::move(message);
    return CallResolution{Type::Error(), Type::Error()};
  };
  size_t n = args.size();
  bool too_many = !fn.variadic && n > fn.params.size();
  if (n < fn.min_args || too_many) {
    return fail("`" + fn.name + "` takes " + ArityText(fn) + ", found " + std::to_string(n));
  }

  Binding binding;
  bool any_error = false;
  bool any_nullable = false;
  bool all_nullable = n > 0;
  for (size_t i = 0; i < n; ++i) {
    const Type& arg = args[i];
    const std::string& pattern = i < fn.params.size() ? fn.params[i].type : fn.params.back().type;
    if (arg.is_error()) {
      any_error = true;  // already reported; accept silently
      continue;
    }
    bool nullable = arg.kind() == Kind::kNull || arg.nullable();
    any_nullable = any_nullable || nullable;
    all_nullable = all_nullable && nullable;
    if (arg.kind() == Kind::kNull) continue;  // `null` fits every parameter
    Binding before = binding;
    if (!Match(pattern, arg, &binding)) {
      return fail("argument " + std::to_string(i + 1) + " of `" + fn.name + "` must be " +
                  Describe(pattern, before) + ", found " + arg.ToString());
    }
  }

  std::string pattern = fn.returns;
  bool all_rule = false;
  bool force_nullable = false;
  if (pattern.size() > 4 && pattern.ends_with("?all")) {
    all_rule = true;
    pattern.resize(pattern.size() - 4);
  } else if (!pattern.empty() && pattern.back() == '?') {
    force_nullable = true;
    pattern.pop_back();
  }

  bool uses_t = pattern == "T" || pattern == "list<T>" || pattern == "elem(T)";
  Type result;
  if (uses_t && !binding.bound) {
    // T is unbound when its arguments were all `null` (result: null) or errors (result: Error).
    if (any_error) return CallResolution{Type::Error(), Type::Error()};
    return CallResolution{Type::Null(), Type::Error()};
  }
  if (pattern == "T") {
    result = binding.type;
  } else if (pattern == "list<T>") {
    result = Type::List(binding.type);
  } else if (pattern == "elem(T)") {
    if (binding.type.kind() != Kind::kList) return CallResolution{Type::Error(), binding.type};
    result = binding.type.element();
  } else {
    result = flow::types::ParsePrimitive(pattern);
    assert(!result.is_error() && "unknown result pattern in the stdlib registry");
  }
  bool nullable =
      force_nullable || (all_rule ? all_nullable : fn.nullable_in_propagates && any_nullable);
  if (nullable) result = result.AsNullable();
  return CallResolution{result, binding.bound ? binding.type : Type::Error()};
}

Type ResolveCall(const FunctionSpec& fn, const std::vector<Type>& args, std::string* error) {
  return ResolveCallDetailed(fn, args, error).result;
}

std::vector<std::string> SuggestFunctions(std::string_view name) {
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // Levenshtein distance with one rolling row.
  auto distance = [](const std::string& a, const std::string& b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
      size_t diag = row[0];
      row[0] = i;
      for (size_t j = 1; j <= b.size(); ++j) {
        size_t up = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
        diag = up;
      }
    }
    return row[b.size()];
  };
  size_t limit = lower.size() <= 3 ? 1 : lower.size() <= 6 ? 2 : 3;
  std::vector<std::pair<size_t, std::string>> hits;
  for (const FunctionSpec& fn : AllFunctions()) {
    size_t d = distance(lower, fn.name);
    if (d <= limit) hits.emplace_back(d, fn.name);
  }
  std::sort(hits.begin(), hits.end());
  std::vector<std::string> out;
  for (size_t i = 0; i < hits.size() && i < 3; ++i) out.push_back(hits[i].second);
  return out;
}

namespace {
std::string TagFor(const Type& type) {
  switch (type.kind()) {
    case Kind::kTimestamp:
      return "::flow::fn::tag::Timestamp{}";
    case Kind::kDuration:
      return "::flow::fn::tag::Duration{}";
    case Kind::kBytes:
      return "::flow::fn::tag::Bytes{}";
    default:
      return "::flow::fn::tag::Plain{}";
  }
}
}  // namespace

std::string ExpandCpp(const FunctionSpec& fn, const std::vector<std::string>& arg_exprs,
                      const std::vector<Type>& arg_types, const std::string& t_cpp) {
  std::string out;
  const std::string& t = fn.cpp;
  for (size_t i = 0; i < t.size(); ++i) {
    size_t close = t[i] == '{' ? t.find('}', i) : std::string::npos;
    if (close == std::string::npos) {
      out += t[i];
      continue;
    }
    std::string key = t.substr(i + 1, close - i - 1);
    if (key == "args") {
      for (size_t a = 0; a < arg_exprs.size(); ++a) out += (a ? ", " : "") + arg_exprs[a];
    } else if (key == "T") {
      out += t_cpp;
    } else if (key.starts_with("tag") && key.size() > 3 &&
               std::isdigit(static_cast<unsigned char>(key[3]))) {
      size_t idx = std::stoul(key.substr(3));
      out += idx < arg_types.size() ? TagFor(arg_types[idx]) : "::flow::fn::tag::Plain{}";
    } else if (!key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
                 return std::isdigit(static_cast<unsigned char>(c));
               })) {
      size_t idx = std::stoul(key);
      assert(idx < 1000 && "placeholder index out of range in a cpp template");
      if (idx < arg_exprs.size()) out += arg_exprs[idx];
    } else {
      out += t.substr(i, close - i + 1);  // not a placeholder (e.g. `T{}` braces)
    }
    i = close;
  }
  return out;
}

std::string CheckLiteralArgument(const FunctionSpec& fn, size_t index, std::string_view literal) {
  bool is_regex = (fn.name == "regexp_like" || fn.name == "regexp_extract") && index == 1;
  if (is_regex) {
    regex_t re;
    std::string pattern(literal);
    int rc = regcomp(&re, pattern.c_str(), REG_EXTENDED);
    if (rc == 0) {
      regfree(&re);
      return "";
    }
    char buf[256];
    regerror(rc, &re, buf, sizeof buf);
    return "invalid regular expression '" + pattern + "' in `" + fn.name + "`: " + buf;
  }
  if (index < fn.params.size() && fn.params[index].name == "zone" && !rt::IsTimeZone(literal)) {
    return "unknown time zone '" + std::string(literal) + "' in `" + fn.name +
           "`; use an IANA name such as \"Europe/Berlin\", \"America/New_York\" or \"UTC\"";
  }
  if (fn.name == "date_trunc" && index == 0) {
    const auto& units = internal::DateTruncUnits();
    if (std::find(units.begin(), units.end(), literal) != units.end()) return "";
    std::string list;
    for (const auto& u : units) list += (list.empty() ? "" : ", ") + u;
    return "unknown unit '" + std::string(literal) + "' in `date_trunc`; expected one of " + list;
  }
  return "";
}

std::string Signature(const FunctionSpec& fn) {
  std::string s = fn.name + "(";
  for (size_t i = 0; i < fn.params.size(); ++i) {
    bool optional = !fn.variadic && i >= fn.min_args;
    if (optional) s += "[";
    if (i) s += ", ";
    s += fn.params[i].name + ": " + fn.params[i].type;
    if (fn.variadic && i + 1 == fn.params.size()) s += "...";
  }
  for (size_t i = fn.min_args; i < fn.params.size(); ++i) {
    if (!fn.variadic) s += "]";
  }
  std::string ret = fn.returns;
  if (ret.ends_with("?all"))
    ret = ret.substr(0, ret.size() - 4) + " (null only if every argument is null)";
  return s + ") -> " + ret;
}

}  // namespace flow::stdlib
