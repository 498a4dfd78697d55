// JSON decoding through the shape the code generator emits: a hand-written "generated" decode
// function for a Click schema, checked against hand-written expectations.

#include <gtest/gtest.h>

#include <bitset>
#include <optional>
#include <string>
#include <vector>

#include "flow/runtime/formats/json_codecs.h"

namespace flow::rt {
namespace {

// schema Click { user: string, url: string, bytes: int, tags: list<string>, ref: string?,
//                ts: timestamp }
struct Click {
  std::string user;
  std::string url;
  int64_t bytes = 0;
  std::vector<std::string> tags;
  std::optional<std::string> ref;
  TimestampMs ts = 0;
};

inline constexpr JsonFieldTable<6> kClickFields{{"user", "url", "bytes", "tags", "ref", "ts"},
                                                {true, true, true, true, false, true}};

// What the generator emits for Click.
Status DecodeClickJson(JsonDecoder& d, std::string_view payload, Click* out) {
  FLOW_RETURN_IF_ERROR(d.Begin(payload));
  std::bitset<6> seen;
  std::string_view key;
  while (d.NextField(&key)) {
    switch (kClickFields.Find(key)) {
      case 0:
        FLOW_RETURN_IF_ERROR(d.Read<JsonString>("user", &out->user));
        seen.set(0);
        break;
      case 1:
        FLOW_RETURN_IF_ERROR(d.Read<JsonString>("url", &out->url));
        seen.set(1);
        break;
      case 2:
        FLOW_RETURN_IF_ERROR(d.Read<JsonInt>("bytes", &out->bytes));
        seen.set(2);
        break;
      case 3:
        FLOW_RETURN_IF_ERROR(d.Read<JsonList<JsonString>>("tags", &out->tags));
        seen.set(3);
        break;
      case 4:
        FLOW_RETURN_IF_ERROR(d.Read<JsonNullable<JsonString>>("ref", &out->ref));
        seen.set(4);
        break;
      case 5:
        FLOW_RETURN_IF_ERROR(d.Read<JsonTimestamp>("ts", &out->ts));
        seen.set(5);
        break;
      default:
        break;
    }
  }
  FLOW_RETURN_IF_ERROR(d.End());
  if (!seen[4]) out->ref.reset();
  return d.CheckRequired(kClickFields, seen);
}

// 2026-11-29T14:41:15.123Z computed by hand: days from 1970-01-01 to 2026-11-29 = 20786.
constexpr TimestampMs kTs = 20786LL * 86400000 + (14 * 3600 + 41 * 60 + 15) * 1000LL + 123;

class JsonDecodeTest : public ::testing::Test {
 protected:
  Status Decode(std::string_view json) { return DecodeClickJson(decoder_, json, &click_); }
  JsonDecoder decoder_;
  Click click_;
};

TEST_F(JsonDecodeTest, DecodesAllFieldsInSchemaOrder) {
  ASSERT_TRUE(Decode(R"({"user":"ann","url":"/a","bytes":42,"tags":["x","y"],"ref":"r1",)"
                     R"("ts":"2026-11-29T14:41:15.123Z"})")
                  .ok());
  EXPECT_EQ(click_.user, "ann");
  EXPECT_EQ(click_.url, "/a");
  EXPECT_EQ(click_.bytes, 42);
  EXPECT_EQ(click_.tags, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(click_.ref, std::optional<std::string>("r1"));
  EXPECT_EQ(click_.ts, kTs);
}

TEST_F(JsonDecodeTest, AnyOrderAndUnknownFieldsSkipped) {
  Status s =
      Decode(R"({"extra":{"deep":[1,{"a":[true,null]}]},"ts":1764427275123,"tags":[],"bytes":-7,)"
             R"("noise":"\u00e9\n","url":"/b","user":"b\"ob","more":[[],[]]})");
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(click_.user, "b\"ob");
  EXPECT_EQ(click_.url, "/b");
  EXPECT_EQ(click_.bytes, -7);
  EXPECT_TRUE(click_.tags.empty());
  EXPECT_EQ(click_.ref, std::nullopt);
  EXPECT_EQ(click_.ts, 1764427275123);
}

TEST_F(JsonDecodeTest, NullableMissingOrNullIsNullopt) {
  const char* base = R"({"user":"u","url":"/","bytes":1,"tags":[],"ts":0)";
  ASSERT_TRUE(Decode(std::string(base) + R"(,"ref":"set"})").ok());
  EXPECT_EQ(click_.ref, std::optional<std::string>("set"));
  // The decoder reuses `click_`: a missing nullable field must be reset, not left over.
  ASSERT_TRUE(Decode(std::string(base) + "}").ok());
  EXPECT_EQ(click_.ref, std::nullopt);
  ASSERT_TRUE(Decode(std::string(base) + R"(,"ref":"again"})").ok());
  ASSERT_TRUE(Decode(std::string(base) + R"(,"ref":null})").ok());
  EXPECT_EQ(click_.ref, std::nullopt);
}

TEST_F(JsonDecodeTest, ListIsReplacedNotAppended) {
  const char* base = R"({"user":"u","url":"/","bytes":1,"ts":0,"tags":)";
  ASSERT_TRUE(Decode(std::string(base) + R"(["a","b","c"]})").ok());
  ASSERT_TRUE(Decode(std::string(base) + R"(["z"]})").ok());
  EXPECT_EQ(click_.tags, std::vector<std::string>{"z"});
}

TEST_F(JsonDecodeTest, TimestampForms) {
  const char* base = R"({"user":"u","url":"/","bytes":1,"tags":[],"ts":)";
  ASSERT_TRUE(Decode(std::string(base) + R"("2026-11-29T16:41:15.123+02:00"})").ok());
  EXPECT_EQ(click_.ts, kTs);
  ASSERT_TRUE(Decode(std::string(base) + "-1000}").ok());
  EXPECT_EQ(click_.ts, -1000);
  Status s = Decode(std::string(base) + R"("yesterday"})");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("field `ts`: invalid timestamp"), std::string::npos) << s.message();
  s = Decode(std::string(base) + "true}");
  EXPECT_NE(s.message().find("field `ts`: expected timestamp"), std::string::npos) << s.message();
}

struct BadCase {
  const char* json;
  const char* message_part;
};

TEST_F(JsonDecodeTest, ErrorsNameFieldAndProblem) {
  const BadCase cases[] = {
      {R"({"user":"u","url":"/","bytes":"9","tags":[],"ts":0})",
       "field `bytes`: expected int, found string"},
      {R"({"user":"u","url":"/","bytes":1.5,"tags":[],"ts":0})",
       "field `bytes`: expected int, found float"},
      {R"({"user":"u","url":"/","bytes":99999999999999999999,"tags":[],"ts":0})", "field `bytes`:"},
      {R"({"user":"u","url":"/","bytes":1,"tags":["a",2],"ts":0})",
       "field `tags`: element 1: expected string, found int"},
      {R"({"user":"u","url":"/","bytes":1,"tags":"a","ts":0})",
       "field `tags`: expected list, found string"},
      {R"({"user":null,"url":"/","bytes":1,"tags":[],"ts":0})",
       "field `user`: expected string, found null"},
      {R"({"user":"u","bytes":1,"tags":[],"ts":0})", "field `url`: missing"},
      {R"({"user":"u","url":"/","bytes":1,"tags":[],"ref":5,"ts":0})",
       "field `ref`: expected string, found int"},
      {R"([1,2])", "expected a JSON object per record, found list"},
      {R"("str")", "expected a JSON object per record, found string"},
      {"", "empty payload"},
      {"   \n", "empty payload"},
      {R"({"user":"u","url":"/","bytes":1,"tags":[],"ts":0} junk)", "trailing content"},
      {R"({"user":"u","url":"/","bytes":1,"tags":[],"ts":0)", "malformed JSON"},
      {R"({"user":"u",,"url":"/"})", "malformed JSON"},
      {R"({"user":"u","url":"/","bytes":1,"tags":[,],"ts":0})", "field `tags`"},
      {"{\"user\":\"\xff\xfe\",\"url\":\"/\",\"bytes\":1,\"tags\":[],\"ts\":0}", "invalid UTF-8"},
      {R"({"user":"\ud800","url":"/","bytes":1,"tags":[],"ts":0})", "field `user`"},
  };
  for (const auto& c : cases) {
    Status s = Decode(c.json);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.json;
    EXPECT_NE(s.message().find(c.message_part), std::string::npos)
        << "input: " << c.json << "\nmessage: " << s.message();
  }
  // The decoder stays usable after errors.
  ASSERT_TRUE(Decode(R"({"user":"ok","url":"/","bytes":1,"tags":[],"ts":0})").ok());
  EXPECT_EQ(click_.user, "ok");
}

TEST_F(JsonDecodeTest, DeeplyNestedUnknownFieldDoesNotCrash) {
  std::string deep = R"({"user":"u","url":"/","bytes":1,"tags":[],"ts":0,"x":)";
  deep += std::string(100000, '[') + std::string(100000, ']') + "}";
  Status s = Decode(deep);
  // Either accepted (skipped) or rejected with a message; what matters is no crash.
  if (!s.ok()) {
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  }
}

// Decoding through other codecs: float accepts ints; bytes are base64; durations; bool lists;
// nullable elements.
TEST(JsonCodecs, OtherTypes) {
  JsonDecoder d;
  ASSERT_TRUE(d.Begin(R"({"f":3,"g":2.5,"b":"aGk/Pw==","d":"1h30m","e":250,)"
                      R"("bl":[true,false,true],"ni":[1,null,3]})")
                  .ok());
  double f = 0, g = 0;
  std::string b;
  DurationMs dur = 0, e = 0;
  std::vector<bool> bl;
  std::vector<std::optional<int64_t>> ni;
  std::string_view key;
  while (d.NextField(&key)) {
    if (key == "f") {
      ASSERT_TRUE(d.Read<JsonFloat>("f", &f).ok());
    }
    if (key == "g") {
      ASSERT_TRUE(d.Read<JsonFloat>("g", &g).ok());
    }
    if (key == "b") {
      ASSERT_TRUE(d.Read<JsonBytes>("b", &b).ok());
    }
    if (key == "d") {
      ASSERT_TRUE(d.Read<JsonDuration>("d", &dur).ok());
    }
    if (key == "e") {
      ASSERT_TRUE(d.Read<JsonDuration>("e", &e).ok());
    }
    if (key == "bl") {
      ASSERT_TRUE(d.Read<JsonList<JsonBool>>("bl", &bl).ok());
    }
    if (key == "ni") {
      ASSERT_TRUE(d.Read<JsonList<JsonNullable<JsonInt>>>("ni", &ni).ok());
    }
  }
  ASSERT_TRUE(d.End().ok());
  EXPECT_EQ(f, 3.0);
  EXPECT_EQ(g, 2.5);
  EXPECT_EQ(b, "hi??");
  EXPECT_EQ(dur, 90 * 60 * 1000);
  EXPECT_EQ(e, 250);
  EXPECT_EQ(bl, (std::vector<bool>{true, false, true}));
  EXPECT_EQ(ni, (std::vector<std::optional<int64_t>>{1, std::nullopt, 3}));

  ASSERT_TRUE(d.Begin(R"({"b":"not base64!"})").ok());
  ASSERT_TRUE(d.NextField(&key));
  Status s = d.Read<JsonBytes>("b", &b);
  EXPECT_NE(s.message().find("field `b`: invalid base64"), std::string::npos) << s.message();
}

// A nested record type: the generator emits a codec per schema, reading the field's object with
// JsonObjectReader, so records nest to any depth.
struct Geo {
  double lat = 0;
  double lon = 0;
  std::optional<std::string> city;
  bool operator==(const Geo&) const = default;
};

inline constexpr JsonFieldTable<3> kGeoFields{{"lat", "lon", "city"}, {true, true, false}};

struct JsonGeo {
  using Value = Geo;
  static Status Read(JsonValue& v, Geo* out) {
    JsonObjectReader r;
    FLOW_RETURN_IF_ERROR(r.Begin(v));
    std::bitset<3> seen;
    std::string_view key;
    while (r.NextField(&key)) {
      switch (kGeoFields.Find(key)) {
        case 0:
          FLOW_RETURN_IF_ERROR(r.Read<JsonFloat>("lat", &out->lat));
          seen.set(0);
          break;
        case 1:
          FLOW_RETURN_IF_ERROR(r.Read<JsonFloat>("lon", &out->lon));
          seen.set(1);
          break;
        case 2:
          FLOW_RETURN_IF_ERROR(r.Read<JsonNullable<JsonString>>("city", &out->city));
          seen.set(2);
          break;
        default:
          break;
      }
    }
    FLOW_RETURN_IF_ERROR(r.End());
    if (!seen[2]) out->city.reset();
    return r.CheckRequired(kGeoFields, seen);
  }
  static void Write(const Geo& g, JsonEncoder* e) {
    e->BeginObject();
    e->Field<JsonFloat>("lat", g.lat);
    e->Field<JsonFloat>("lon", g.lon);
    e->Field<JsonNullable<JsonString>>("city", g.city);
    e->EndObject();
  }
};

TEST(JsonNested, RecordsInsideRecordsAndLists) {
  JsonDecoder d;
  ASSERT_TRUE(d.Begin(R"({"skip":{"lat":"x"},"at":{"city":"Oslo","x":[1],"lon":10.75,"lat":59.9},)"
                      R"("path":[{"lat":1,"lon":2},{"lat":3,"lon":4,"city":null}],"n":1})")
                  .ok());
  Geo at;
  std::vector<Geo> path;
  std::string_view key;
  while (d.NextField(&key)) {
    if (key == "at") {
      ASSERT_TRUE(d.Read<JsonGeo>("at", &at).ok());
    } else if (key == "path") {
      ASSERT_TRUE(d.Read<JsonList<JsonGeo>>("path", &path).ok());
    }
  }
  ASSERT_TRUE(d.End().ok());
  EXPECT_EQ(at, (Geo{59.9, 10.75, std::string("Oslo")}));
  EXPECT_EQ(path, (std::vector<Geo>{{1, 2, std::nullopt}, {3, 4, std::nullopt}}));

  ASSERT_TRUE(d.Begin(R"({"at":{"lat":1,"lon":"east"}})").ok());
  ASSERT_TRUE(d.NextField(&key));
  Status s = d.Read<JsonGeo>("at", &at);
  EXPECT_EQ(s.message(), "field `at`: field `lon`: expected float, found string");
  ASSERT_TRUE(d.Begin(R"({"at":[1,2]})").ok());
  ASSERT_TRUE(d.NextField(&key));
  s = d.Read<JsonGeo>("at", &at);
  EXPECT_EQ(s.message(), "field `at`: expected object, found list");
  ASSERT_TRUE(d.Begin(R"({"at":{"lat":1}})").ok());
  ASSERT_TRUE(d.NextField(&key));
  s = d.Read<JsonGeo>("at", &at);
  EXPECT_EQ(s.message(), "field `at`: field `lon`: missing");

  JsonEncoder e;
  e.BeginObject();
  e.Field<JsonList<JsonGeo>>("path", path);
  e.EndObject();
  EXPECT_EQ(e.view(), R"({"path":[{"lat":1,"lon":2,"city":null},{"lat":3,"lon":4,"city":null}]})");
}

}  // namespace
}  // namespace flow::rt
