// Math, time, conditional/collection functions and aggregates.

#include "stdlib/registry/registry_internal.h"

namespace flow::stdlib::internal {

const std::vector<std::string>& DateTruncUnits() {
  static const std::vector<std::string> units = {"second", "minute", "hour", "day",
                                                 "week",   "month",  "year"};
  return units;
}

namespace {
constexpr auto S = FunctionKind::kScalar;
constexpr auto A = FunctionKind::kAggregate;

void Push(std::vector<FunctionSpec>* out, const std::vector<Def>& defs) {
  for (const Def& d : defs) out->push_back(d.spec());
}

Def Unary(const char* name, const char* category, const char* in, const char* ret, const char* cpp,
          const char* summary, const char* example) {
  return Def(name, S, category)
      .Param("x", in)
      .Returns(ret)
      .Cpp(cpp)
      .Summary(summary)
      .Example(example);
}
}  // namespace

void AddMathFunctions(std::vector<FunctionSpec>* out) {
  const char* c = "math";
  Push(out,
       {
           Unary("abs", c, "T:numeric", "T", "::flow::fn::Abs({0})",
                 "Absolute value; for int the most negative value stays as it is (wraps).",
                 "abs(delta)"),
           Def("round", S, c)
               .Param("x", "T:numeric")
               .Optional("digits", "int")
               .Returns("T")
               .Cpp("::flow::fn::Round({args})")
               .Summary(
                   "`x` rounded half away from zero to `digits` decimal places (default 0); ints "
                   "are returned unchanged when `digits` >= 0.")
               .Example("round(price, 2)"),
           Unary("floor", c, "T:numeric", "T", "::flow::fn::Floor({0})",
                 "The largest whole number <= `x`.", "floor(score)"),
           Unary("ceil", c, "T:numeric", "T", "::flow::fn::Ceil({0})",
                 "The smallest whole number >= `x`.", "ceil(score)"),
           Unary("sqrt", c, "numeric", "float", "::flow::fn::Sqrt({0})",
                 "Square root; NaN for negative `x`.", "sqrt(variance)"),
           Def("pow", S, c)
               .Param("base", "numeric")
               .Param("exponent", "numeric")
               .Returns("float")
               .Cpp("::flow::fn::Pow({0}, {1})")
               .Summary("`base` raised to `exponent` (IEEE rules: NaN for a negative base and "
                        "fractional exponent).")
               .Example("pow(2, bits)"),
           Unary("ln", c, "numeric", "float", "::flow::fn::Ln({0})",
                 "Natural logarithm; -Infinity for 0, NaN for negative `x`.", "ln(amount)"),
           Unary("log10", c, "numeric", "float", "::flow::fn::Log10({0})",
                 "Base-10 logarithm; -Infinity for 0, NaN for negative `x`.", "log10(bytes)"),
           Unary("exp", c, "numeric", "float", "::flow::fn::Exp({0})", "e raised to `x`.",
                 "exp(rate)"),
           Def("mod", S, c)
               .Param("a", "T:numeric")
               .Param("b", "T:numeric")
               .Returns("T")
               .Cpp("::flow::fn::Mod({0}, {1})")
               .Summary("Remainder of `a` / `b` with the sign of `a`; `b` = 0 gives 0 for int and "
                        "NaN for float.")
               .Example("mod(user_id, 16)"),
           Def("greatest", S, c)
               .Param("x", "T:comparable")
               .Variadic()
               .Returns("T")
               .Cpp("::flow::fn::Greatest({args})")
               .Summary("The largest argument (NaN counts as the largest float); null if any "
                        "argument is null.")
               .Example("greatest(bid, reserve)"),
           Def("least", S, c)
               .Param("x", "T:comparable")
               .Variadic()
               .Returns("T")
               .Cpp("::flow::fn::Least({args})")
               .Summary("The smallest argument (NaN counts as the largest float); null if any "
                        "argument is null.")
               .Example("least(price, cap)"),
           Unary("sign", c, "numeric", "int", "::flow::fn::Sign({0})",
                 "-1, 0 or 1 by the sign of `x` (0 for NaN).", "sign(balance)"),
       });
}

void AddTimeFunctions(std::vector<FunctionSpec>* out) {
  const char* c = "time";
  // Calendar parts, optionally of a zone's wall clock.
  auto part = [&](const char* name, const char* cpp, const char* summary) {
    return Def(name, S, c)
        .Param("x", "timestamp")
        .Optional("zone", "string")
        .Returns("int")
        .Cpp(cpp)
        .Summary(summary)
        .Example(std::string(name) + "(event_time)");
  };
  Push(
      out,
      {
          Def("now", S, c)
              .Returns("timestamp")
              .Cpp("::flow::fn::Now()")
              .Summary("The current processing (wall-clock) time; not deterministic on replay.")
              .Example("now()"),
          Unary("to_timestamp", c, "int", "timestamp", "::flow::fn::ToTimestamp({0})",
                "The timestamp `x` milliseconds after 1970-01-01T00:00:00Z.",
                "to_timestamp(ts_ms)"),
          Unary("to_millis", c, "timestamp", "int", "::flow::fn::ToMillis({0})",
                "Milliseconds since 1970-01-01T00:00:00Z.", "to_millis(event_time)"),
          Def("date_trunc", S, c)
              .Param("unit", "string")
              .Param("ts", "timestamp")
              .Optional("zone", "string")
              .Returns("timestamp")
              .Cpp("::flow::fn::DateTrunc({args})")
              .Summary("`ts` truncated to the start of its second, minute, hour, day, week "
                       "(Monday), month or year, in UTC or on the wall clock of `zone` (an IANA "
                       "name such as \"Europe/Berlin\"; a day that starts in a clock change "
                       "starts at the change); an unknown unit leaves `ts` unchanged.")
              .Example("date_trunc(\"hour\", event_time)"),
          part("year", "::flow::fn::Year({args})", "The year of `x` (UTC, or in `zone`)."),
          part("month", "::flow::fn::Month({args})",
               "The month (1-12) of `x` (UTC, or in `zone`)."),
          part("day", "::flow::fn::Day({args})",
               "The day of the month (1-31) of `x` (UTC, or in `zone`)."),
          part("hour", "::flow::fn::Hour({args})", "The hour (0-23) of `x` (UTC, or in `zone`)."),
          part(
              "minute", "::flow::fn::Minute({args})",
              "The minute (0-59) of `x` (UTC, or in `zone`: some zones are 30 or 45 minutes off)."),
          part("second", "::flow::fn::Second({args})",
               "The second (0-59) of `x` (the same in every zone)."),
          part("day_of_week", "::flow::fn::DayOfWeek({args})",
               "The ISO day of the week (1 = Monday ... 7 = Sunday) of `x` (UTC, or in `zone`)."),
          Def("format_timestamp", S, c)
              .Param("ts", "timestamp")
              .Param("pattern", "string")
              .Optional("zone", "string")
              .Returns("string")
              .Cpp("::flow::fn::FormatTimestamp({args})")
              .Summary("`ts` formatted by `pattern` (UTC, or the wall clock of `zone`): %Y year, "
                       "%m month, %d day, %H hour, %M minute, %S second, %L milliseconds, %% a "
                       "percent sign; other text is copied.")
              .Example("format_timestamp(event_time, \"%Y-%m-%d %H:%M\")"),
          Def("parse_timestamp", S, c)
              .Param("x", "string")
              .Optional("zone", "string")
              .Returns("timestamp?")
              .Cpp("::flow::fn::ParseTimestamp({args})")
              .Summary("The RFC 3339 timestamp written in `x` (e.g. \"2026-11-29T14:41:15.123Z\", "
                       "offsets allowed); with `zone`, a time without an offset "
                       "(\"2026-11-29T14:41:15\") is that zone's wall clock (the earlier instant "
                       "when the clock shows it twice); null if it is not one.")
              .Example("parse_timestamp(created_at)"),
      });
}

void AddConditionalFunctions(std::vector<FunctionSpec>* out) {
  Push(out, {
                Def("coalesce", S, "conditional")
                    .Param("x", "T")
                    .Variadic()
                    .Returns("T?all")
                    .NoNullPropagation()
                    .Cpp("::flow::fn::Coalesce({args})")
                    .Summary("The first argument that is not null; null only if all are.")
                    .Example("coalesce(nickname, name, \"anonymous\")"),
                Def("nullif", S, "conditional")
                    .Param("a", "T")
                    .Param("b", "T")
                    .Returns("T?")
                    .NoNullPropagation()
                    .Cpp("::flow::fn::NullIf({0}, {1})")
                    .Summary("Null when `a` equals `b`, otherwise `a`.")
                    .Example("nullif(status, \"\")"),
                Def("hash", S, "conditional")
                    .Param("x", "any")
                    .Returns("int")
                    .Cpp("::flow::fn::Hash({0})")
                    .Summary("A stable 64-bit hash of `x`, identical in every process and build.")
                    .Example("hash(user_id)"),
                Def("cardinality", S, "collection")
                    .Param("list", "list<T>")
                    .Returns("int")
                    .Cpp("::flow::fn::Cardinality({0})")
                    .Summary("The number of elements in `list`.")
                    .Example("cardinality(split(tags, \",\"))"),
                Def("element_at", S, "collection")
                    .Param("list", "list<T>")
                    .Param("index", "int")
                    .Returns("T?")
                    .Cpp("::flow::fn::ElementAt({0}, {1})")
                    .Summary("The element at 1-based `index` (negative counts from the end); null "
                             "when out of range.")
                    .Example("element_at(split(path, \"/\"), 2)"),
                Def("array_contains", S, "collection")
                    .Param("list", "list<T>")
                    .Param("value", "T")
                    .Returns("bool")
                    .Cpp("::flow::fn::ArrayContains({0}, {1})")
                    .Summary("True when `list` has an element equal to `value`.")
                    .Example("array_contains(roles, \"admin\")"),
            });
}

void AddAggregates(std::vector<FunctionSpec>* out) {
  const char* c = "aggregate";
  Push(
      out,
      {
          Def("count", A, c)
              .Optional("x", "any")
              .Returns("int")
              .NoNullPropagation()
              .Cpp("::flow::agg::Count")
              .Summary(
                  "count() counts rows; count(x) counts rows where `x` is not null. Retractable.")
              .Example("count()"),
          Def("sum", A, c)
              .Param("x", "T:numeric")
              .Returns("T")
              .Cpp("::flow::agg::Sum<{T}>")
              .Summary("Sum of the non-null values (int sums wrap on overflow). Retractable.")
              .Example("sum(price)"),
          Def("min", A, c)
              .Param("x", "T:comparable")
              .Returns("T")
              .Cpp("::flow::agg::Min<{T}>")
              .Summary("The smallest non-null value (NaN counts as the largest float).")
              .Example("min(price)"),
          Def("max", A, c)
              .Param("x", "T:comparable")
              .Returns("T")
              .Cpp("::flow::agg::Max<{T}>")
              .Summary("The largest non-null value (NaN counts as the largest float).")
              .Example("max(price)"),
          Def("avg", A, c)
              .Param("x", "T:numeric")
              .Returns("float")
              .Cpp("::flow::agg::Avg<{T}>")
              .Summary("The mean of the non-null values. Retractable.")
              .Example("avg(latency_ms)"),
          Def("count_distinct", A, c)
              .Param("x", "T")
              .Returns("int")
              .NoNullPropagation()
              .Cpp("::flow::agg::CountDistinct<{T}>")
              .Summary("The exact number of distinct non-null values (keeps every value in state).")
              .Example("count_distinct(user_id)"),
          Def("approx_distinct", A, c)
              .Param("x", "T")
              .Returns("int")
              .NoNullPropagation()
              .Cpp("::flow::agg::ApproxDistinct<{T}>")
              .Summary("The approximate number of distinct non-null values (HyperLogLog, about 1% "
                       "error, "
                       "at most 16 KiB of state).")
              .Example("approx_distinct(user_id)"),
          Def("first", A, c)
              .Param("x", "T")
              .Returns("T")
              .EventTime()
              .Cpp("::flow::agg::First<{T}>")
              .Summary(
                  "The non-null value with the earliest event time (ties: the earliest arrival).")
              .Example("first(page)"),
          Def("last", A, c)
              .Param("x", "T")
              .Returns("T")
              .EventTime()
              .Cpp("::flow::agg::Last<{T}>")
              .Summary("The non-null value with the latest event time (ties: the latest arrival).")
              .Example("last(page)"),
      });
}

}  // namespace flow::stdlib::internal
