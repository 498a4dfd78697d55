// Protobuf encoding, schemas and resolution (formats/protobuf.h, formats/protobuf_schema.h,
// formats/protobuf_registry.h). The reference on the other side is libprotobuf's own dynamic
// messages: they serialize what Flow reads and parse what Flow writes, so neither side's bytes
// come from Flow's code. Interoperability with Confluent's client is tested end to end
// (tests/codegen_io/protobuf/protobuf_kafka_test.py).

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/message.h>
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "flow/runtime/formats/protobuf.h"
#include "flow/runtime/formats/protobuf_registry.h"
#include "flow/runtime/formats/protobuf_schema.h"
#include "flow/runtime/formats/value_text.h"

namespace flow::rt {
namespace {

namespace pb = google::protobuf;

// What a producer in another language writes: every integer encoding, an enum, a float, packed
// and unpacked lists, a nested message, a map, a Timestamp, a oneof, and fields Flow skips.
constexpr const char* kWriter = R"(
syntax = "proto3";
package shop;
import "google/protobuf/timestamp.proto";
import "google/protobuf/duration.proto";

message Order {
  int32 i32 = 1;
  sint64 s64 = 2;
  uint64 u64 = 3;
  fixed32 f32 = 4;
  sfixed64 sf64 = 5;
  enum Status { NEW = 0; PAID = 1; SHIPPED = 7; }
  Status status = 6;
  float ratio = 7;
  string name = 8;
  optional string note = 9;
  repeated int64 packed = 10;
  repeated sint32 unpacked = 11 [packed = false];
  Address address = 12;
  map<string, int64> counts = 13;
  google.protobuf.Timestamp at = 14;
  google.protobuf.Duration took = 15;
  bytes blob = 16;
  int64 skipped = 17;
  repeated Address skipped_list = 18;
  int64 big_number = 1000;
  Status status_number = 19;
  int64 plain = 20;
  repeated Status history = 21;  // packed, as proto3 writes repeated enums
  message Address { string city = 1; int32 zip = 2; }
}
)";

// The script's side: what records_protobuf.cpp generates for
//   schema Order { i32: int, s64: int, u64: int, f32: float, sf64: int, status: string,
//     ratio: float, name: string, note: string?, packed: list<int>, unpacked: list<int>,
//     address: Address?, counts: list<Count>, at: timestamp, took: duration, blob: string,
//     big_number: int, status_number: int, plain: int?, absent: int? }
constexpr const char* kReader = R"(
syntax = "proto3";
import "google/protobuf/timestamp.proto";
import "google/protobuf/duration.proto";
message Order {
  int64 i32 = 1;
  int64 s64 = 2;
  int64 u64 = 3;
  double f32 = 4;
  int64 sf64 = 5;
  string status = 6;
  double ratio = 7;
  string name = 8;
  optional string note = 9;
  repeated int64 packed = 10;
  repeated int64 unpacked = 11;
  optional Address address = 12;
  repeated Count counts = 13;
  google.protobuf.Timestamp at = 14;
  google.protobuf.Duration took = 15;
  string blob = 16;
  int64 big_number = 17;
  int64 status_number = 18;
  optional int64 plain = 19;
  optional int64 absent = 20;
  repeated string history = 21;
}
message Address { string city = 1; optional int64 zip = 2; }
message Count { string key = 1; int64 value = 2; }
)";

struct Address {
  std::string city;
  std::optional<int64_t> zip;
};
struct Count {
  std::string key;
  int64_t value = 0;
};
struct Order {
  int64_t i32 = 0, s64 = 0, u64 = 0;
  double f32 = 0;
  int64_t sf64 = 0;
  std::string status;
  double ratio = 0;
  std::string name;
  std::optional<std::string> note;
  std::vector<int64_t> packed, unpacked;
  std::optional<Address> address;
  std::vector<Count> counts;
  int64_t at = 0, took = 0;
  std::string blob;
  int64_t big_number = 0, status_number = 0;
  std::optional<int64_t> plain, absent;
  std::vector<std::string> history;
};

