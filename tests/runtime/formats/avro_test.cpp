// Avro binary encoding, schema parsing and resolution (formats/avro.h, formats/avro_schema.h).
// Expected bytes are written out by hand from the Avro specification's examples and rules; the
// interoperability with another implementation is tested against Confluent's Python client
// (tests/runtime/connectors/kafka_avro_test.py).

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "flow/runtime/formats/avro.h"
#include "flow/runtime/formats/avro_registry.h"
#include "flow/runtime/formats/avro_schema.h"

namespace flow::rt {
namespace {

std::string Bytes(std::initializer_list<int> b) {
  std::string s;
  for (int x : b) s.push_back(static_cast<char>(x));
  return s;
}

std::string Encoded(auto write) {
  std::string s;
  AvroOut out(&s);
  write(out);
  return s;
}

TEST(AvroBinary, LongsAreZigZagVarintsAsTheSpecificationShows) {
  // The specification's table: 0 -> 00, -1 -> 01, 1 -> 02, -2 -> 03, 2 -> 04, -64 -> 7f, 64 -> 80
  // 01.
  EXPECT_EQ(Encoded([](AvroOut& o) { o.Long(0); }), Bytes({0x00}));
  EXPECT_EQ(Encoded([](AvroOut& o) { o.Long(-1); }), Bytes({0x01}));
  EXPECT_EQ(Encoded([](AvroOut& o) { o.Long(1); }), Bytes({0x02}));
  EXPECT_EQ(Encoded([](AvroOut& o) { o.Long(-2); }), Bytes({0x03}));
  EXPECT_EQ(Encoded([](AvroOut& o) { o.Long(2); }), Bytes({0x04}));
  EXPECT_EQ(Encoded([](AvroOut& o) { o.Long(-64); }), Bytes({0x7f}));
  EXPECT_EQ(Encoded([](AvroOut& o) { o.Long(64); }), Bytes({0x80, 0x01}));
  // The string "foo": length 3 (06), then its bytes.
  EXPECT_EQ(Encoded([](AvroOut& o) { o.Bytes("foo"); }), Bytes({0x06, 'f', 'o', 'o'}));

  auto schema = AvroSchema::Parse("\"long\"");
  ASSERT_TRUE(schema.ok());
  for (int64_t v : {int64_t{0}, int64_t{-1}, int64_t{64}, INT64_MAX, INT64_MIN}) {
    std::string s = Encoded([v](AvroOut& o) { o.Long(v); });
    AvroIn in(s, *schema);
    int64_t got = 7;
    ASSERT_TRUE(in.Long(&got).ok());
    EXPECT_EQ(got, v);
    EXPECT_EQ(in.remaining(), 0u);
  }
}

TEST(AvroBinary, MalformedBytesAreErrorsNotCrashes) {
  auto schema = AvroSchema::Parse("\"string\"");
  ASSERT_TRUE(schema.ok());
  int64_t v;
  std::string_view sv;
  std::string eleven(11, '\x80');
  AvroIn long_varint(eleven, *schema);
  EXPECT_NE(long_varint.Long(&v).message().find("longer than 10 bytes"), std::string::npos);
  std::string cut = Bytes({0x80});
  AvroIn truncated(cut, *schema);
  EXPECT_NE(truncated.Long(&v).message().find("truncated"), std::string::npos);
  std::string big =
      Bytes({0xfe, 0xff, 0xff, 0xff, 0x0f, 'a'});  // a length of 2^31 - 1 with one byte left
  AvroIn huge(big, *schema);
  EXPECT_NE(huge.Bytes(&sv).message().find("truncated"), std::string::npos);
  std::string neg = Bytes({0x01});
  AvroIn negative(neg, *schema);
  EXPECT_NE(negative.Bytes(&sv).message().find("negative length"), std::string::npos);
  std::string two = Bytes({0x02});
  bool b;
  AvroIn boolean(two, *schema);
  EXPECT_NE(boolean.Boolean(&b).message().find("not 0 or 1"), std::string::npos);
}

TEST(AvroSchemaParse, NamedTypesNamespacesAndRecursion) {
  auto s = AvroSchema::Parse(
      R"({"type": "record", "name": "Node", "namespace": "com.example", "fields": [
      {"name": "value", "type": {"type": "long", "logicalType": "timestamp-micros"}},
      {"name": "next", "type": ["null", "Node"], "default": null},
      {"name": "color", "type": {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN"]}},
      {"name": "other", "type": "com.example.Color"}]})");
  ASSERT_TRUE(s.ok()) << s.status().message();
  const AvroNode& root = s->node(s->root());
  EXPECT_EQ(root.name, "com.example.Node");
  ASSERT_EQ(root.fields.size(), 4u);
  EXPECT_EQ(s->node(root.fields[0].type).logical, "timestamp-micros");
  const AvroNode& next = s->node(root.fields[1].type);
  ASSERT_EQ(next.type, AvroType::kUnion);
  EXPECT_EQ(next.branches[1], s->root());  // the recursive reference
  EXPECT_TRUE(root.fields[1].has_default);
  EXPECT_EQ(root.fields[2].type, root.fields[3].type);
  EXPECT_EQ(s->Describe(root.fields[1].type), "union [null, com.example.Node]");
}

TEST(AvroSchemaParse, BadSchemasNameTheProblem) {
  EXPECT_NE(AvroSchema::Parse(
                R"({"type": "record", "name": "R", "fields": [{"name": "a", "type": "Adress"}]})")
                .status()
                .message()
                .find("unknown type `Adress`"),
            std::string::npos);
  EXPECT_NE(AvroSchema::Parse("{\"type\": ").status().message().find("malformed JSON"),
            std::string::npos);
  EXPECT_NE(AvroSchema::Parse(R"(["null", ["string"]])")
                .status()
                .message()
                .find("union directly inside a union"),
            std::string::npos);
  std::string deep;
  for (int i = 0; i < 200; ++i) deep += R"({"type": "array", "items": )";
  deep += "\"long\"" + std::string(200, '}');
  EXPECT_NE(AvroSchema::Parse(deep).status().message().find("nested deeper"), std::string::npos);
}

// A hand-written codec for reader record {id: long, name: string, score: double?, tags:
// list<string>}, shaped like the generated ones (records_avro.cpp).
struct Rec {
  int64_t id = 0;
  std::string name;
  std::optional<double> score;
  std::vector<std::string> tags;
};
constexpr const char* kReader = R"({"type": "record", "name": "Rec", "fields": [
    {"name": "id", "type": "long"}, {"name": "name", "type": "string"},
    {"name": "score", "type": ["null", "double"], "default": null},
    {"name": "tags", "type": {"type": "array", "items": "string"}}]})";

