#include "stdlib/registry/registry.h"

#include <gtest/gtest.h>

#include <set>

#include "types/cpp_type.h"

namespace flow::stdlib {
namespace {

using flow::types::Type;

Type Resolve(std::string_view name, const std::vector<Type>& args, std::string* error = nullptr) {
  const FunctionSpec* fn = FindFunction(name);
  EXPECT_NE(fn, nullptr) << name;
  std::string local;
  Type t = ResolveCall(*fn, args, error ? error : &local);
  return t;
}

TEST(StdlibRegistry, EveryEntryIsCompleteAndUnique) {
  std::set<std::string> names;
  for (const FunctionSpec& fn : AllFunctions()) {
    EXPECT_TRUE(names.insert(fn.name).second) << "duplicate " << fn.name;
    EXPECT_FALSE(fn.summary.empty()) << fn.name;
    EXPECT_FALSE(fn.example.empty()) << fn.name;
    EXPECT_FALSE(fn.cpp.empty()) << fn.name;
    EXPECT_FALSE(fn.returns.empty()) << fn.name;
    EXPECT_FALSE(fn.category.empty()) << fn.name;
    EXPECT_LE(fn.min_args, fn.params.size()) << fn.name;
    EXPECT_EQ(fn.name.find_first_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ"), std::string::npos) << fn.name;
  }
  for (const char* required : {"lower",
                               "upper",
                               "length",
                               "trim",
                               "ltrim",
                               "rtrim",
                               "substr",
                               "concat",
                               "replace",
                               "starts_with",
                               "ends_with",
                               "contains",
                               "split",
                               "regexp_like",
                               "regexp_extract",
                               "lpad",
                               "rpad",
                               "reverse",
                               "to_string",
                               "parse_int",
                               "parse_float",
                               "abs",
                               "round",
                               "floor",
                               "ceil",
                               "sqrt",
                               "pow",
                               "ln",
                               "log10",
                               "exp",
                               "mod",
                               "greatest",
                               "least",
                               "sign",
                               "now",
                               "to_timestamp",
                               "to_millis",
                               "date_trunc",
                               "year",
                               "month",
                               "day",
                               "hour",
                               "minute",
                               "second",
                               "day_of_week",
                               "format_timestamp",
                               "parse_timestamp",
                               "coalesce",
                               "nullif",
                               "cardinality",
                               "element_at",
                               "array_contains",
                               "hash",
                               "count",
                               "sum",
                               "min",
                               "max",
                               "avg",
                               "count_distinct",
                               "approx_distinct",
                               "first",
                               "last"}) {
    EXPECT_NE(FindFunction(required), nullptr) << required;
  }
  EXPECT_EQ(FindFunction("cast"), nullptr);
  EXPECT_EQ(FindFunction("UPPER"), nullptr);
}

TEST(StdlibResolveCall, ConcreteTypes) {
  EXPECT_EQ(Resolve("upper", {Type::String()}), Type::String());
  EXPECT_EQ(Resolve("length", {Type::String()}), Type::Int());
  EXPECT_EQ(Resolve("split", {Type::String(), Type::String()}), Type::List(Type::String()));
  // int is assignable to float, but not the other way.
  EXPECT_EQ(Resolve("to_timestamp", {Type::Int()}), Type::Timestamp());
  std::string error;
  EXPECT_TRUE(Resolve("to_timestamp", {Type::Float()}, &error).is_error());
  EXPECT_EQ(error, "argument 1 of `to_timestamp` must be int, found float");
}

TEST(StdlibResolveCall, WrongArgumentTypeMessage) {
  std::string error;
  EXPECT_TRUE(Resolve("substr", {Type::String(), Type::String()}, &error).is_error());
  EXPECT_EQ(error, "argument 2 of `substr` must be int, found string");
  EXPECT_TRUE(Resolve("upper", {Type::Int().AsNullable()}, &error).is_error());
  EXPECT_EQ(error, "argument 1 of `upper` must be string, found int?");
}

TEST(StdlibResolveCall, ArityMessages) {
  std::string error;
  EXPECT_TRUE(Resolve("upper", {Type::String(), Type::String()}, &error).is_error());
  EXPECT_EQ(error, "`upper` takes 1 argument, found 2");
  EXPECT_TRUE(Resolve("substr", {Type::String()}, &error).is_error());
  EXPECT_EQ(error, "`substr` takes 2 to 3 arguments, found 1");
  EXPECT_TRUE(Resolve("concat", {}, &error).is_error());
  EXPECT_EQ(error, "`concat` takes at least 1 argument, found 0");
  EXPECT_TRUE(Resolve("now", {Type::Int()}, &error).is_error());
  EXPECT_EQ(error, "`now` takes 0 arguments, found 1");
}

TEST(StdlibResolveCall, OptionalTrailingParameter) {
  EXPECT_EQ(Resolve("substr", {Type::String(), Type::Int()}), Type::String());
  EXPECT_EQ(Resolve("substr", {Type::String(), Type::Int(), Type::Int()}), Type::String());
  EXPECT_EQ(Resolve("count", {}), Type::Int());
  EXPECT_EQ(Resolve("count", {Type::String().AsNullable()}), Type::Int());
}

TEST(StdlibResolveCall, Variadic) {
  EXPECT_EQ(Resolve("concat", {Type::String(), Type::String(), Type::String(), Type::String()}),
            Type::String());
  std::string error;
  EXPECT_TRUE(Resolve("concat", {Type::String(), Type::String(), Type::Int()}, &error).is_error());
  EXPECT_EQ(error, "argument 3 of `concat` must be string, found int");
}

TEST(StdlibResolveCall, NumericPattern) {
  EXPECT_EQ(Resolve("sqrt", {Type::Int()}), Type::Float());
  EXPECT_EQ(Resolve("sqrt", {Type::Float()}), Type::Float());
  std::string error;
  EXPECT_TRUE(Resolve("sqrt", {Type::String()}, &error).is_error());
  EXPECT_EQ(error, "argument 1 of `sqrt` must be int or float, found string");
}

TEST(StdlibResolveCall, TypeVariableBindsAndUnifies) {
  EXPECT_EQ(Resolve("abs", {Type::Int()}), Type::Int());
  EXPECT_EQ(Resolve("abs", {Type::Float()}), Type::Float());
  EXPECT_EQ(Resolve("mod", {Type::Int(), Type::Int()}), Type::Int());
  EXPECT_EQ(Resolve("mod", {Type::Int(), Type::Float()}), Type::Float());
  EXPECT_EQ(Resolve("greatest", {Type::Int(), Type::Float(), Type::Int()}), Type::Float());
  EXPECT_EQ(Resolve("greatest", {Type::String(), Type::String()}), Type::String());
  std::string error;
  EXPECT_TRUE(Resolve("greatest", {Type::Int(), Type::String()}, &error).is_error());
  EXPECT_EQ(error, "argument 2 of `greatest` must be int, found string");
  EXPECT_TRUE(Resolve("nullif", {Type::Timestamp(), Type::Duration()}, &error).is_error());
  EXPECT_EQ(error, "argument 2 of `nullif` must be timestamp, found duration");
  // Records and lists are not comparable.
  EXPECT_TRUE(Resolve("max", {Type::List(Type::Int())}, &error).is_error());
  EXPECT_EQ(
      error,
      "argument 1 of `max` must be a comparable type (int, float, string, timestamp, duration "
      "or bool), found list<int>");
}

TEST(StdlibResolveCall, ListPatternAndElementResult) {
  Type strings = Type::List(Type::String());
  EXPECT_EQ(Resolve("element_at", {strings, Type::Int()}), Type::String().AsNullable());
  EXPECT_EQ(Resolve("cardinality", {strings}), Type::Int());
  EXPECT_EQ(Resolve("array_contains", {strings, Type::String()}), Type::Bool());
  std::string error;
  EXPECT_TRUE(Resolve("array_contains", {strings, Type::Int()}, &error).is_error());
  EXPECT_EQ(error, "argument 2 of `array_contains` must be string, found int");
  EXPECT_TRUE(Resolve("cardinality", {Type::String()}, &error).is_error());
  EXPECT_EQ(error, "argument 1 of `cardinality` must be a list, found string");
}

TEST(StdlibResolveCall, NullablePropagation) {
  Type ns = Type::String().AsNullable();
  EXPECT_EQ(Resolve("upper", {ns}), ns);
  EXPECT_EQ(Resolve("substr", {Type::String(), Type::Int().AsNullable()}), ns);
  EXPECT_EQ(Resolve("upper", {Type::Null()}), ns);
  // Results that are always nullable.
  EXPECT_EQ(Resolve("parse_int", {Type::String()}), Type::Int().AsNullable());
  EXPECT_EQ(Resolve("nullif", {Type::Int(), Type::Int()}), Type::Int().AsNullable());
  // No propagation: count(x) of a nullable x is a plain int.
  EXPECT_EQ(Resolve("count", {Type::Float().AsNullable()}), Type::Int());
  EXPECT_EQ(Resolve("hash", {Type::Int()}), Type::Int());
  // Aggregates of nullable inputs may be null (no non-null value in the group).
  EXPECT_EQ(Resolve("sum", {Type::Int().AsNullable()}), Type::Int().AsNullable());
  EXPECT_EQ(Resolve("avg", {Type::Int()}), Type::Float());
}

TEST(StdlibResolveCall, CoalesceIsNullOnlyIfAllArgumentsAre) {
  Type ni = Type::Int().AsNullable();
  EXPECT_EQ(Resolve("coalesce", {ni, Type::Int()}), Type::Int());
  EXPECT_EQ(Resolve("coalesce", {ni, ni}), ni);
  EXPECT_EQ(Resolve("coalesce", {ni, Type::Float()}), Type::Float());
  EXPECT_EQ(Resolve("coalesce", {Type::Null(), Type::String()}), Type::String());
  EXPECT_EQ(Resolve("coalesce", {Type::Null()}), Type::Null());
}

TEST(StdlibResolveCall, ErrorArgumentsDoNotCascade) {
  std::string error;
  // A bad argument already reported: no new message, a typed result where it is known.
  EXPECT_EQ(Resolve("upper", {Type::Error()}, &error), Type::String());
  EXPECT_EQ(error, "");
  EXPECT_EQ(Resolve("substr", {Type::Error(), Type::Int()}, &error), Type::String());
  EXPECT_EQ(error, "");
  EXPECT_EQ(Resolve("greatest", {Type::Error(), Type::Int()}, &error), Type::Int());
  EXPECT_EQ(error, "");
  // T bound only by an error: the result is an error, still silently.
  EXPECT_TRUE(Resolve("abs", {Type::Error()}, &error).is_error());
  EXPECT_EQ(error, "");
  EXPECT_TRUE(Resolve("element_at", {Type::Error(), Type::Int()}, &error).is_error());
  EXPECT_EQ(error, "");
}

TEST(StdlibResolveCall, DetailedReportsBoundType) {
  CallResolution r = ResolveCallDetailed(*FindFunction("sum"), {Type::Int().AsNullable()}, nullptr);
  EXPECT_EQ(r.bound_t, Type::Int());
  EXPECT_EQ(
      ExpandCpp(*FindFunction("sum"), {"x"}, {Type::Int()}, types::CppType(r.bound_t, nullptr)),
      "::flow::agg::Sum<int64_t>");
}

TEST(StdlibCpp, ExpandPlaceholders) {
  const FunctionSpec& substr = *FindFunction("substr");
  EXPECT_EQ(ExpandCpp(substr, {"a", "b", "c"}, {}, ""), "::flow::fn::Substr(a, b, c)");
  EXPECT_EQ(ExpandCpp(*FindFunction("upper"), {"r.url"}, {Type::String()}, ""),
            "::flow::fn::Upper(r.url)");
  EXPECT_EQ(ExpandCpp(*FindFunction("to_string"), {"r.ts"}, {Type::Timestamp()}, ""),
            "::flow::fn::ToString(r.ts, ::flow::fn::tag::Timestamp{})");
}

TEST(StdlibLiteralArguments, RegexAndUnits) {
  const FunctionSpec& like = *FindFunction("regexp_like");
  EXPECT_EQ(CheckLiteralArgument(like, 1, "^a[0-9]+$"), "");
  std::string err = CheckLiteralArgument(like, 1, "a[0-9");
  EXPECT_EQ(err.rfind("invalid regular expression 'a[0-9' in `regexp_like`: ", 0), 0u) << err;
  EXPECT_EQ(CheckLiteralArgument(like, 0, "a[0-9"), "");  // the subject is not a pattern
  const FunctionSpec& trunc = *FindFunction("date_trunc");
  EXPECT_EQ(CheckLiteralArgument(trunc, 0, "hour"), "");
  EXPECT_EQ(CheckLiteralArgument(trunc, 0, "fortnight"),
            "unknown unit 'fortnight' in `date_trunc`; expected one of second, minute, hour, day, "
            "week, month, year");
}

TEST(StdlibSignature, ShowsOptionalAndVariadic) {
  EXPECT_EQ(Signature(*FindFunction("substr")),
            "substr(s: string, start: int[, len: int]) -> string");
  EXPECT_EQ(Signature(*FindFunction("concat")), "concat(s: string...) -> string");
  EXPECT_EQ(Signature(*FindFunction("count")), "count([x: any]) -> int");
}

TEST(StdlibSuggest, CloseNames) {
  auto has = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  EXPECT_TRUE(has(SuggestFunctions("uper"), "upper"));
  EXPECT_TRUE(has(SuggestFunctions("substring"), "substr"));
  EXPECT_TRUE(has(SuggestFunctions("UPPER"), "upper"));
  EXPECT_TRUE(has(SuggestFunctions("cout"), "count"));
  EXPECT_EQ(SuggestFunctions("uper").front(), "upper");
  EXPECT_TRUE(SuggestFunctions("zzzzzzzzzz").empty());
  EXPECT_LE(SuggestFunctions("mi").size(), 3u);
}

}  // namespace
}  // namespace flow::stdlib