// Hand-written as the code generator writes record codecs.
struct ProtoAddress : ProtoRecord<ProtoAddress, Address> {
  static Status ReadBody(ProtoIn& in, const ProtoMessage& m, Address* out) {
    ProtoReset(out->city, m, 0);
    ProtoReset(out->zip, m, 1);
    return in.Message(m, [&](int32_t j, const ProtoField& f) -> Status {
      if (j == 0) return ProtoString::Read(in, f, &out->city);
      return ProtoNullable<ProtoInt>::Read(in, f, &out->zip);
    });
  }
  static void WriteBody(const Address& v, ProtoOut& out) {
    ProtoWriteField<ProtoString>(1, v.city, out);
    ProtoWriteField<ProtoNullable<ProtoInt>>(2, v.zip, out);
  }
};
struct ProtoCount : ProtoRecord<ProtoCount, Count> {
  static Status ReadBody(ProtoIn& in, const ProtoMessage& m, Count* out) {
    ProtoReset(out->key, m, 0);
    ProtoReset(out->value, m, 1);
    return in.Message(m, [&](int32_t j, const ProtoField& f) -> Status {
      if (j == 0) return ProtoString::Read(in, f, &out->key);
      return ProtoInt::Read(in, f, &out->value);
    });
  }
  static void WriteBody(const Count& v, ProtoOut& out) {
    ProtoWriteField<ProtoString>(1, v.key, out);
    ProtoWriteField<ProtoInt>(2, v.value, out);
  }
};

Status ReadOrder(ProtoIn& in, const ProtoMessage& m, Order* out) {
  ProtoReset(out->status, m, 5);
  ProtoReset(out->packed, m, 9);
  ProtoReset(out->note, m, 8);
  ProtoReset(out->address, m, 11);
  ProtoReset(out->plain, m, 18);
  ProtoReset(out->absent, m, 19);
  return in.Message(m, [&](int32_t j, const ProtoField& f) -> Status {
    Status s;
    switch (j) {
      case 0:
        s = ProtoInt::Read(in, f, &out->i32);
        break;
      case 1:
        s = ProtoInt::Read(in, f, &out->s64);
        break;
      case 2:
        s = ProtoInt::Read(in, f, &out->u64);
        break;
      case 3:
        s = ProtoDouble::Read(in, f, &out->f32);
        break;
      case 4:
        s = ProtoInt::Read(in, f, &out->sf64);
        break;
      case 5:
        s = ProtoString::Read(in, f, &out->status);
        break;
      case 6:
        s = ProtoDouble::Read(in, f, &out->ratio);
        break;
      case 7:
        s = ProtoString::Read(in, f, &out->name);
        break;
      case 8:
        s = ProtoNullable<ProtoString>::Read(in, f, &out->note);
        break;
      case 9:
        s = ProtoList<ProtoInt>::Read(in, f, &out->packed);
        break;
      case 10:
        s = ProtoList<ProtoInt>::Read(in, f, &out->unpacked);
        break;
      case 11:
        s = ProtoNullable<ProtoAddress>::Read(in, f, &out->address);
        break;
      case 12:
        s = ProtoList<ProtoCount>::Read(in, f, &out->counts);
        break;
      case 13:
        s = ProtoTimestampMs::Read(in, f, &out->at);
        break;
      case 14:
        s = ProtoDurationMs::Read(in, f, &out->took);
        break;
      case 15:
        s = ProtoString::Read(in, f, &out->blob);
        break;
      case 16:
        s = ProtoInt::Read(in, f, &out->big_number);
        break;
      case 17:
        s = ProtoInt::Read(in, f, &out->status_number);
        break;
      case 18:
        s = ProtoNullable<ProtoInt>::Read(in, f, &out->plain);
        break;
      case 19:
        s = ProtoNullable<ProtoInt>::Read(in, f, &out->absent);
        break;
      case 20:
        s = ProtoList<ProtoString>::Read(in, f, &out->history);
        break;
    }
    return s.ok() ? s : ProtoFieldError("#" + std::to_string(j), s);
  });
}

std::shared_ptr<const ProtoSchema> MustParse(const std::string& text) {
  auto s = ProtoSchema::Parse(text);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? *s : nullptr;
}