Status ReadRec(AvroIn& in, const AvroResolved& r, Rec* out) {
  return in.Record(r, [&](int32_t j, const AvroResolved& f) -> Status {
    switch (j) {
      case 0:
        return AvroLong::Read(in, f, &out->id);
      case 1:
        return AvroString::Read(in, f, &out->name);
      case 2:
        return AvroNullable<AvroDouble>::Read(in, f, &out->score);
      case 3:
        return AvroList<AvroString>::Read(in, f, &out->tags);
    }
    return Status::Ok();
  });
}

Result<std::shared_ptr<const AvroResolution>> Resolve(std::string_view writer) {
  auto w = AvroSchema::Parse(writer);
  if (!w.ok()) return w.status();
  auto r = AvroSchema::Parse(kReader);
  if (!r.ok()) return r.status();
  return AvroResolution::Make(std::move(*w), *r);
}

TEST(AvroResolution, PromotionsSkipsReorderingAndDefaults) {
  // The writer: fields in another order, `id` as an int, `score` absent, an extra map and record.
  auto res = Resolve(R"({"type": "record", "name": "Other", "fields": [
      {"name": "extra", "type": {"type": "map", "values": "long"}},
      {"name": "name", "type": ["null", "string"]},
      {"name": "id", "type": "int"},
      {"name": "tags", "type": {"type": "array", "items": {"type": "enum", "name": "T", "symbols": ["a", "b"]}}},
      {"name": "inner", "type": {"type": "record", "name": "In", "fields": [{"name": "x", "type": "float"}]}}]})");
  ASSERT_TRUE(res.ok()) << res.status().message();
  // extra: one block of 1 entry {"k": 5}, then 0. name: branch 1, "ab". id: 150 as an int (ac 02).
  // tags: 2 items, symbols 1 and 0, then 0. inner.x: 4 bytes of a float.
  std::string body = Bytes({0x02, 0x02, 'k', 0x0a, 0x00, 0x02, 0x04, 'a', 'b', 0xac, 0x02, 0x04,
                            0x02, 0x00, 0x00, 0x00, 0x00, 0x80, 0x3f});
  AvroIn in(body, (*res)->writer());
  Rec rec;
  rec.score = 1.0;  // a missing nullable field is left as the caller's fresh value; here: untouched
  ASSERT_TRUE(ReadRec(in, (*res)->root(), &rec).ok());
  EXPECT_EQ(in.remaining(), 0u);
  EXPECT_EQ(rec.id, 150);
  EXPECT_EQ(rec.name, "ab");
  EXPECT_EQ(rec.tags, (std::vector<std::string>{"b", "a"}));
}

