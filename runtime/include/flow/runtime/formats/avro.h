#pragma once
// Avro binary encoding (the Avro 1.11 specification, "Binary Encoding") and the codecs generated
// code uses for `format avro`. One codec type per Flow type, each with
//   static Status Read(AvroIn& in, const AvroResolved& r, Value* out)  -- writer's bytes, resolved
//   static void Write(const Value& v, AvroOut& out)                    -- the script's own schema
// The code generator maps a Flow type to a codec and to the Avro type it is written as:
//   int -> AvroLong ("long")              float -> AvroDouble ("double")
//   bool -> AvroBoolean ("boolean")       string -> AvroString ("string", checked UTF-8)
//   bytes -> AvroBytes ("bytes")          duration -> AvroLong ("long", milliseconds)
//   timestamp -> AvroTimestamp ({"type": "long", "logicalType": "timestamp-millis"})
//   list<T> -> AvroList<T's codec> ("array")
//   T? -> AvroNullable<T's codec> (["null", T] with default null)
//   a record -> a generated codec ("record"), fields matched by name
// Reads follow a resolution (avro_schema.h): promotions, skipped writer fields, union branches.
// Malformed bytes never crash: every length is checked against what is left (wire_reader.h),
// varints longer than 10 bytes and counts that cannot fit are refused, skipping is bounded by
// AvroSchema::kMaxDepth. Errors are kInvalidArgument without the field's name (generated record
// codecs add it): "truncated", "invalid UTF-8 in a string", "union branch 1 (string) cannot be read
// as long", "null where the script's type is not nullable". Threading: AvroIn and AvroOut are per
// call; codecs are stateless.

#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flow/runtime/common/status.h"
#include "flow/runtime/formats/avro_schema.h"
#include "flow/runtime/formats/wire_reader.h"

namespace flow::rt {

static_assert(std::endian::native == std::endian::little,
              "Avro floats are little-endian; add a byte swap here");

namespace avro_internal {
Status NotNullable();
Status InvalidUtf8();
bool ValidUtf8(std::string_view s);
Status ElementError(size_t index, const Status& inner);
}  // namespace avro_internal

class AvroIn : public WireReader {
 public:
  AvroIn(std::string_view bytes, const AvroSchema& writer) : WireReader(bytes), writer_(writer) {}

  [[nodiscard]] Status Long(int64_t* out) {
    uint64_t v;
    FLOW_RETURN_IF_ERROR(Varint(&v));
    *out = ZigZag(v);
    return Status::Ok();
  }
  [[nodiscard]] Status Int(int64_t* out) {
    FLOW_RETURN_IF_ERROR(Long(out));
    if (*out < INT32_MIN || *out > INT32_MAX) [[unlikely]]
      return Status::InvalidArgument("an int out of 32-bit range");
    return Status::Ok();
  }
  [[nodiscard]] Status Boolean(bool* out) {
    if (p_ == end_) [[unlikely]]
      return Truncated();
    uint8_t b = static_cast<uint8_t>(*p_++);
    if (b > 1) [[unlikely]]
      return Status::InvalidArgument("a boolean byte that is not 0 or 1");
    *out = b == 1;
    return Status::Ok();
  }
  [[nodiscard]] Status Float(double* out) {
    float f;
    FLOW_RETURN_IF_ERROR(Raw(&f, sizeof f));
    *out = f;
    return Status::Ok();
  }
  [[nodiscard]] Status Double(double* out) { return Raw(out, sizeof *out); }
  // Bytes and strings: a length, then that many bytes (a view into the input).
  [[nodiscard]] Status Bytes(std::string_view* out) {
    int64_t n;
    FLOW_RETURN_IF_ERROR(Long(&n));
    return Take(n, out);
  }
  [[nodiscard]] Status Take(int64_t n, std::string_view* out) {
    if (n < 0) [[unlikely]]
      return Status::InvalidArgument("a negative length");
    return Run(static_cast<uint64_t>(n), out);
  }
  // An array or map block's item count (0 ends it); a negative count is followed by a byte size.
  [[nodiscard]] Status BlockCount(int64_t* out) {
    FLOW_RETURN_IF_ERROR(Long(out));
    if (*out < 0) {
      if (*out == INT64_MIN) [[unlikely]]
        return Status::InvalidArgument("a block count out of range");
      *out = -*out;
      int64_t bytes;
      FLOW_RETURN_IF_ERROR(Long(&bytes));
    }
    // Every item takes at least a byte unless it is null: bound the count by what is left so a
    // corrupt count cannot make a reader reserve or loop without end.
    if (static_cast<uint64_t>(*out) > remaining() + 1024) [[unlikely]]
      return Status::InvalidArgument("a block count larger than the record");
    return Status::Ok();
  }