// A message of `schema`'s first (or named) type, filled by libprotobuf's reflection.
struct Dynamic {
  explicit Dynamic(const ProtoSchema& schema, const std::string& name = "")
      : type(name.empty() ? schema.file()->message_type(0)
                          : schema.file()->pool()->FindMessageTypeByName(name)),
        msg(factory.GetPrototype(type)->New()) {}
  const pb::FieldDescriptor* F(const std::string& name) const {
    return type->FindFieldByName(name);
  }
  pb::DynamicMessageFactory factory;
  const pb::Descriptor* type;
  std::unique_ptr<pb::Message> msg;
};

std::shared_ptr<const ProtoResolution> Resolve(const std::shared_ptr<const ProtoSchema>& writer,
                                               const std::string& reader_text) {
  auto reader = MustParse(reader_text);
  auto r = ProtoResolution::Make(writer, writer->file()->message_type(0),
                                 reader->file()->message_type(0));
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : nullptr;
}

TEST(ProtobufRead, EveryWriterEncodingReadsAsTheScriptsTypes) {
  auto writer = MustParse(kWriter);
  ASSERT_NE(writer, nullptr);
  auto resolution = Resolve(writer, kReader);
  ASSERT_NE(resolution, nullptr);

  Dynamic d(*writer);
  const pb::Reflection* r = d.msg->GetReflection();
  r->SetInt32(d.msg.get(), d.F("i32"), -5);  // ten bytes on the wire, sign-extended
  r->SetInt64(d.msg.get(), d.F("s64"), -1234567890123);
  r->SetUInt64(d.msg.get(), d.F("u64"), 1ull << 40);
  r->SetUInt32(d.msg.get(), d.F("f32"), 4000000000u);
  r->SetInt64(d.msg.get(), d.F("sf64"), -7);
  r->SetEnumValue(d.msg.get(), d.F("status"), 7);
  r->SetFloat(d.msg.get(), d.F("ratio"), 0.5f);
  r->SetString(d.msg.get(), d.F("name"), "Zoë");
  for (int64_t v : {1, -2, 300}) r->AddInt64(d.msg.get(), d.F("packed"), v);
  for (int32_t v : {-1, 64}) r->AddInt32(d.msg.get(), d.F("unpacked"), v);
  pb::Message* address = r->MutableMessage(d.msg.get(), d.F("address"));
  address->GetReflection()->SetString(address, address->GetDescriptor()->FindFieldByName("city"),
                                      "Oslo");
  pb::Message* entry = r->AddMessage(d.msg.get(), d.F("counts"));
  entry->GetReflection()->SetString(entry, entry->GetDescriptor()->FindFieldByName("key"), "a");
  entry->GetReflection()->SetInt64(entry, entry->GetDescriptor()->FindFieldByName("value"), 3);
  pb::Message* at = r->MutableMessage(d.msg.get(), d.F("at"));
  // 1969-12-31T23:59:58.5 written as seconds -2 and nanos 500,000,000.
  at->GetReflection()->SetInt64(at, at->GetDescriptor()->FindFieldByName("seconds"), -2);
  at->GetReflection()->SetInt32(at, at->GetDescriptor()->FindFieldByName("nanos"), 500000000);
  pb::Message* took = r->MutableMessage(d.msg.get(), d.F("took"));
  took->GetReflection()->SetInt64(took, took->GetDescriptor()->FindFieldByName("seconds"), 90);
  took->GetReflection()->SetInt32(took, took->GetDescriptor()->FindFieldByName("nanos"), 250000000);
  r->SetString(d.msg.get(), d.F("blob"), "text");
  r->SetInt64(d.msg.get(), d.F("skipped"), 99);
  r->AddMessage(d.msg.get(), d.F("skipped_list"));
  r->SetInt64(d.msg.get(), d.F("big_number"), 12);
  r->SetEnumValue(d.msg.get(), d.F("status_number"), 1);
  for (int v : {1, 7, 0}) r->AddEnumValue(d.msg.get(), d.F("history"), v);
  std::string bytes;
  ASSERT_TRUE(d.msg->SerializeToString(&bytes));

  Order o;
  o.absent = 5;  // a reused record: every field is reset first
  ProtoIn in(bytes);
  Status s = ReadOrder(in, resolution->root(), &o);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(o.i32, -5);
  EXPECT_EQ(o.s64, -1234567890123);
  EXPECT_EQ(o.u64, 1ll << 40);
  EXPECT_EQ(o.f32, 4000000000.0);
  EXPECT_EQ(o.sf64, -7);
  EXPECT_EQ(o.status, "SHIPPED");
  EXPECT_EQ(o.ratio, 0.5);
  EXPECT_EQ(o.name, "Zoë");
  EXPECT_FALSE(o.note.has_value());  // `optional` and absent: null
  EXPECT_EQ(o.packed, (std::vector<int64_t>{1, -2, 300}));
  EXPECT_EQ(o.unpacked, (std::vector<int64_t>{-1, 64}));
  ASSERT_TRUE(o.address.has_value());
  EXPECT_EQ(o.address->city, "Oslo");
  EXPECT_EQ(o.address->zip, std::optional<int64_t>(0));  // no presence in the writer: default
  ASSERT_EQ(o.counts.size(), 1u);
  EXPECT_EQ(o.counts[0].key, "a");
  EXPECT_EQ(o.counts[0].value, 3);
  EXPECT_EQ(o.at, -1500);
  EXPECT_EQ(o.took, 90250);
  EXPECT_EQ(o.blob, "text");
  EXPECT_EQ(o.big_number, 12);  // matched by name, field number 1000
  EXPECT_EQ(o.status_number, 1);
  EXPECT_EQ(o.plain, std::optional<int64_t>(0));  // a nullable field, written without presence
  EXPECT_FALSE(o.absent.has_value());             // not in the writer's message at all
  EXPECT_EQ(o.history, (std::vector<std::string>{"PAID", "SHIPPED", "NEW"}));

  // An empty message: every field at its default, and the same record struct reused.
  ProtoIn empty("");
  s = ReadOrder(empty, resolution->root(), &o);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(o.status, "NEW");  // an enum left off the wire is its value 0
  EXPECT_TRUE(o.packed.empty());
  EXPECT_FALSE(o.note.has_value());
  EXPECT_FALSE(o.address.has_value());
  EXPECT_EQ(o.plain, std::optional<int64_t>(0));
  EXPECT_FALSE(o.absent.has_value());
}

