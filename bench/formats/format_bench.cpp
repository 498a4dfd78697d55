// format_bench: JSON, Avro and Protobuf side by side on the same records (docs/benchmarks.md,
// "Formats").
//
//   format_bench [--records N] [--runs R]
//
// N order records (8 fields: int, string, float, nullable string, bool, bytes, list of strings,
// timestamp; fixed seed) are encoded once in each format, then each of decode and encode is timed
// R times over all N, the variants taking turns; the median run is reported as records per
// second per core (process CPU time, one thread), and Avro's and Protobuf's ratios to JSON. The
// per-record functions have the shape flowc generates for a source and a sink
// (codegen/source_emitter.cpp, records_avro.cpp, records_protobuf.cpp), over the runtime's codecs;
// Avro and Protobuf decode go through a resolution of the writer's schema (the script's own, the
// common case); Avro also of an evolved writer schema (fields reordered, two extra fields to skip).
// Output: one "name value unit" line per measurement, then bytes per record.

#include <google/protobuf/descriptor.h>

#include <algorithm>
#include <bitset>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "flow/runtime/formats/avro.h"
#include "flow/runtime/formats/avro_schema.h"
#include "flow/runtime/formats/json_codecs.h"
#include "flow/runtime/formats/json_decoder.h"  // first: it configures simdjson
#include "flow/runtime/formats/json_encoder.h"
#include "flow/runtime/formats/protobuf.h"
#include "flow/runtime/formats/protobuf_schema.h"

using namespace flow::rt;

namespace {

struct Order {
  int64_t id = 0;
  std::string customer;
  double amount = 0;
  std::optional<std::string> note;
  bool priority = false;
  std::string payload;
  std::vector<std::string> tags;
  int64_t ts = 0;
};

double CpuSeconds() {
  return static_cast<double>(std::clock()) / CLOCKS_PER_SEC;
}

std::vector<Order> MakeOrders(size_t n) {
  std::mt19937_64 rng(7);
  std::vector<Order> out(n);
  for (size_t i = 0; i < n; ++i) {
    Order& o = out[i];
    o.id = static_cast<int64_t>(rng() % 1000000000);
    o.customer = "customer-" + std::to_string(rng() % 100000);
    o.amount = static_cast<double>(rng() % 100000) / 100.0;
    if (rng() % 3 != 0)
      o.note = "deliver to the back door, ring twice " + std::to_string(rng() % 100);
    o.priority = rng() % 2 == 0;
    o.payload = std::string(16, static_cast<char>(rng() % 256));
    for (size_t t = rng() % 4; t > 0; --t) o.tags.push_back("tag" + std::to_string(rng() % 50));
    o.ts = 1764633600000 + static_cast<int64_t>(rng() % 86400000);
  }
  return out;
}

// ---- JSON, as generated for `format json` ----
inline constexpr JsonFieldTable<8> kFields{
    {"id", "customer", "amount", "note", "priority", "payload", "tags", "ts"},
    {true, true, true, false, true, true, true, true}};

Status DecodeJson(JsonDecoder& d, std::string_view payload, Order* out) {
  FLOW_RETURN_IF_ERROR(d.Begin(payload));
  std::bitset<8> seen;
  std::string_view key;
  while (d.NextField(&key)) {
    switch (kFields.Find(key)) {
      case 0:
        FLOW_RETURN_IF_ERROR(d.Read<JsonInt>(kFields.names[0], &out->id));
        seen.set(0);
        break;
      case 1:
        FLOW_RETURN_IF_ERROR(d.Read<JsonString>(kFields.names[1], &out->customer));
        seen.set(1);
        break;
      case 2:
        FLOW_RETURN_IF_ERROR(d.Read<JsonFloat>(kFields.names[2], &out->amount));
        seen.set(2);
        break;
      case 3:
        FLOW_RETURN_IF_ERROR(d.Read<JsonNullable<JsonString>>(kFields.names[3], &out->note));
        seen.set(3);
        break;
      case 4:
        FLOW_RETURN_IF_ERROR(d.Read<JsonBool>(kFields.names[4], &out->priority));
        seen.set(4);
        break;
      case 5:
        FLOW_RETURN_IF_ERROR(d.Read<JsonBytes>(kFields.names[5], &out->payload));
        seen.set(5);
        break;
      case 6:
        FLOW_RETURN_IF_ERROR(d.Read<JsonList<JsonString>>(kFields.names[6], &out->tags));
        seen.set(6);
        break;
      case 7:
        FLOW_RETURN_IF_ERROR(d.Read<JsonTimestamp>(kFields.names[7], &out->ts));
        seen.set(7);
        break;
      default:
        break;
    }
  }
  FLOW_RETURN_IF_ERROR(d.End());
  if (!seen[3]) out->note.reset();
  return d.CheckRequired(kFields, seen);
}

void EncodeJson(const Order& o, JsonEncoder* e) {
  e->BeginObject();
  e->Field<JsonInt>("id", o.id);
  e->Field<JsonString>("customer", o.customer);
  e->Field<JsonFloat>("amount", o.amount);
  e->Field<JsonNullable<JsonString>>("note", o.note);
  e->Field<JsonBool>("priority", o.priority);
  e->Field<JsonBytes>("payload", o.payload);
  e->Field<JsonList<JsonString>>("tags", o.tags);
  e->Field<JsonTimestamp>("ts", o.ts);
  e->EndObject();
}

// ---- Avro, as generated for `format avro` ----
constexpr const char* kSchema = R"({"type": "record", "name": "Order", "fields": [
  {"name": "id", "type": "long"}, {"name": "customer", "type": "string"}, {"name": "amount", "type": "double"},
  {"name": "note", "type": ["null", "string"], "default": null}, {"name": "priority", "type": "boolean"},
  {"name": "payload", "type": "bytes"}, {"name": "tags", "type": {"type": "array", "items": "string"}},
  {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}}]})";
