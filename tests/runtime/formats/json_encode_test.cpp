// JsonEncoder: exact output for known values, and a property test that encoding then decoding
// random records (with nasty strings) gives the records back.

#include <gtest/gtest.h>

#include <bitset>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "flow/runtime/formats/json_codecs.h"
#include "flow/runtime/formats/value_text.h"

namespace flow::rt {
namespace {

TEST(JsonEncoder, EscapesEveryControlCharAndQuotes) {
  std::string all;
  for (int c = 0; c < 0x20; ++c) all.push_back(static_cast<char>(c));
  all += "\"\\/";
  JsonEncoder e;
  e.String(all);
  // Reference written out by hand from RFC 8259's escaping rules.
  std::string expected =
      "\"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n\\u000b\\f\\r"
      "\\u000e\\u000f\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018\\u0019"
      "\\u001a\\u001b\\u001c\\u001d\\u001e\\u001f\\\"\\\\/\"";
  EXPECT_EQ(e.view(), expected);
}

TEST(JsonEncoder, Utf8PassesThroughInvalidBytesReplaced) {
  JsonEncoder e;
  e.String("h\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");  // é € 😀
  EXPECT_EQ(e.view(), "\"h\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\"");
  e.Clear();
  e.String(
      "a\xFF"
      "b\xC3");  // stray byte, truncated sequence
  EXPECT_EQ(e.view(),
            "\"a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD\"");
  e.Clear();
  e.String("\xED\xA0\x80");  // an encoded surrogate is not valid UTF-8
  EXPECT_EQ(e.view(), "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"");
}

TEST(JsonEncoder, NumbersTimestampsAndStructure) {
  JsonEncoder e;
  e.BeginObject();
  e.Field<JsonInt>("i", int64_t{-9223372036854775807LL - 1});
  e.Field<JsonFloat>("f", 0.1);
  e.Field<JsonFloat>("nan", std::nan(""));
  e.Field<JsonFloat>("inf", -std::numeric_limits<double>::infinity());
  e.Field<JsonTimestamp>("ts", TimestampMs{1500});
  e.Field<JsonDuration>("d", DurationMs{90000});
  e.Field<JsonBytes>("b", std::string("hi?"));
  e.Field<JsonList<JsonNullable<JsonBool>>>(
      "l", std::vector<std::optional<bool>>{true, std::nullopt, false});
  e.Field<JsonList<JsonInt>>("empty", std::vector<int64_t>{});
  e.EndObject();
  EXPECT_EQ(e.view(), R"({"i":-9223372036854775808,"f":0.1,"nan":null,"inf":null,)"
                      R"("ts":"1970-01-01T00:00:01.500Z","d":90000,"b":"aGk/",)"
                      R"("l":[true,null,false],"empty":[]})");
}

TEST(ValueText, FastTimestampMatchesFormatTimestamp) {
  std::mt19937_64 rng(3);
  std::vector<TimestampMs> values = {0,
                                     -1,
                                     1,
                                     86399999,
                                     -62135596800000LL,
                                     253402300799999LL,
                                     -62135596800001LL,
                                     253402300800000LL};
  for (int i = 0; i < 20000; ++i) {
    values.push_back(static_cast<int64_t>(rng() % 800000000000000ULL) - 400000000000000LL);
  }
  for (TimestampMs ts : values) {
    std::string fast;
    AppendTimestamp(ts, &fast);
    ASSERT_EQ(fast, FormatTimestamp(ts)) << ts;
  }
}

// AppendTimestamp reuses the date text of the day before: runs of timestamps within a day, across
// midnight, back to an earlier day, and through a year it cannot format fast.
TEST(ValueText, FastTimestampMatchesFormatTimestampAcrossDays) {
  std::vector<TimestampMs> values;
  const TimestampMs midnight = 20425LL * 86400000;  // 2025-12-04
  for (TimestampMs t = midnight - 5000; t < midnight + 5000; t += 333) values.push_back(t);
  values.push_back(midnight - 86400000LL * 400);
  values.push_back(midnight + 1);
  values.push_back(-62135596800001LL);  // year 0 - 1: the general path
  values.push_back(midnight + 2);
  values.push_back(253402300800000LL);  // year 10000
  values.push_back(midnight + 86399999);
  for (TimestampMs ts : values) {
    std::string fast;
    AppendTimestamp(ts, &fast);
    ASSERT_EQ(fast, FormatTimestamp(ts)) << ts;
  }
}

// A record with every codec, for the round trip.
struct Rec {
  std::string s;
  std::string b;
  int64_t i = 0;
  double f = 0;
  bool flag = false;
  TimestampMs ts = 0;
  DurationMs d = 0;
  std::vector<std::string> list;
  std::optional<std::string> opt;
  std::vector<std::optional<double>> floats;
  bool operator==(const Rec&) const = default;
};

inline constexpr JsonFieldTable<10> kRecFields{
    {"s", "b", "i", "f", "flag", "ts", "d", "list", "opt", "floats"},
    {true, true, true, true, true, true, true, true, false, true}};

void Encode(const Rec& r, JsonEncoder* e) {
  e->BeginObject();
  e->Field<JsonString>("s", r.s);
  e->Field<JsonBytes>("b", r.b);
  e->Field<JsonInt>("i", r.i);
  e->Field<JsonFloat>("f", r.f);
  e->Field<JsonBool>("flag", r.flag);
  e->Field<JsonTimestamp>("ts", r.ts);
  e->Field<JsonDuration>("d", r.d);
  e->Field<JsonList<JsonString>>("list", r.list);
  e->Field<JsonNullable<JsonString>>("opt", r.opt);
  e->Field<JsonList<JsonNullable<JsonFloat>>>("floats", r.floats);
  e->EndObject();
}

Status Decode(JsonDecoder& d, std::string_view json, Rec* r) {
  FLOW_RETURN_IF_ERROR(d.Begin(json));
  std::bitset<10> seen;
  std::string_view key;
  while (d.NextField(&key)) {
    int idx = kRecFields.Find(key);
    switch (idx) {
      case 0:
        FLOW_RETURN_IF_ERROR(d.Read<JsonString>("s", &r->s));
        break;
      case 1:
        FLOW_RETURN_IF_ERROR(d.Read<JsonBytes>("b", &r->b));
        break;
      case 2:
        FLOW_RETURN_IF_ERROR(d.Read<JsonInt>("i", &r->i));
        break;
      case 3:
        FLOW_RETURN_IF_ERROR(d.Read<JsonFloat>("f", &r->f));
        break;
      case 4:
        FLOW_RETURN_IF_ERROR(d.Read<JsonBool>("flag", &r->flag));
        break;
      case 5:
        FLOW_RETURN_IF_ERROR(d.Read<JsonTimestamp>("ts", &r->ts));
        break;
      case 6:
        FLOW_RETURN_IF_ERROR(d.Read<JsonDuration>("d", &r->d));
        break;
      case 7:
        FLOW_RETURN_IF_ERROR(d.Read<JsonList<JsonString>>("list", &r->list));
        break;
      case 8:
        FLOW_RETURN_IF_ERROR(d.Read<JsonNullable<JsonString>>("opt", &r->opt));
        break;
      case 9:
        FLOW_RETURN_IF_ERROR(d.Read<JsonList<JsonNullable<JsonFloat>>>("floats", &r->floats));
        break;
      default:
        break;
    }
    if (idx >= 0) seen.set(static_cast<size_t>(idx));
  }
  FLOW_RETURN_IF_ERROR(d.End());
  if (!seen[8]) r->opt.reset();
  return d.CheckRequired(kRecFields, seen);
}

// Random valid UTF-8 heavy in characters that need escaping or multibyte encoding.
std::string NastyString(std::mt19937_64& rng) {
  static const std::vector<std::string> pieces = {"\"",
                                                  "\\",
                                                  "/",
                                                  "\x7f",
                                                  "\xC3\xA9",
                                                  "\xE2\x82\xAC",
                                                  "\xF0\x9F\x98\x80",
                                                  "\xEF\xBF\xBF",
                                                  "\xF4\x8F\xBF\xBF",
                                                  "\\u0000",
                                                  "a",
                                                  "Z",
                                                  " ",
                                                  "{",
                                                  "}",
                                                  "[",
                                                  ":",
                                                  ","};
  std::string s;
  size_t n = rng() % 24;
  for (size_t i = 0; i < n; ++i) {
    if (rng() % 3 == 0) {
      s.push_back(static_cast<char>(rng() % 0x20));  // any control char, NUL included
    } else {
      s += pieces[rng() % pieces.size()];
    }
  }
  return s;
}

double RandomDouble(std::mt19937_64& rng) {
  switch (rng() % 5) {
    case 0:
      return static_cast<double>(static_cast<int64_t>(rng() % 2000) - 1000);
    case 1: {
      double v;
      uint64_t bits = rng();
      std::memcpy(&v, &bits, sizeof v);
      return std::isfinite(v) ? v : 0.5;
    }
    case 2:
      return std::numeric_limits<double>::denorm_min();
    case 3:
      return std::numeric_limits<double>::max();
    default:
      return std::uniform_real_distribution<double>(-1e6, 1e6)(rng);
  }
}

TEST(JsonRoundTrip, RandomRecordsSurviveEncodeDecode) {
  std::mt19937_64 rng(20261129);
  JsonEncoder enc;
  JsonDecoder dec;
  for (int iter = 0; iter < 3000; ++iter) {
    Rec in;
    in.s = NastyString(rng);
    for (size_t i = 0, n = rng() % 12; i < n; ++i) in.b.push_back(static_cast<char>(rng()));
    in.i = static_cast<int64_t>(rng());
    in.f = RandomDouble(rng);
    in.flag = rng() % 2;
    // Timestamps between years 0001 and 9999 (RFC 3339's range).
    in.ts = static_cast<int64_t>(rng() % 315537897600000ULL) - 62135596800000LL;
    in.d = static_cast<int64_t>(rng() % 4000000000000ULL) - 2000000000000LL;
    for (size_t i = 0, n = rng() % 4; i < n; ++i) in.list.push_back(NastyString(rng));
    if (rng() % 2) in.opt = NastyString(rng);
    for (size_t i = 0, n = rng() % 4; i < n; ++i) {
      in.floats.push_back(rng() % 3 == 0 ? std::optional<double>() : RandomDouble(rng));
    }
    enc.Clear();
    Encode(in, &enc);
    Rec out;
    Status s = Decode(dec, enc.view(), &out);
    ASSERT_TRUE(s.ok()) << s.ToString() << "\njson: " << enc.view();
    ASSERT_EQ(out, in) << "json: " << enc.view();
  }
}

}  // namespace
}  // namespace flow::rt