TEST(ProtobufRead, RecordErrorsNameTheFieldAndNeverCrash) {
  auto writer = MustParse(kWriter);
  auto resolution = Resolve(writer, kReader);
  ASSERT_NE(resolution, nullptr);
  Dynamic d(*writer);
  const pb::Reflection* r = d.msg->GetReflection();

  auto read = [&](const std::string& bytes) {
    Order o;
    ProtoIn in(bytes);
    return ReadOrder(in, resolution->root(), &o);
  };
  r->SetUInt64(d.msg.get(), d.F("u64"), ~0ull);
  std::string bytes;
  ASSERT_TRUE(d.msg->SerializeToString(&bytes));
  EXPECT_EQ(read(bytes).message(),
            "field `#2`: 18446744073709551615 does not fit in an int "
            "(at most 2^63-1)");
  d.msg->Clear();
  r->SetString(d.msg.get(), d.F("name"), std::string("\xff\xfe", 2));
  ASSERT_TRUE(d.msg->SerializeToString(&bytes));
  EXPECT_EQ(read(bytes).message(), "field `#7`: invalid UTF-8 in a string");
  d.msg->Clear();
  r->SetEnumValue(d.msg.get(), d.F("status"), 42);  // an open enum keeps unknown numbers
  ASSERT_TRUE(d.msg->SerializeToString(&bytes));
  EXPECT_EQ(read(bytes).message(), "field `#5`: enum `shop.Order.Status` has no value numbered 42");

  // Field 8 (name, a string) sent as a varint; a length past the end; a varint of 11 bytes.
  EXPECT_EQ(read(std::string("\x40\x01", 2)).message(),
            "field `#7`: wire type 0 where the writer's schema has a string");
  EXPECT_EQ(read(std::string("\x42\x05"
                             "ab",
                             4))
                .message(),
            "field `#7`: truncated: the record ends inside a value");
  EXPECT_EQ(read(std::string("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12)).message(),
            "field `#0`: a variable-length integer longer than 10 bytes");
  EXPECT_EQ(read(std::string("\x00", 1)).message(), "an invalid field number 0 (tag 0x0)");
  // A group the reader skips (field 50) whose end tag names another field.
  EXPECT_EQ(read(std::string("\x93\x03\x9c\x03", 4)).message(),
            "a group's end tag does not match its start");
  // Groups nested past the bound.
  std::string deep;
  for (int i = 0; i < 100; ++i) deep += std::string("\x93\x03", 2);
  EXPECT_EQ(read(deep).message(), "groups nested deeper than 64");

  // Random bytes: errors or records, never a crash or a hang.
  std::mt19937 rng(7);
  for (int i = 0; i < 20000; ++i) {
    std::string junk(rng() % 40, '\0');
    for (char& c : junk) c = static_cast<char>(rng());
    (void)read(junk);
  }
}

TEST(ProtobufWrite, LibprotobufParsesWhatFlowWrites) {
  // The schema the code generator registers for a sink of
  //   schema Out { id: int, ratio: float, ok: bool, name: string, note: string?, tags:
  //     list<string>, nums: list<int>, at: timestamp, took: duration, address: Address? }
  constexpr const char* kOut = R"(
syntax = "proto3";
import "google/protobuf/duration.proto";
import "google/protobuf/timestamp.proto";
message Out {
  int64 id = 1;
  double ratio = 2;
  bool ok = 3;
  string name = 4;
  optional string note = 5;
  repeated string tags = 6;
  repeated int64 nums = 7;
  google.protobuf.Timestamp at = 8;
  google.protobuf.Duration took = 9;
  optional Address address = 10;
}
message Address { string city = 1; optional int64 zip = 2; }
)";
  auto schema = MustParse(kOut);
  ASSERT_NE(schema, nullptr);
  auto write = [](int64_t id, std::optional<std::string> note, int64_t at,
                  std::optional<Address> address) {
    std::string s;
    ProtoOut out(&s);
    ProtoWriteField<ProtoInt>(1, id, out);
    ProtoWriteField<ProtoDouble>(2, -0.0, out);
    ProtoWriteField<ProtoBool>(3, true, out);
    ProtoWriteField<ProtoString>(4, std::string("Zoë"), out);
    ProtoWriteField<ProtoNullable<ProtoString>>(5, note, out);
    ProtoWriteField<ProtoList<ProtoString>>(6, std::vector<std::string>{"a", ""}, out);
    ProtoWriteField<ProtoList<ProtoInt>>(7, std::vector<int64_t>{-1, 0, 1 << 20}, out);
    ProtoWriteField<ProtoTimestampMs>(8, at, out);
    ProtoWriteField<ProtoDurationMs>(9, int64_t{-1500}, out);
    ProtoWriteField<ProtoNullable<ProtoAddress>>(10, address, out);
    return s;
  };
  Dynamic d(*schema);
  const pb::Reflection* r = d.msg->GetReflection();
  ASSERT_TRUE(d.msg->ParseFromString(write(0, "", -1500, Address{"Oslo", 0})));
  EXPECT_FALSE(r->HasField(*d.msg, d.F("id")));  // proto3 leaves a 0 off the wire
  EXPECT_EQ(r->GetDouble(*d.msg, d.F("ratio")), 0.0);
  EXPECT_TRUE(std::signbit(r->GetDouble(*d.msg, d.F("ratio"))));
  EXPECT_TRUE(r->GetBool(*d.msg, d.F("ok")));
  EXPECT_EQ(r->GetString(*d.msg, d.F("name")), "Zoë");
  EXPECT_TRUE(r->HasField(*d.msg, d.F("note")));  // optional: an empty string is still there
  EXPECT_EQ(r->GetString(*d.msg, d.F("note")), "");
  ASSERT_EQ(r->FieldSize(*d.msg, d.F("tags")), 2);
  EXPECT_EQ(r->GetRepeatedString(*d.msg, d.F("tags"), 1), "");
  ASSERT_EQ(r->FieldSize(*d.msg, d.F("nums")), 3);
  EXPECT_EQ(r->GetRepeatedInt64(*d.msg, d.F("nums"), 0), -1);
  EXPECT_EQ(r->GetRepeatedInt64(*d.msg, d.F("nums"), 2), 1 << 20);
  const pb::Message& at = r->GetMessage(*d.msg, d.F("at"));
  // -1.5 s is seconds -2 and nanos 500,000,000: nanos are never negative in a Timestamp.
  EXPECT_EQ(at.GetReflection()->GetInt64(at, at.GetDescriptor()->FindFieldByName("seconds")), -2);
  EXPECT_EQ(at.GetReflection()->GetInt32(at, at.GetDescriptor()->FindFieldByName("nanos")),
            500000000);
  const pb::Message& took = r->GetMessage(*d.msg, d.F("took"));
  // A Duration's seconds and nanos have one sign.
  EXPECT_EQ(took.GetReflection()->GetInt64(took, took.GetDescriptor()->FindFieldByName("seconds")),
            -1);
  EXPECT_EQ(took.GetReflection()->GetInt32(took, took.GetDescriptor()->FindFieldByName("nanos")),
            -500000000);
  const pb::Message& a = r->GetMessage(*d.msg, d.F("address"));
  EXPECT_EQ(a.GetReflection()->GetString(a, a.GetDescriptor()->FindFieldByName("city")), "Oslo");
  EXPECT_TRUE(a.GetReflection()->HasField(a, a.GetDescriptor()->FindFieldByName("zip")));

  ASSERT_TRUE(d.msg->ParseFromString(write(7, std::nullopt, 0, std::nullopt)));
  EXPECT_EQ(r->GetInt64(*d.msg, d.F("id")), 7);
  EXPECT_FALSE(r->HasField(*d.msg, d.F("note")));
  EXPECT_FALSE(r->HasField(*d.msg, d.F("address")));
  EXPECT_TRUE(r->HasField(*d.msg, d.F("at")));  // the epoch is still a value

  // And Flow reads its own output back as the same values.
  auto resolution = ProtoResolution::Make(schema, schema->file()->message_type(0),
                                          schema->file()->message_type(0));
  ASSERT_TRUE(resolution.ok()) << resolution.status().message();
  std::string bytes = write(0, "", -1500, Address{"Oslo", 0});
  ProtoIn in(bytes);
  int64_t at_ms = 0, took_ms = 0;
  std::optional<std::string> note;
  Status s = in.Message((*resolution)->root(), [&](int32_t j, const ProtoField& f) -> Status {
    if (j == 4) return ProtoNullable<ProtoString>::Read(in, f, &note);
    if (j == 7) return ProtoTimestampMs::Read(in, f, &at_ms);
    if (j == 8) return ProtoDurationMs::Read(in, f, &took_ms);
    return in.Skip(0, 0);
  });
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(at_ms, -1500);
  EXPECT_EQ(took_ms, -1500);
  EXPECT_EQ(note, std::optional<std::string>(""));
}

struct Inner {
  int64_t v = 0;
};
struct ProtoInner : ProtoRecord<ProtoInner, Inner> {
  static void WriteBody(const Inner& x, ProtoOut& out) { ProtoWriteField<ProtoInt>(1, x.v, out); }
  static void WriteBodyAs(const Inner& x, const ProtoWritePlan& p, ProtoOut& out) {
    ProtoWriteFieldAs<ProtoInt>(p.fields[0], x.v, out);
  }
};

TEST(ProtobufWrite, AsTheFieldsOfAGivenProtoFile) {
  constexpr const char* kFile = R"(
syntax = "proto3";
package out;
message Out {
  string name = 9;
  sint64 id = 3;
  sfixed64 at = 4;
  optional int64 n = 5;
  repeated int64 nums = 6 [packed = false];
  repeated sint64 packed_nums = 10;
  Inner inner = 7;
  int64 unused = 8;
  message Inner { sint64 v = 1; }
}
)";
  // What the code generator writes for schema R { id: int, name: string, at: timestamp, n: int,
  // nums: list<int>, packed_nums: list<int>, inner: Inner }.
  constexpr const char* kScript = R"(
syntax = "proto3";
import "google/protobuf/timestamp.proto";
message R {
  int64 id = 1;
  string name = 2;
  google.protobuf.Timestamp at = 3;
  int64 n = 4;
  repeated int64 nums = 5;
  repeated int64 packed_nums = 6;
  Inner inner = 7;
}
message Inner { int64 v = 1; }
)";
  auto writer = ProtoFileWriter::Make(kFile, "out.Out", kScript);
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  const ProtoWritePlan& p = (*writer)->plan();
  std::string bytes;
  ProtoOut out(&bytes);
  ProtoWriteFieldAs<ProtoInt>(p.fields[0], int64_t{-5}, out);
  ProtoWriteFieldAs<ProtoString>(p.fields[1], std::string("Zoë"), out);
  ProtoWriteFieldAs<ProtoTimestampMs>(p.fields[2], int64_t{-1500}, out);
  ProtoWriteFieldAs<ProtoInt>(p.fields[3], int64_t{0}, out);  // `optional`: a 0 is written
  ProtoWriteFieldAs<ProtoList<ProtoInt>>(p.fields[4], std::vector<int64_t>{1, -1}, out);
  ProtoWriteFieldAs<ProtoList<ProtoInt>>(p.fields[5], std::vector<int64_t>{-2, 300}, out);
  ProtoWriteFieldAs<ProtoInner>(p.fields[6], Inner{-7}, out);

  auto file = MustParse(kFile);
  Dynamic d(*file, "out.Out");
  ASSERT_TRUE(d.msg->ParseFromString(bytes));
  const pb::Reflection* r = d.msg->GetReflection();
  EXPECT_EQ(r->GetInt64(*d.msg, d.F("id")), -5);
  EXPECT_EQ(r->GetString(*d.msg, d.F("name")), "Zoë");
  EXPECT_EQ(r->GetInt64(*d.msg, d.F("at")), -1500);  // milliseconds in an sfixed64
  EXPECT_TRUE(r->HasField(*d.msg, d.F("n")));
  ASSERT_EQ(r->FieldSize(*d.msg, d.F("nums")), 2);
  EXPECT_EQ(r->GetRepeatedInt64(*d.msg, d.F("nums"), 1), -1);
  ASSERT_EQ(r->FieldSize(*d.msg, d.F("packed_nums")), 2);
  EXPECT_EQ(r->GetRepeatedInt64(*d.msg, d.F("packed_nums"), 0), -2);
  const pb::Message& inner = r->GetMessage(*d.msg, d.F("inner"));
  EXPECT_EQ(inner.GetReflection()->GetInt64(inner, inner.GetDescriptor()->FindFieldByName("v")),
            -7);
  EXPECT_FALSE(r->HasField(*d.msg, d.F("unused")));

  auto refused = [&](std::string file, const std::string& message) {
    auto w = ProtoFileWriter::Make(file, message, kScript);
    EXPECT_FALSE(w.ok());
    return w.status().message();
  };
  std::string narrow = kFile;
  narrow.replace(narrow.find("sint64 id"), 9, "int32 id");
  EXPECT_EQ(refused(narrow, "out.Out"),
            "the records cannot be written as message `out.Out` of the .proto: field `id`: int "
            "cannot be written as the .proto's int32; declare it int64, sint64 or sfixed64");
  std::string missing = kFile;
  missing.replace(missing.find("string name = 9;"), 16, "");
  EXPECT_EQ(refused(missing, "out.Out"),
            "the records cannot be written as message `out.Out` of the .proto: field `name`: the "
            ".proto's message `out.Out` has no field `name`");
  EXPECT_EQ(refused(kFile, "Out"),
            "the .proto has no message `Out` (its top-level messages: out.Out; nested ones are "
            "named Outer.Inner, with the package first)");
}