TEST(AvroResolution, IncompatibleSchemasAreRefusedNamingTheField) {
  auto missing =
      Resolve(R"({"type": "record", "name": "W", "fields": [{"name": "id", "type": "long"},
      {"name": "tags", "type": {"type": "array", "items": "string"}}]})");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(
      missing.status().message().find("field `name`: the writer's record W has no such field"),
      std::string::npos)
      << missing.status().message();
  auto mismatch =
      Resolve(R"({"type": "record", "name": "W", "fields": [{"name": "id", "type": "string"},
      {"name": "name", "type": "string"}, {"name": "tags", "type": {"type": "array", "items": "string"}}]})");
  ASSERT_FALSE(mismatch.ok());
  EXPECT_EQ(mismatch.status().message(), "field `id`: the writer's string cannot be read as long");
  // A long cannot become an int; a double cannot become a long.
  auto narrowing =
      Resolve(R"({"type": "record", "name": "W", "fields": [{"name": "id", "type": "double"},
      {"name": "name", "type": "string"}, {"name": "tags", "type": {"type": "array", "items": "string"}}]})");
  EXPECT_FALSE(narrowing.ok());
}

TEST(AvroResolution, UnionBranchesAreCheckedPerRecord) {
  // id may be null or a string in the writer's union: only records that use those branches fail.
  auto res = Resolve(
      R"({"type": "record", "name": "W", "fields": [{"name": "id", "type": ["null", "string", "long"]},
      {"name": "name", "type": "string"}, {"name": "tags", "type": {"type": "array", "items": "string"}},
      {"name": "score", "type": ["null", "float"]}]})");
  ASSERT_TRUE(res.ok()) << res.status().message();
  auto read = [&](std::string body) {
    AvroIn in(body, (*res)->writer());
    Rec rec;
    Status s = ReadRec(in, (*res)->root(), &rec);
    return std::make_pair(s, rec);
  };
  // id: branch 2, 7; name "x"; tags empty; score: branch 1, 2.5f (00 00 20 40).
  auto [ok, rec] = read(Bytes({0x04, 0x0e, 0x02, 'x', 0x00, 0x02, 0x00, 0x00, 0x20, 0x40}));
  ASSERT_TRUE(ok.ok()) << ok.message();
  EXPECT_EQ(rec.id, 7);
  EXPECT_EQ(rec.score, 2.5);
  auto [null_id, _1] = read(Bytes({0x00, 0x02, 'x', 0x00, 0x00}));
  EXPECT_NE(null_id.message().find("null where the script's type is not nullable"),
            std::string::npos);
  auto [string_id, _2] = read(Bytes({0x02, 0x02, '7', 0x02, 'x', 0x00, 0x00}));
  EXPECT_EQ(string_id.message(), "union branch 1 (string) cannot be read as the script's type");
  auto [bad_index, _3] = read(Bytes({0x06}));
  EXPECT_NE(bad_index.message().find("out of range"), std::string::npos);
  // score: null branch -> null.
  auto [null_score, rec2] = read(Bytes({0x04, 0x0e, 0x02, 'x', 0x00, 0x00}));
  ASSERT_TRUE(null_score.ok());
  EXPECT_FALSE(rec2.score.has_value());
}

TEST(AvroResolution, TimestampsInOtherUnitsBecomeMilliseconds) {
  auto reader = AvroSchema::Parse(R"({"type": "long", "logicalType": "timestamp-millis"})");
  ASSERT_TRUE(reader.ok());
  auto micros = AvroSchema::Parse(R"({"type": "long", "logicalType": "timestamp-micros"})");
  ASSERT_TRUE(micros.ok());
  auto res = AvroResolution::Make(std::move(*micros), *reader);
  ASSERT_TRUE(res.ok());
  // -1,500 us is 1.5 ms before the epoch: -2 ms, rounded down like the time it names.
  for (auto [us, ms] :
       {std::pair<int64_t, int64_t>{1764663000123456, 1764663000123}, {-1500, -2}}) {
    std::string body = Encoded([us](AvroOut& o) { o.Long(us); });
    AvroIn in(body, (*res)->writer());
    int64_t got;
    ASSERT_TRUE(AvroTimestamp::Read(in, (*res)->root(), &got).ok());
    EXPECT_EQ(got, ms);
  }
  auto date = AvroSchema::Parse(R"({"type": "int", "logicalType": "date"})");
  ASSERT_TRUE(date.ok());
  auto days = AvroResolution::Make(std::move(*date), *reader);
  ASSERT_TRUE(days.ok());
  std::string body = Bytes({0x04});  // day 2
  AvroIn in(body, (*days)->writer());
  int64_t got;
  ASSERT_TRUE(AvroTimestamp::Read(in, (*days)->root(), &got).ok());
  EXPECT_EQ(got, 2 * 86400000);
}