  // Follows union branches to the resolved node that is written next.
  [[nodiscard]] Status Concrete(const AvroResolved** r) {
    while ((*r)->writer_type == AvroType::kUnion) {
      int64_t i;
      FLOW_RETURN_IF_ERROR(Long(&i));
      const AvroResolved& u = **r;
      if (i < 0 || static_cast<uint64_t>(i) >= u.branches.size()) [[unlikely]] {
        return Status::InvalidArgument("a union branch index out of range");
      }
      if (u.branches[static_cast<size_t>(i)] == nullptr) [[unlikely]]
        return BadBranch(u, static_cast<size_t>(i));
      *r = u.branches[static_cast<size_t>(i)];
    }
    return Status::Ok();
  }

  // Concrete(), for a reader type that is not nullable: a null is an error.
  [[nodiscard]] Status NonNull(const AvroResolved& r, const AvroResolved** c) {
    *c = &r;
    FLOW_RETURN_IF_ERROR(Concrete(c));
    if ((*c)->writer_type == AvroType::kNull) [[unlikely]]
      return avro_internal::NotNullable();
    return Status::Ok();
  }

  // Reads a value of a writer node the reader does not use.
  [[nodiscard]] Status Skip(int32_t node, int depth = 0);

  // A record: each writer field is read by `field(reader_index, resolved)` or skipped.
  template <typename Fn>
  [[nodiscard]] Status Record(const AvroResolved& r, Fn&& field) {
    const AvroResolved* c = &r;
    FLOW_RETURN_IF_ERROR(Concrete(&c));
    for (const AvroResolved::Step& s : c->steps) {
      if (s.reader_field < 0) {
        FLOW_RETURN_IF_ERROR(Skip(s.writer_type));
      } else {
        FLOW_RETURN_IF_ERROR(field(s.reader_field, *s.resolved));
      }
    }
    return Status::Ok();
  }

  const AvroSchema& writer() const { return writer_; }

 private:
  static int64_t ZigZag(uint64_t v) {
    return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
  }
  Status BadBranch(const AvroResolved& u, size_t i) const;

  const AvroSchema& writer_;
};

class AvroOut {
 public:
  explicit AvroOut(std::string* out) : out_(out) {}
  void Long(int64_t v) {
    uint64_t z = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
    while (z >= 0x80) {
      out_->push_back(static_cast<char>((z & 0x7f) | 0x80));
      z >>= 7;
    }
    out_->push_back(static_cast<char>(z));
  }
  void Boolean(bool v) { out_->push_back(v ? 1 : 0); }
  void Double(double v) { out_->append(reinterpret_cast<const char*>(&v), sizeof v); }
  void Bytes(std::string_view v) {
    Long(static_cast<int64_t>(v.size()));
    out_->append(v);
  }