TEST(ProtobufSchema, ResolutionErrorsNameTheFieldAndBothTypes) {
  auto writer = MustParse(kWriter);
  auto check = [&](const std::string& reader, const std::string& want) {
    auto parsed = MustParse(reader);
    ASSERT_NE(parsed, nullptr);
    auto r = ProtoResolution::Make(writer, writer->file()->message_type(0),
                                   parsed->file()->message_type(0));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().message(), want);
  };
  check("syntax = \"proto3\"; message R { int64 name = 1; }",
        "field `name`: the writer's string cannot be read as int");
  check("syntax = \"proto3\"; message R { bool ratio = 1; }",
        "field `ratio`: the writer's float cannot be read as bool");
  check("syntax = \"proto3\"; message R { int64 status = 1; bytes at = 2; }",
        "field `at`: the writer's message `google.protobuf.Timestamp` cannot be read as bytes");
  check("syntax = \"proto3\"; message R { int64 nope = 1; }",
        "field `nope`: the writer's message `shop.Order` has no field `nope`, and the script's "
        "field is not nullable (declare it with `?`)");
  check("syntax = \"proto3\"; message R { int64 packed = 1; }",
        "field `packed`: the writer's field is repeated; declare the script's field as a list");
  check("syntax = \"proto3\"; message R { optional A address = 1; } message A { int64 city = 1; }",
        "field `address.city`: the writer's string cannot be read as int");
  // A nullable field the writer lacks is null; an enum reads as its number or name.
  auto ok =
      MustParse("syntax = \"proto3\"; message R { optional int64 nope = 1; int64 status = 2; }");
  EXPECT_TRUE(
      ProtoResolution::Make(writer, writer->file()->message_type(0), ok->file()->message_type(0))
          .ok());
}

