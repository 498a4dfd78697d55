#include "flow/runtime/formats/protobuf.h"

#include <fmt/format.h>
#include <google/protobuf/descriptor.h>

#include "flow/runtime/common/utf8.h"

namespace flow::rt {

namespace proto_internal {

Status InvalidUtf8() {
  return Status::InvalidArgument("invalid UTF-8 in a string");
}
bool ValidUtf8(std::string_view s) {
  return IsValidUtf8(s);
}

namespace {
std::string_view KindName(ProtoKind k) {
  static constexpr std::string_view kNames[] = {"int32",
                                                "int64",
                                                "uint32",
                                                "uint64",
                                                "sint32",
                                                "sint64",
                                                "fixed32",
                                                "fixed64",
                                                "sfixed32",
                                                "sfixed64",
                                                "enum",
                                                "bool",
                                                "float",
                                                "double",
                                                "string",
                                                "bytes",
                                                "message",
                                                "google.protobuf.Timestamp",
                                                "google.protobuf.Duration"};
  return kNames[static_cast<size_t>(k)];
}
}  // namespace

Status WrongWire(int wire, ProtoKind kind) {
  return Status::InvalidArgument(
      fmt::format("wire type {} where the writer's schema has a {}", wire, KindName(kind)));
}

Status EnumName(const ProtoField& f, int64_t number, std::string* out) {
  const google::protobuf::EnumValueDescriptor* v =
      f.enum_type->FindValueByNumber(static_cast<int>(number));
  if (v == nullptr) {
    // An open (proto3) enum keeps numbers its schema does not name; there is no name to give.
    return Status::InvalidArgument(
        fmt::format("enum `{}` has no value numbered {}", f.enum_type->full_name(), number));
  }
  out->assign(v->name());
  return Status::Ok();
}

Status TimeMessage(std::string_view body, bool timestamp, int64_t* ms) {
  int64_t seconds = 0, nanos = 0;
  ProtoIn in(body);
  ProtoMessage fields;  // 1: seconds (int64), 2: nanos (int32)
  fields.by_number.resize(3);
  fields.by_number[1] = ProtoField{0, ProtoKind::kInt64, nullptr, nullptr};
  fields.by_number[2] = ProtoField{1, ProtoKind::kInt32, nullptr, nullptr};
  FLOW_RETURN_IF_ERROR(in.Message(fields, [&](int32_t j, const ProtoField& f) {
    return in.Integer(f.kind, j == 0 ? &seconds : &nanos);
  }));
  if (nanos <= -1000000000 || nanos >= 1000000000) {
    return Status::InvalidArgument(
        fmt::format("{} nanos {} out of range", timestamp ? "Timestamp" : "Duration", nanos));
  }
  // Milliseconds round down, like every Flow time.
  int64_t millis = nanos / 1000000;
  if (nanos % 1000000 < 0) millis -= 1;
  if (__builtin_mul_overflow(seconds, int64_t{1000}, ms) || __builtin_add_overflow(*ms, millis, ms))
    return Status::InvalidArgument("a time out of range");
  return Status::Ok();
}

}  // namespace proto_internal

Status ProtoFieldError(std::string_view field, const Status& inner) {
  return Status(inner.code(), fmt::format("field `{}`: {}", field, inner.message()));
}

Status ProtoIn::BadTag(uint64_t tag) {
  return Status::InvalidArgument(
      fmt::format("an invalid field number {} (tag 0x{:x})", tag >> 3, tag));
}

Status ProtoIn::Integer(ProtoKind kind, int64_t* out) {
  uint64_t v = 0;
  uint32_t v32 = 0;
  int want = kVarint;
  switch (kind) {
    case ProtoKind::kFixed32:
    case ProtoKind::kSfixed32:
      want = kI32;
      break;
    case ProtoKind::kFixed64:
    case ProtoKind::kSfixed64:
      want = kI64;
      break;
    default:
      break;
  }
  if (wire_ != want) [[unlikely]]
    return proto_internal::WrongWire(wire_, kind);
  if (want == kVarint) {
    FLOW_RETURN_IF_ERROR(Varint(&v));
  } else if (want == kI32) {
    FLOW_RETURN_IF_ERROR(Fixed32(&v32));
  } else {
    FLOW_RETURN_IF_ERROR(Fixed64(&v));
  }
  switch (kind) {
    case ProtoKind::kInt32:
    case ProtoKind::kEnum:
      *out = static_cast<int32_t>(v);  // written sign-extended to 64 bits; the low 32 count
      return Status::Ok();
    case ProtoKind::kUint32:
      *out = static_cast<uint32_t>(v);
      return Status::Ok();
    case ProtoKind::kSint32:
    case ProtoKind::kSint64:
      *out = static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
      if (kind == ProtoKind::kSint32) *out = static_cast<int32_t>(*out);
      return Status::Ok();
    case ProtoKind::kFixed32:
      *out = v32;
      return Status::Ok();
    case ProtoKind::kSfixed32:
      *out = static_cast<int32_t>(v32);
      return Status::Ok();
    case ProtoKind::kUint64:
    case ProtoKind::kFixed64:
      if (v > static_cast<uint64_t>(INT64_MAX)) [[unlikely]] {
        return Status::InvalidArgument(
            fmt::format("{} does not fit in an int (at most 2^63-1)", v));
      }
      *out = static_cast<int64_t>(v);
      return Status::Ok();
    default:  // int64, sfixed64
      *out = static_cast<int64_t>(v);
      return Status::Ok();
  }
}

Status ProtoIn::Real(ProtoKind kind, double* out) {
  if (kind == ProtoKind::kDouble || kind == ProtoKind::kFloat) {
    int want = kind == ProtoKind::kDouble ? kI64 : kI32;
    if (wire_ != want) [[unlikely]]
      return proto_internal::WrongWire(wire_, kind);
    if (kind == ProtoKind::kDouble) {
      uint64_t bits = 0;
      FLOW_RETURN_IF_ERROR(Fixed64(&bits));
      *out = std::bit_cast<double>(bits);
    } else {
      uint32_t bits = 0;
      FLOW_RETURN_IF_ERROR(Fixed32(&bits));
      *out = std::bit_cast<float>(bits);
    }
    return Status::Ok();
  }
  int64_t i;
  FLOW_RETURN_IF_ERROR(Integer(kind, &i));
  *out = static_cast<double>(i);
  return Status::Ok();
}

Status ProtoIn::Skip(uint64_t number, int depth) {
  uint64_t v;
  std::string_view s;
  switch (wire_) {
    case kVarint:
      return Varint(&v);
    case kI64:
      return Fixed64(&v);
    case kI32: {
      uint32_t v32;
      return Fixed32(&v32);
    }
    case kLen:
      return Len(&s);
    case kStartGroup:
      if (depth >= kMaxDepth) [[unlikely]]
        return Status::InvalidArgument("groups nested deeper than 64");
      for (;;) {
        if (p_ == end_) [[unlikely]]
          return Truncated();
        uint64_t tag;
        FLOW_RETURN_IF_ERROR(Varint(&tag));
        wire_ = static_cast<int>(tag & 7);
        if (wire_ == kEndGroup) {
          if ((tag >> 3) != number) [[unlikely]]
            return Status::InvalidArgument("a group's end tag does not match its start");
          return Status::Ok();
        }
        if ((tag >> 3) == 0 || (tag >> 3) > kMaxNumber) [[unlikely]]
          return BadTag(tag);
        FLOW_RETURN_IF_ERROR(Skip(tag >> 3, depth + 1));
      }
    default:
      return Status::InvalidArgument(fmt::format("an invalid wire type {}", wire_));
  }
}

}  // namespace flow::rt