// An evolved writer: reordered, with a map and a long the reader skips.
constexpr const char* kEvolved = R"({"type": "record", "name": "Order", "fields": [
  {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}}, {"name": "code", "type": "long"},
  {"name": "customer", "type": "string"}, {"name": "id", "type": "int"}, {"name": "amount", "type": "double"},
  {"name": "attributes", "type": {"type": "map", "values": "string"}},
  {"name": "note", "type": ["null", "string"], "default": null}, {"name": "priority", "type": "boolean"},
  {"name": "payload", "type": "bytes"}, {"name": "tags", "type": {"type": "array", "items": "string"}}]})";

Status DecodeAvro(AvroIn& in, const AvroResolved& r, Order* out) {
  return in.Record(r, [&](int32_t j, const AvroResolved& f) -> Status {
    Status s;
    switch (j) {
      case 0:
        s = AvroLong::Read(in, f, &out->id);
        if (!s.ok()) [[unlikely]]
          return AvroFieldError("id", s);
        break;
      case 1:
        s = AvroString::Read(in, f, &out->customer);
        if (!s.ok()) [[unlikely]]
          return AvroFieldError("customer", s);
        break;
      case 2:
        s = AvroDouble::Read(in, f, &out->amount);
        if (!s.ok()) [[unlikely]]
          return AvroFieldError("amount", s);
        break;
      case 3:
        s = AvroNullable<AvroString>::Read(in, f, &out->note);
        if (!s.ok()) [[unlikely]]
          return AvroFieldError("note", s);
        break;
      case 4:
        s = AvroBoolean::Read(in, f, &out->priority);
        if (!s.ok()) [[unlikely]]
          return AvroFieldError("priority", s);
        break;
      case 5:
        s = AvroBytes::Read(in, f, &out->payload);
        if (!s.ok()) [[unlikely]]
          return AvroFieldError("payload", s);
        break;
      case 6:
        s = AvroList<AvroString>::Read(in, f, &out->tags);
        if (!s.ok()) [[unlikely]]
          return AvroFieldError("tags", s);
        break;
      case 7:
        s = AvroTimestamp::Read(in, f, &out->ts);
        if (!s.ok()) [[unlikely]]
          return AvroFieldError("ts", s);
        break;
      default:
        break;
    }
    return s;
  });
}

void EncodeAvro(const Order& o, AvroOut& out) {
  AvroLong::Write(o.id, out);
  AvroString::Write(o.customer, out);
  AvroDouble::Write(o.amount, out);
  AvroNullable<AvroString>::Write(o.note, out);
  AvroBoolean::Write(o.priority, out);
  AvroBytes::Write(o.payload, out);
  AvroList<AvroString>::Write(o.tags, out);
  AvroTimestamp::Write(o.ts, out);
}