TEST(AvroResolution, WritingThenReadingTheSameSchemaRoundTrips) {
  auto res = Resolve(kReader);
  ASSERT_TRUE(res.ok());
  Rec in_rec{-5, "h\xC3\xA9llo", 0.25, {"a", "", "c"}};
  std::string body;
  AvroOut out(&body);
  AvroLong::Write(in_rec.id, out);
  AvroString::Write(in_rec.name, out);
  AvroNullable<AvroDouble>::Write(in_rec.score, out);
  AvroList<AvroString>::Write(in_rec.tags, out);
  // id -5 (09), name (0c + 6 bytes), score branch 1 + 8 bytes, tags: count 3 (06) ... 0.
  EXPECT_EQ(body.substr(0, 2), Bytes({0x09, 0x0c}));
  AvroIn in(body, (*res)->writer());
  Rec back;
  ASSERT_TRUE(ReadRec(in, (*res)->root(), &back).ok());
  EXPECT_EQ(back.id, in_rec.id);
  EXPECT_EQ(back.name, in_rec.name);
  EXPECT_EQ(back.score, in_rec.score);
  EXPECT_EQ(back.tags, in_rec.tags);
  std::string bad_utf8 = Bytes({0x09, 0x02, 0xff, 0x00, 0x00});
  AvroIn bad(bad_utf8, (*res)->writer());
  EXPECT_EQ(ReadRec(bad, (*res)->root(), &back).message(), "invalid UTF-8 in a string");
}

TEST(ConfluentFrame, HeaderIsMagicByteAndBigEndianId) {
  EXPECT_EQ(ConfluentHeader(0x01020304), Bytes({0x00, 0x01, 0x02, 0x03, 0x04}));
  int32_t id;
  std::string_view body;
  std::string framed = Bytes({0x00, 0x00, 0x00, 0x01, 0x00, 0x2a});
  ASSERT_TRUE(ConfluentAvroFrame(framed, &id, &body).ok());
  EXPECT_EQ(id, 256);
  EXPECT_EQ(body, Bytes({0x2a}));
  EXPECT_EQ(ConfluentAvroFrame("{\"a\":1}", &id, &body).message(),
            "not in the Confluent Avro wire format (first byte 0x7b, want 0x00)");
  EXPECT_EQ(ConfluentAvroFrame(Bytes({0x00, 0x01}), &id, &body).message(),
            "too short for the Confluent Avro wire format (2 bytes)");
}

TEST(SchemaRegistryUrl, BadUrlsAreRefusedBeforeAnyRequest) {
  EXPECT_FALSE(SchemaRegistry::Make("127.0.0.1:8081").ok());
  EXPECT_FALSE(SchemaRegistry::Make("ftp://host").ok());
  EXPECT_FALSE(SchemaRegistry::Make("http://").ok());
  EXPECT_NE(
      SchemaRegistry::Make("http://user:secret@host:8081").status().message().find("credentials"),
      std::string::npos);
  EXPECT_TRUE(SchemaRegistry::Make("https://registry.example:443/apis/ccompat/v7/").ok());
}

TEST(SchemaRegistryUrl, AnUnreachableRegistryIsUnavailableAfterTheRetryTimeout) {
  // Port 1 on loopback: nothing listens; connections are refused at once.
  auto r = SchemaRegistry::Make(
      "http://127.0.0.1:1",
      SchemaRegistryOptions{.request_timeout_ms = 500, .retry_timeout_ms = 600});
  ASSERT_TRUE(r.ok());
  auto s = (*r)->AvroSchemaById(1);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(s.status().message().find("http://127.0.0.1:1"), std::string::npos)
      << s.status().message();
}

}  // namespace
}  // namespace flow::rt