 private:
  std::string* out_;
};

struct AvroLong {
  using Value = int64_t;
  static Status Read(AvroIn& in, const AvroResolved& r, int64_t* out) {
    const AvroResolved* c;
    FLOW_RETURN_IF_ERROR(in.NonNull(r, &c));
    return c->writer_type == AvroType::kInt ? in.Int(out) : in.Long(out);
  }
  static void Write(int64_t v, AvroOut& out) { out.Long(v); }
};

struct AvroTimestamp {
  using Value = int64_t;
  static Status Read(AvroIn& in, const AvroResolved& r, int64_t* out) {
    const AvroResolved* c;
    FLOW_RETURN_IF_ERROR(in.NonNull(r, &c));
    FLOW_RETURN_IF_ERROR(c->writer_type == AvroType::kInt ? in.Int(out) : in.Long(out));
    if (c->divide != 1) {
      // Round toward negative infinity, like the time itself.
      int64_t q = *out / c->divide;
      *out = (*out % c->divide < 0) ? q - 1 : q;
    }
    if (c->multiply != 1) {
      if (__builtin_mul_overflow(*out, c->multiply, out)) [[unlikely]]
        return Status::InvalidArgument("a date out of range");
    }
    return Status::Ok();
  }
  static void Write(int64_t v, AvroOut& out) { out.Long(v); }
};

struct AvroDouble {
  using Value = double;
  static Status Read(AvroIn& in, const AvroResolved& r, double* out) {
    const AvroResolved* c = &r;
    FLOW_RETURN_IF_ERROR(in.Concrete(&c));
    int64_t i;
    switch (c->writer_type) {
      case AvroType::kDouble:
        return in.Double(out);
      case AvroType::kFloat:
        return in.Float(out);
      case AvroType::kInt:
        FLOW_RETURN_IF_ERROR(in.Int(&i));
        *out = static_cast<double>(i);
        return Status::Ok();
      case AvroType::kLong:
        FLOW_RETURN_IF_ERROR(in.Long(&i));
        *out = static_cast<double>(i);
        return Status::Ok();
      default:
        return avro_internal::NotNullable();
    }
  }
  static void Write(double v, AvroOut& out) { out.Double(v); }
};

struct AvroBoolean {
  using Value = bool;
  static Status Read(AvroIn& in, const AvroResolved& r, bool* out) {
    const AvroResolved* c;
    FLOW_RETURN_IF_ERROR(in.NonNull(r, &c));
    return in.Boolean(out);
  }
  static void Write(bool v, AvroOut& out) { out.Boolean(v); }
};

// Bytes, strings, enum symbols and fixed values as one byte string.
inline Status ReadAvroByteString(AvroIn& in, const AvroResolved& r, std::string* out) {
  const AvroResolved* c = &r;
  FLOW_RETURN_IF_ERROR(in.Concrete(&c));
  std::string_view v;
  switch (c->writer_type) {
    case AvroType::kEnum: {
      int64_t i;
      FLOW_RETURN_IF_ERROR(in.Int(&i));
      if (i < 0 || static_cast<uint64_t>(i) >= c->symbols->size()) [[unlikely]] {
        return Status::InvalidArgument("an enum index out of range");
      }
      out->assign((*c->symbols)[static_cast<size_t>(i)]);
      return Status::Ok();
    }
    case AvroType::kFixed:
      FLOW_RETURN_IF_ERROR(in.Take(in.writer().node(c->writer).size, &v));
      break;
    case AvroType::kNull:
      return avro_internal::NotNullable();
    default:
      FLOW_RETURN_IF_ERROR(in.Bytes(&v));
      break;
  }
  out->assign(v.data(), v.size());
  return Status::Ok();
}

struct AvroString {
  using Value = std::string;
  static Status Read(AvroIn& in, const AvroResolved& r, std::string* out) {
    FLOW_RETURN_IF_ERROR(ReadAvroByteString(in, r, out));
    if (!avro_internal::ValidUtf8(*out)) [[unlikely]]
      return avro_internal::InvalidUtf8();
    return Status::Ok();
  }
  static void Write(const std::string& v, AvroOut& out) { out.Bytes(v); }
};

struct AvroBytes {
  using Value = std::string;
  static Status Read(AvroIn& in, const AvroResolved& r, std::string* out) {
    return ReadAvroByteString(in, r, out);
  }
  static void Write(const std::string& v, AvroOut& out) { out.Bytes(v); }
};

template <typename C>
struct AvroNullable {
  using Value = std::optional<typename C::Value>;
  static Status Read(AvroIn& in, const AvroResolved& r, Value* out) {
    const AvroResolved* c = &r;
    FLOW_RETURN_IF_ERROR(in.Concrete(&c));
    if (c->writer_type == AvroType::kNull) {
      out->reset();
      return Status::Ok();
    }
    return C::Read(in, *c, &out->emplace());
  }
  // ["null", T]: branch 0 is null.
  static void Write(const Value& v, AvroOut& out) {
    out.Long(v.has_value() ? 1 : 0);
    if (v.has_value()) C::Write(*v, out);
  }
};

template <typename C>
struct AvroList {
  using Value = std::vector<typename C::Value>;
  static Status Read(AvroIn& in, const AvroResolved& r, Value* out) {
    const AvroResolved* c;
    FLOW_RETURN_IF_ERROR(in.NonNull(r, &c));
    out->clear();
    for (;;) {
      int64_t n;
      FLOW_RETURN_IF_ERROR(in.BlockCount(&n));
      if (n == 0) return Status::Ok();
      for (int64_t i = 0; i < n; ++i) {
        Status s = C::Read(in, *c->items, &out->emplace_back());
        if (!s.ok()) [[unlikely]]
          return avro_internal::ElementError(out->size() - 1, s);
      }
    }
  }
  static void Write(const Value& v, AvroOut& out) {
    if (!v.empty()) {
      out.Long(static_cast<int64_t>(v.size()));
      for (const auto& e : v) C::Write(e, out);
    }
    out.Long(0);
  }
};

// Prefixes a field's name to an error from reading it ("field `age`: ...").
Status AvroFieldError(std::string_view field, const Status& inner);

}  // namespace flow::rt