// The evolved writer's encoding of the same order (the extra fields: code 42, one map entry).
void EncodeEvolved(const Order& o, AvroOut& out) {
  AvroTimestamp::Write(o.ts, out);
  out.Long(42);
  AvroString::Write(o.customer, out);
  out.Long(o.id % 1000000);  // an int in the writer's schema
  AvroDouble::Write(o.amount, out);
  out.Long(1);
  out.Bytes("region");
  out.Bytes("eu-west");
  out.Long(0);
  AvroNullable<AvroString>::Write(o.note, out);
  AvroBoolean::Write(o.priority, out);
  AvroBytes::Write(o.payload, out);
  AvroList<AvroString>::Write(o.tags, out);
}

// ---- Protobuf, as generated for `format protobuf` ----
constexpr const char* kProto = R"(syntax = "proto3";
import "google/protobuf/timestamp.proto";
message Order {
  int64 id = 1;
  string customer = 2;
  double amount = 3;
  optional string note = 4;
  bool priority = 5;
  bytes payload = 6;
  repeated string tags = 7;
  google.protobuf.Timestamp ts = 8;
}
)";

Status DecodeProto(ProtoIn& in, const ProtoMessage& m, Order* out) {
  ProtoReset(out->id, m, 0);
  ProtoReset(out->customer, m, 1);
  ProtoReset(out->amount, m, 2);
  ProtoReset(out->note, m, 3);
  ProtoReset(out->priority, m, 4);
  ProtoReset(out->payload, m, 5);
  ProtoReset(out->tags, m, 6);
  ProtoReset(out->ts, m, 7);
  return in.Message(m, [&](int32_t j, const ProtoField& f) -> Status {
    Status s;
    switch (j) {
      case 0:
        s = ProtoInt::Read(in, f, &out->id);
        if (!s.ok()) [[unlikely]]
          return ProtoFieldError("id", s);
        break;
      case 1:
        s = ProtoString::Read(in, f, &out->customer);
        if (!s.ok()) [[unlikely]]
          return ProtoFieldError("customer", s);
        break;
      case 2:
        s = ProtoDouble::Read(in, f, &out->amount);
        if (!s.ok()) [[unlikely]]
          return ProtoFieldError("amount", s);
        break;
      case 3:
        s = ProtoNullable<ProtoString>::Read(in, f, &out->note);
        if (!s.ok()) [[unlikely]]
          return ProtoFieldError("note", s);
        break;
      case 4:
        s = ProtoBool::Read(in, f, &out->priority);
        if (!s.ok()) [[unlikely]]
          return ProtoFieldError("priority", s);
        break;
      case 5:
        s = ProtoBytes::Read(in, f, &out->payload);
        if (!s.ok()) [[unlikely]]
          return ProtoFieldError("payload", s);
        break;
      case 6:
        s = ProtoList<ProtoString>::Read(in, f, &out->tags);
        if (!s.ok()) [[unlikely]]
          return ProtoFieldError("tags", s);
        break;
      case 7:
        s = ProtoTimestampMs::Read(in, f, &out->ts);
        if (!s.ok()) [[unlikely]]
          return ProtoFieldError("ts", s);
        break;
      default:
        break;
    }
    return s;
  });
}

