#pragma once
// Protobuf binary encoding (protobuf.dev, "Encoding") and the codecs generated code uses for
// `format protobuf`. One codec type per Flow type, each with
//   static Status Read(ProtoIn& in, const ProtoField& f, Value* out)  -- one value on the wire
//   static void Write(uint32_t number, const Value& v, ProtoOut& out) -- the field, always
//   static bool IsDefault(const Value& v)  -- proto3 leaves such a value off the wire
//   static void WriteAs(const ProtoTarget& t, const Value& v, ProtoOut& out)
//                                           -- as a field of a given .proto (ProtoFileWriter)
// The code generator maps a Flow type to a codec and to the field type it is written as:
//   int -> ProtoInt (int64)               float -> ProtoDouble (double)
//   bool -> ProtoBool (bool)              string -> ProtoString (string, checked UTF-8)
//   bytes -> ProtoBytes (bytes)           duration -> ProtoDurationMs (google.protobuf.Duration)
//   timestamp -> ProtoTimestampMs (google.protobuf.Timestamp)
//   list<T> -> ProtoList<T's codec> (repeated; numbers and bools packed)
//   T? -> ProtoNullable<T's codec> (`optional`: written whenever it is not null)
//   a record -> a generated codec (a message; fields matched by name, protobuf_schema.h)
// Malformed bytes never crash: every length is checked against what is left (wire_reader.h),
// varints longer than 10 bytes are refused, skipped groups are bounded by kMaxDepth. Errors are
// kInvalidArgument without the field's name (generated record codecs add it). Threading: ProtoIn
// and ProtoOut are per call; codecs are stateless.

#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flow/runtime/common/status.h"
#include "flow/runtime/formats/protobuf_schema.h"
#include "flow/runtime/formats/wire_reader.h"

namespace flow::rt {

static_assert(std::endian::native == std::endian::little,
              "protobuf fixed-width values are little-endian; add a byte swap here");

namespace proto_internal {
Status InvalidUtf8();
bool ValidUtf8(std::string_view s);
Status WrongWire(int wire, ProtoKind kind);
Status EnumName(const ProtoField& f, int64_t number, std::string* out);
Status TimeMessage(std::string_view body, bool timestamp, int64_t* ms);
}  // namespace proto_internal

// Field errors name the field: "field `age`: ...".
Status ProtoFieldError(std::string_view field, const Status& inner);

class ProtoIn : public WireReader {
 public:
  static constexpr int kMaxDepth = 64;
  enum Wire : int { kVarint = 0, kI64 = 1, kLen = 2, kStartGroup = 3, kEndGroup = 4, kI32 = 5 };

  explicit ProtoIn(std::string_view bytes, int wire = kVarint) : WireReader(bytes), wire_(wire) {}

  int wire() const { return wire_; }

  [[nodiscard]] Status Fixed32(uint32_t* out) { return Raw(out, sizeof *out); }
  [[nodiscard]] Status Fixed64(uint64_t* out) { return Raw(out, sizeof *out); }
  // A length-delimited value: a view into the input.
  [[nodiscard]] Status Len(std::string_view* out) {
    uint64_t n;
    FLOW_RETURN_IF_ERROR(Varint(&n));
    return Run(n, out);
  }

  // Any integer field (ProtoKind kInt32 .. kEnum) of the current wire type, as int64.
  [[nodiscard]] Status Integer(ProtoKind kind, int64_t* out);
  // float or double; integers too.
  [[nodiscard]] Status Real(ProtoKind kind, double* out);

  // A message body: each field the resolution knows is read by `field(reader_index, f)` (the
  // field's wire type is wire()), the others are skipped.
  template <typename Fn>
  [[nodiscard]] Status Message(const ProtoMessage& m, Fn&& field) {
    while (p_ != end_) {
      uint64_t tag;
      FLOW_RETURN_IF_ERROR(Varint(&tag));
      wire_ = static_cast<int>(tag & 7);
      uint64_t number = tag >> 3;
      if (number == 0 || number > kMaxNumber) [[unlikely]]
        return BadTag(tag);
      const ProtoField* f = m.Find(number);
      if (f == nullptr) {
        FLOW_RETURN_IF_ERROR(Skip(number, 0));
      } else {
        FLOW_RETURN_IF_ERROR(field(f->reader_field, *f));
      }
    }
    return Status::Ok();
  }