TEST(ProtobufSchema, TextAndBase64DescriptorsParseBadOnesSayWhere) {
  auto text = MustParse(kWriter);
  ASSERT_NE(text, nullptr);
  // Confluent's clients register the serialized FileDescriptorProto in base64.
  pb::FileDescriptorProto proto;
  text->file()->CopyTo(&proto);
  std::string serialized, b64;
  ASSERT_TRUE(proto.SerializeToString(&serialized));
  AppendBase64(serialized, &b64);
  auto from_b64 = MustParse(b64);
  ASSERT_NE(from_b64, nullptr);
  EXPECT_EQ(from_b64->file()->message_type(0)->full_name(), "shop.Order");

  // Map fields have a nested entry type of their own, declared where the field is.
  auto nested = text->MessageAt({0, 1});
  ASSERT_TRUE(nested.ok());
  EXPECT_EQ((*nested)->full_name(), "shop.Order.Address");
  EXPECT_EQ(text->MessageAt({1}).status().message(),
            "message index 1 at depth 0 is out of range: the schema has 1 message types");

  auto bad = ProtoSchema::Parse("syntax = \"proto3\";\nmessage M {\n  int64 a = 1\n}\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "protobuf schema: line 4:1: Expected \";\".");
  auto unknown = ProtoSchema::Parse("syntax = \"proto3\"; message M { Missing a = 1; }");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message(), "protobuf schema: M.a: \"Missing\" is not defined.");
  auto import = ProtoSchema::Parse("syntax = \"proto3\"; import \"other.proto\";");
  ASSERT_FALSE(import.ok());
  EXPECT_EQ(import.status().message(),
            "protobuf schema: imports \"other.proto\": schema references (imports other than "
            "the well-known types google/protobuf/*.proto) are not supported");
}

TEST(ProtobufRegistry, MessageIndexesAsConfluentWritesThem) {
  std::vector<int32_t> path;
  std::string body("\x00rest", 5);
  std::string_view v = body;
  ASSERT_TRUE(ConfluentMessageIndexes(&v, &path).ok());
  EXPECT_EQ(path, std::vector<int32_t>{0});
  EXPECT_EQ(v, "rest");
  // {1, 0}: count 2, then 1 and 0, each a zigzag varint: 04 02 00.
  body = std::string("\x04\x02\x00rest", 7);
  v = body;
  ASSERT_TRUE(ConfluentMessageIndexes(&v, &path).ok());
  EXPECT_EQ(path, (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(v, "rest");
  body = std::string("\x04\x02", 2);
  v = body;
  EXPECT_EQ(ConfluentMessageIndexes(&v, &path).message(),
            "message indexes: truncated: the record ends inside a value");
  body = std::string("\x01", 1);  // a count of -1
  v = body;
  EXPECT_EQ(ConfluentMessageIndexes(&v, &path).message(), "message indexes: a count of -1");
}

}  // namespace
}  // namespace flow::rt