void EncodeProto(const Order& o, ProtoOut& out) {
  ProtoWriteField<ProtoInt>(1, o.id, out);
  ProtoWriteField<ProtoString>(2, o.customer, out);
  ProtoWriteField<ProtoDouble>(3, o.amount, out);
  ProtoWriteField<ProtoNullable<ProtoString>>(4, o.note, out);
  ProtoWriteField<ProtoBool>(5, o.priority, out);
  ProtoWriteField<ProtoBytes>(6, o.payload, out);
  ProtoWriteField<ProtoList<ProtoString>>(7, o.tags, out);
  ProtoWriteField<ProtoTimestampMs>(8, o.ts, out);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Records per CPU second of one pass of fn over all records.
template <typename Fn>
double Rate(size_t records, Fn fn) {
  double t0 = CpuSeconds();
  fn();
  return static_cast<double>(records) / std::max(CpuSeconds() - t0, 1e-9);
}

void Fail(const char* what, const Status& s) {
  std::fprintf(stderr, "format_bench: %s: %s\n", what, s.message().c_str());
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  size_t n = 500000;
  int runs = 7;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--records" && i + 1 < argc) {
      n = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--runs" && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: format_bench [--records N] [--runs R]\n");
      return 2;
    }
  }
  if (n == 0 || runs <= 0) {
    std::fprintf(stderr, "format_bench: --records and --runs must be positive\n");
    return 2;
  }
  std::vector<Order> orders = MakeOrders(n);

  // Payloads back to back in one buffer per format, as a consumer's fetched batch holds them.
  std::string json_buf, avro_buf, evolved_buf, proto_buf;
  std::vector<size_t> json_end, avro_end, evolved_end, proto_end;
  JsonEncoder enc;
  for (size_t i = 0; i < n; ++i) {
    enc.Clear();
    EncodeJson(orders[i], &enc);
    json_buf += enc.view();
    json_end.push_back(json_buf.size());
    AvroOut out(&avro_buf);
    EncodeAvro(orders[i], out);
    avro_end.push_back(avro_buf.size());
    AvroOut ev(&evolved_buf);
    EncodeEvolved(orders[i], ev);
    evolved_end.push_back(evolved_buf.size());
    ProtoOut po(&proto_buf);
    EncodeProto(orders[i], po);
    proto_end.push_back(proto_buf.size());
  }
  auto views = [n](const std::string& buf, const std::vector<size_t>& ends) {
    std::vector<std::string_view> v(n);
    for (size_t i = 0; i < n; ++i) {
      size_t begin = i == 0 ? 0 : ends[i - 1];
      v[i] = std::string_view(buf).substr(begin, ends[i] - begin);
    }
    return v;
  };
  std::vector<std::string_view> json = views(json_buf, json_end), avro = views(avro_buf, avro_end),
                                evolved = views(evolved_buf, evolved_end),
                                proto = views(proto_buf, proto_end);
  auto schema = AvroSchema::Parse(kSchema);
  auto evolved_schema = AvroSchema::Parse(kEvolved);
  if (!schema.ok()) Fail("schema", schema.status());
  if (!evolved_schema.ok()) Fail("evolved schema", evolved_schema.status());
  auto same = AvroResolution::Make(*schema, *schema);
  auto ev_res = AvroResolution::Make(*evolved_schema, *schema);
  if (!same.ok()) Fail("resolution", same.status());
  if (!ev_res.ok()) Fail("evolved resolution", ev_res.status());
  auto proto_schema = ProtoSchema::Parse(kProto);
  if (!proto_schema.ok()) Fail("protobuf schema", proto_schema.status());
  const auto* proto_message = (*proto_schema)->file()->message_type(0);
  auto proto_res = ProtoResolution::Make(*proto_schema, proto_message, proto_message);
  if (!proto_res.ok()) Fail("protobuf resolution", proto_res.status());

  // Every decoder must give back the records (the evolved one: ids modulo 10^6).
  JsonDecoder jd;
  Order o;
  int64_t checksum = 0;
  for (size_t i = 0; i < n; ++i) {
    o = Order{};
    if (auto s = DecodeJson(jd, json[i], &o); !s.ok()) Fail("json decode", s);
    if (o.customer != orders[i].customer || o.ts != orders[i].ts || o.tags != orders[i].tags)
      Fail("json", Status::Internal("mismatch"));
    AvroIn in(avro[i], (*same)->writer());
    o = Order{};
    if (auto s = DecodeAvro(in, (*same)->root(), &o); !s.ok()) Fail("avro decode", s);
    if (o.id != orders[i].id || o.note != orders[i].note || o.payload != orders[i].payload ||
        in.remaining() != 0) {
      Fail("avro", Status::Internal("mismatch"));
    }
    AvroIn ein(evolved[i], (*ev_res)->writer());
    o = Order{};
    if (auto s = DecodeAvro(ein, (*ev_res)->root(), &o); !s.ok()) Fail("evolved decode", s);
    if (o.id != orders[i].id % 1000000 || o.amount != orders[i].amount || ein.remaining() != 0) {
      Fail("evolved", Status::Internal("mismatch"));
    }
    ProtoIn pin(proto[i]);
    o = Order{};
    if (auto s = DecodeProto(pin, (*proto_res)->root(), &o); !s.ok()) Fail("protobuf decode", s);
    if (o.id != orders[i].id || o.note != orders[i].note || o.payload != orders[i].payload ||
        o.ts != orders[i].ts || o.tags != orders[i].tags || o.priority != orders[i].priority) {
      Fail("protobuf", Status::Internal("mismatch"));
    }
  }

  auto json_decode = [&] {
    for (std::string_view p : json) {
      Order r;
      if (!DecodeJson(jd, p, &r).ok()) std::abort();
      checksum += r.id;
    }
  };
  auto avro_decode = [&] {
    for (std::string_view p : avro) {
      Order r;
      AvroIn in(p, (*same)->writer());
      if (!DecodeAvro(in, (*same)->root(), &r).ok()) std::abort();
      checksum += r.id;
    }
  };
  auto evolved_decode = [&] {
    for (std::string_view p : evolved) {
      Order r;
      AvroIn in(p, (*ev_res)->writer());
      if (!DecodeAvro(in, (*ev_res)->root(), &r).ok()) std::abort();
      checksum += r.id;
    }
  };
  auto proto_decode = [&] {
    for (std::string_view p : proto) {
      Order r;
      ProtoIn in(p);
      if (!DecodeProto(in, (*proto_res)->root(), &r).ok()) std::abort();
      checksum += r.id;
    }
  };
  std::string buf;
  auto json_encode = [&] {
    for (const Order& r : orders) {
      enc.Clear();
      EncodeJson(r, &enc);
      checksum += static_cast<int64_t>(enc.view().size());
    }
  };
  auto avro_encode = [&] {
    for (const Order& r : orders) {
      buf.clear();
      AvroOut out(&buf);
      EncodeAvro(r, out);
      checksum += static_cast<int64_t>(buf.size());
    }
  };
  auto proto_encode = [&] {
    for (const Order& r : orders) {
      buf.clear();
      ProtoOut out(&buf);
      EncodeProto(r, out);
      checksum += static_cast<int64_t>(buf.size());
    }
  };
  // The variants take turns within each run, so a slower moment of the machine hits them alike.
  std::vector<std::vector<double>> rates(7);
  for (int r = 0; r < runs; ++r) {
    rates[0].push_back(Rate(n, json_decode));
    rates[1].push_back(Rate(n, avro_decode));
    rates[2].push_back(Rate(n, evolved_decode));
    rates[3].push_back(Rate(n, json_encode));
    rates[4].push_back(Rate(n, avro_encode));
    rates[5].push_back(Rate(n, proto_decode));
    rates[6].push_back(Rate(n, proto_encode));
  }
  size_t json_bytes = 0, avro_bytes = 0;
  json_bytes = json_buf.size();
  avro_bytes = avro_buf.size();
  const char* names[] = {"json_decode", "avro_decode",     "avro_decode_evolved", "json_encode",
                         "avro_encode", "protobuf_decode", "protobuf_encode"};
  for (size_t i = 0; i < rates.size(); ++i)
    std::printf("%s %.0f records/s\n", names[i], Median(rates[i]));
  std::printf("avro_decode_vs_json %.2f x\n", Median(rates[1]) / Median(rates[0]));
  std::printf("avro_encode_vs_json %.2f x\n", Median(rates[4]) / Median(rates[3]));
  std::printf("protobuf_decode_vs_json %.2f x\n", Median(rates[5]) / Median(rates[0]));
  std::printf("protobuf_encode_vs_json %.2f x\n", Median(rates[6]) / Median(rates[3]));
  std::printf("json_bytes %.1f bytes/record\n",
              static_cast<double>(json_bytes) / static_cast<double>(n));
  std::printf("avro_bytes %.1f bytes/record\n",
              static_cast<double>(avro_bytes) / static_cast<double>(n));
  std::printf("protobuf_bytes %.1f bytes/record\n",
              static_cast<double>(proto_buf.size()) / static_cast<double>(n));
  std::fprintf(stderr, "checksum %lld\n", static_cast<long long>(checksum));
  return 0;
}