  // Skips the value of the current wire type (groups up to their end tag).
  [[nodiscard]] Status Skip(uint64_t number, int depth);

 private:
  static constexpr uint64_t kMaxNumber = (1u << 29) - 1;
  static Status BadTag(uint64_t tag);

  int wire_;
};

class ProtoOut {
 public:
  explicit ProtoOut(std::string* out) : out_(out) {}
  void Varint(uint64_t v) {
    while (v >= 0x80) {
      out_->push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    out_->push_back(static_cast<char>(v));
  }
  static size_t VarintSize(uint64_t v) { return (std::bit_width(v | 1) + 6) / 7; }
  // An int as one of the encodings that hold every int64 (ProtoFileWriter): int64, sint64,
  // sfixed64. Without the tag.
  void Int64As(ProtoKind kind, int64_t v) {
    if (kind == ProtoKind::kSfixed64) {
      Fixed64(static_cast<uint64_t>(v));
    } else if (kind == ProtoKind::kSint64) {
      Varint((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
    } else {
      Varint(static_cast<uint64_t>(v));
    }
  }
  static int Int64Wire(ProtoKind kind) { return kind == ProtoKind::kSfixed64 ? 1 : 0; }
  static size_t Int64Size(ProtoKind kind, int64_t v) {
    return kind == ProtoKind::kSfixed64 ? 8
           : kind == ProtoKind::kSint64
               ? VarintSize((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63))
               : VarintSize(static_cast<uint64_t>(v));
  }
  void Tag(uint32_t number, int wire) { Varint((static_cast<uint64_t>(number) << 3) | wire); }
  void Fixed64(uint64_t v) { out_->append(reinterpret_cast<const char*>(&v), sizeof v); }
  void Bytes(std::string_view v) {
    Varint(v.size());
    out_->append(v);
  }
  // A length-delimited value written by `body(ProtoOut&)`: the length goes first, so the body
  // is written to a scratch string.
  template <typename Fn>
  void Nested(Fn&& body) {
    std::string scratch;
    ProtoOut inner(&scratch);
    body(inner);
    Bytes(scratch);
  }

 private:
  std::string* out_;
};

struct ProtoInt {
  using Value = int64_t;
  static constexpr bool kPacked = true;
  static Status Read(ProtoIn& in, const ProtoField& f, int64_t* out) {
    return in.Integer(f.kind, out);
  }
  static void WriteBare(int64_t v, ProtoOut& out) { out.Varint(static_cast<uint64_t>(v)); }
  static size_t BareSize(int64_t v) { return ProtoOut::VarintSize(static_cast<uint64_t>(v)); }
  static void Write(uint32_t n, int64_t v, ProtoOut& out) {
    out.Tag(n, ProtoIn::kVarint);
    WriteBare(v, out);
  }
  static bool IsDefault(int64_t v) { return v == 0; }
  static void WriteAs(const ProtoTarget& t, int64_t v, ProtoOut& out) {
    out.Tag(t.number, ProtoOut::Int64Wire(t.kind));
    out.Int64As(t.kind, v);
  }
  static void WriteBareAs(const ProtoTarget& t, int64_t v, ProtoOut& out) {
    out.Int64As(t.kind, v);
  }
  static size_t BareSizeAs(const ProtoTarget& t, int64_t v) {
    return ProtoOut::Int64Size(t.kind, v);
  }
};

struct ProtoDouble {
  using Value = double;
  static constexpr bool kPacked = true;
  static Status Read(ProtoIn& in, const ProtoField& f, double* out) { return in.Real(f.kind, out); }
  static void WriteBare(double v, ProtoOut& out) { out.Fixed64(std::bit_cast<uint64_t>(v)); }
  static size_t BareSize(double) { return 8; }
  static void Write(uint32_t n, double v, ProtoOut& out) {
    out.Tag(n, ProtoIn::kI64);
    WriteBare(v, out);
  }
  // -0.0 is written: proto3 leaves off only values whose bits are all zero.
  static bool IsDefault(double v) { return std::bit_cast<uint64_t>(v) == 0; }
  static void WriteAs(const ProtoTarget& t, double v, ProtoOut& out) { Write(t.number, v, out); }
  static void WriteBareAs(const ProtoTarget&, double v, ProtoOut& out) { WriteBare(v, out); }
  static size_t BareSizeAs(const ProtoTarget&, double v) { return BareSize(v); }
};

struct ProtoBool {
  using Value = bool;
  static constexpr bool kPacked = true;
  static Status Read(ProtoIn& in, const ProtoField& f, bool* out) {
    if (in.wire() != ProtoIn::kVarint) [[unlikely]]
      return proto_internal::WrongWire(in.wire(), f.kind);
    uint64_t v;
    FLOW_RETURN_IF_ERROR(in.Varint(&v));
    *out = v != 0;
    return Status::Ok();
  }
  static void WriteBare(bool v, ProtoOut& out) { out.Varint(v ? 1 : 0); }
  static size_t BareSize(bool) { return 1; }
  static void Write(uint32_t n, bool v, ProtoOut& out) {
    out.Tag(n, ProtoIn::kVarint);
    WriteBare(v, out);
  }
  static bool IsDefault(bool v) { return !v; }
  static void WriteAs(const ProtoTarget& t, bool v, ProtoOut& out) { Write(t.number, v, out); }
  static void WriteBareAs(const ProtoTarget&, bool v, ProtoOut& out) { WriteBare(v, out); }
  static size_t BareSizeAs(const ProtoTarget&, bool v) { return BareSize(v); }
};

// Strings, bytes and (for strings) enum names.
inline Status ReadProtoByteString(ProtoIn& in, const ProtoField& f, std::string* out) {
  if (f.kind == ProtoKind::kEnum) {
    int64_t number;
    FLOW_RETURN_IF_ERROR(in.Integer(f.kind, &number));
    return proto_internal::EnumName(f, number, out);
  }
  if (in.wire() != ProtoIn::kLen) [[unlikely]]
    return proto_internal::WrongWire(in.wire(), f.kind);
  std::string_view v;
  FLOW_RETURN_IF_ERROR(in.Len(&v));
  out->assign(v.data(), v.size());
  return Status::Ok();
}

struct ProtoBytes {
  using Value = std::string;
  static constexpr bool kPacked = false;
  static Status Read(ProtoIn& in, const ProtoField& f, std::string* out) {
    return ReadProtoByteString(in, f, out);
  }
  static void Write(uint32_t n, const std::string& v, ProtoOut& out) {
    out.Tag(n, ProtoIn::kLen);
    out.Bytes(v);
  }
  static bool IsDefault(const std::string& v) { return v.empty(); }
  static void WriteAs(const ProtoTarget& t, const std::string& v, ProtoOut& out) {
    Write(t.number, v, out);
  }
};

struct ProtoString : ProtoBytes {
  static Status Read(ProtoIn& in, const ProtoField& f, std::string* out) {
    FLOW_RETURN_IF_ERROR(ReadProtoByteString(in, f, out));
    if (!proto_internal::ValidUtf8(*out)) [[unlikely]]
      return proto_internal::InvalidUtf8();
    return Status::Ok();
  }
};

// Timestamps and durations: google.protobuf.Timestamp / Duration {seconds, nanos}, or an
// integer of milliseconds.
template <bool kTimestamp>
struct ProtoTimeMs {
  using Value = int64_t;
  static constexpr bool kPacked = false;
  static Status Read(ProtoIn& in, const ProtoField& f, int64_t* out) {
    if (f.kind != ProtoKind::kTimestamp && f.kind != ProtoKind::kDuration)
      return in.Integer(f.kind, out);
    if (in.wire() != ProtoIn::kLen) [[unlikely]]
      return proto_internal::WrongWire(in.wire(), f.kind);
    std::string_view body;
    FLOW_RETURN_IF_ERROR(in.Len(&body));
    return proto_internal::TimeMessage(body, kTimestamp, out);
  }
  static void WriteAs(const ProtoTarget& t, int64_t ms, ProtoOut& out) {
    if (t.kind == ProtoKind::kTimestamp || t.kind == ProtoKind::kDuration) {
      Write(t.number, ms, out);
    } else {
      ProtoInt::WriteAs(t, ms, out);  // milliseconds
    }
  }
  static void Write(uint32_t n, int64_t ms, ProtoOut& out) {
    out.Tag(n, ProtoIn::kLen);
    // Timestamps round down to whole seconds and count nanos up; durations keep one sign.
    int64_t seconds = ms / 1000, millis = ms % 1000;
    if (kTimestamp && millis < 0) {
      seconds -= 1;
      millis += 1000;
    }
    // The length goes first: both fields' sizes are known, so no scratch string.
    int64_t nanos = millis * 1000000;
    out.Varint((seconds != 0 ? 1 + ProtoInt::BareSize(seconds) : 0) +
               (nanos != 0 ? 1 + ProtoInt::BareSize(nanos) : 0));
    if (seconds != 0) ProtoInt::Write(1, seconds, out);
    if (nanos != 0) ProtoInt::Write(2, nanos, out);
  }
  static bool IsDefault(int64_t) { return false; }  // a message: always written
};
using ProtoTimestampMs = ProtoTimeMs<true>;
using ProtoDurationMs = ProtoTimeMs<false>;

template <typename C>
struct ProtoNullable {
  using Value = std::optional<typename C::Value>;
  static constexpr bool kPacked = C::kPacked;
  // Elements of a packed list: sinks never write lists with nullable elements (the checker
  // refuses them), so a null here cannot happen; it would be written as the default.
  static void WriteBare(const Value& v, ProtoOut& out) {
    C::WriteBare(v.value_or(typename C::Value{}), out);
  }
  static size_t BareSize(const Value& v) { return C::BareSize(v.value_or(typename C::Value{})); }
  static Status Read(ProtoIn& in, const ProtoField& f, Value* out) {
    if (!out->has_value()) out->emplace();
    return C::Read(in, f, &**out);
  }
  static void Write(uint32_t n, const Value& v, ProtoOut& out) {
    if (v.has_value()) C::Write(n, *v, out);
  }
  static void WriteAs(const ProtoTarget& t, const Value& v, ProtoOut& out) {
    if (v.has_value()) C::WriteAs(t, *v, out);
  }
  static void WriteBareAs(const ProtoTarget& t, const Value& v, ProtoOut& out) {
    C::WriteBareAs(t, v.value_or(typename C::Value{}), out);
  }
  static size_t BareSizeAs(const ProtoTarget& t, const Value& v) {
    return C::BareSizeAs(t, v.value_or(typename C::Value{}));
  }
  static bool IsDefault(const Value& v) { return !v.has_value(); }
};

// A repeated field: each occurrence on the wire appends; numbers and bools may come packed
// (one length-delimited run), which is how they are written.
template <typename C>
struct ProtoList {
  using Value = std::vector<typename C::Value>;
  static constexpr bool kPacked = false;
  static Status Read(ProtoIn& in, const ProtoField& f, Value* out) {
    // Any scalar but strings and bytes may come packed (enums too, read as names or numbers).
    if (in.wire() == ProtoIn::kLen && f.kind <= ProtoKind::kDouble) {
      std::string_view run;
      FLOW_RETURN_IF_ERROR(in.Len(&run));
      ProtoIn items(run, PackedWire(f.kind));
      while (!items.done()) FLOW_RETURN_IF_ERROR(C::Read(items, f, &out->emplace_back()));
      return Status::Ok();
    }
    return C::Read(in, f, &out->emplace_back());
  }
  static void Write(uint32_t n, const Value& v, ProtoOut& out) {
    if (v.empty()) return;
    if constexpr (C::kPacked) {
      out.Tag(n, ProtoIn::kLen);
      size_t size = 0;
      for (const auto& e : v) size += C::BareSize(e);
      out.Varint(size);
      for (const auto& e : v) C::WriteBare(e, out);
    } else {
      for (const auto& e : v) C::Write(n, e, out);
    }
  }
  static bool IsDefault(const Value& v) { return v.empty(); }
  static void WriteAs(const ProtoTarget& t, const Value& v, ProtoOut& out) {
    if (v.empty()) return;
    if constexpr (C::kPacked) {
      if (t.packed) {
        out.Tag(t.number, ProtoIn::kLen);
        size_t size = 0;
        for (const auto& e : v) size += C::BareSizeAs(t, e);
        out.Varint(size);
        for (const auto& e : v) C::WriteBareAs(t, e, out);
        return;
      }
    }
    for (const auto& e : v) C::WriteAs(t, e, out);
  }

 private:
  static int PackedWire(ProtoKind k) {
    switch (k) {
      case ProtoKind::kFixed32:
      case ProtoKind::kSfixed32:
      case ProtoKind::kFloat:
        return ProtoIn::kI32;
      case ProtoKind::kFixed64:
      case ProtoKind::kSfixed64:
      case ProtoKind::kDouble:
        return ProtoIn::kI64;
      default:
        return ProtoIn::kVarint;
    }
  }
};

// A nullable list: repeated fields have no presence, so null is written as (and read as) empty.
template <typename C>
struct ProtoNullable<ProtoList<C>> {
  using Value = std::optional<std::vector<typename C::Value>>;
  static constexpr bool kPacked = false;
  static Status Read(ProtoIn& in, const ProtoField& f, Value* out) {
    if (!out->has_value()) out->emplace();
    return ProtoList<C>::Read(in, f, &**out);
  }
  static void Write(uint32_t n, const Value& v, ProtoOut& out) {
    if (v.has_value()) ProtoList<C>::Write(n, *v, out);
  }
  static bool IsDefault(const Value& v) { return !v.has_value() || v->empty(); }
  static void WriteAs(const ProtoTarget& t, const Value& v, ProtoOut& out) {
    if (v.has_value()) ProtoList<C>::WriteAs(t, *v, out);
  }
};

// Reader field `j` of a record before its message is read: the type's default, or null (see
// ProtoMessage::Defaulted and DefaultText).
template <typename T>
void ProtoReset(T& v, const ProtoMessage& /*m*/, int32_t /*j*/) {
  v = T{};
}
inline void ProtoReset(std::string& v, const ProtoMessage& m, int32_t j) {
  v.assign(m.DefaultText(j));
}
template <typename T>
void ProtoReset(std::optional<T>& v, const ProtoMessage& m, int32_t j) {
  if (m.Defaulted(j)) {
    ProtoReset(v.emplace(), m, j);
  } else {
    v.reset();
  }
}

// Writes a field unless proto3 leaves its value off the wire.
template <typename C, typename V>
void ProtoWriteField(uint32_t n, const V& v, ProtoOut& out) {
  if (!C::IsDefault(v)) C::Write(n, v, out);
}
// The same, as a field of a given .proto: a field with presence is always written (unless null).
template <typename C, typename V>
void ProtoWriteFieldAs(const ProtoTarget& t, const V& v, ProtoOut& out) {
  if (t.presence || !C::IsDefault(v)) C::WriteAs(t, v, out);
}

// A nested record: generated record codecs derive from this with ReadBody and WriteBody.
template <typename Derived, typename T>
struct ProtoRecord {
  using Value = T;
  static constexpr bool kPacked = false;
  static Status Read(ProtoIn& in, const ProtoField& f, T* out) {
    if (in.wire() != ProtoIn::kLen) [[unlikely]]
      return proto_internal::WrongWire(in.wire(), f.kind);
    std::string_view body;
    FLOW_RETURN_IF_ERROR(in.Len(&body));
    ProtoIn sub(body);
    return Derived::ReadBody(sub, *f.message, out);
  }
  static void Write(uint32_t n, const T& v, ProtoOut& out) {
    out.Tag(n, ProtoIn::kLen);
    out.Nested([&](ProtoOut& m) { Derived::WriteBody(v, m); });
  }
  static void WriteAs(const ProtoTarget& t, const T& v, ProtoOut& out) {
    out.Tag(t.number, ProtoIn::kLen);
    out.Nested([&](ProtoOut& m) { Derived::WriteBodyAs(v, *t.message, m); });
  }
  static bool IsDefault(const T&) { return false; }  // a message: always written
};

}  // namespace flow::rt
