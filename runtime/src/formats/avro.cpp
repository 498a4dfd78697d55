#include "flow/runtime/formats/avro.h"

#include <fmt/format.h>

#include "flow/runtime/common/utf8.h"

namespace flow::rt {

namespace avro_internal {

Status NotNullable() {
  return Status::InvalidArgument(
      "null where the script's type is not nullable (declare the field with `?`)");
}
Status InvalidUtf8() {
  return Status::InvalidArgument("invalid UTF-8 in a string");
}
bool ValidUtf8(std::string_view s) {
  return IsValidUtf8(s);
}
Status ElementError(size_t index, const Status& inner) {
  return Status(inner.code(), fmt::format("element {}: {}", index, inner.message()));
}

}  // namespace avro_internal

Status AvroFieldError(std::string_view field, const Status& inner) {
  return Status(inner.code(), fmt::format("field `{}`: {}", field, inner.message()));
}

Status AvroIn::BadBranch(const AvroResolved& u, size_t i) const {
  int32_t branch = writer_.node(u.writer).branches[i];
  if (u.branch_state[i] == AvroResolved::kNullBranch) return avro_internal::NotNullable();
  return Status::InvalidArgument(fmt::format(
      "union branch {} ({}) cannot be read as the script's type", i, writer_.Describe(branch)));
}

Status AvroIn::Skip(int32_t node, int depth) {
  if (depth > AvroSchema::kMaxDepth) [[unlikely]]
    return Status::InvalidArgument("a value nested deeper than the schema allows");
  const AvroNode& n = writer_.node(node);
  int64_t v;
  std::string_view s;
  switch (n.type) {
    case AvroType::kNull:
      return Status::Ok();
    case AvroType::kBoolean: {
      bool b;
      return Boolean(&b);
    }
    case AvroType::kInt:
    case AvroType::kLong:
    case AvroType::kEnum:
      return Long(&v);
    case AvroType::kFloat:
      return Take(4, &s);
    case AvroType::kDouble:
      return Take(8, &s);
    case AvroType::kBytes:
    case AvroType::kString:
      return Bytes(&s);
    case AvroType::kFixed:
      return Take(n.size, &s);
    case AvroType::kRecord:
      for (const AvroField& f : n.fields) FLOW_RETURN_IF_ERROR(Skip(f.type, depth + 1));
      return Status::Ok();
    case AvroType::kUnion: {
      FLOW_RETURN_IF_ERROR(Long(&v));
      if (v < 0 || static_cast<uint64_t>(v) >= n.branches.size()) [[unlikely]] {
        return Status::InvalidArgument("a union branch index out of range");
      }
      return Skip(n.branches[static_cast<size_t>(v)], depth + 1);
    }
    case AvroType::kArray:
    case AvroType::kMap:
      for (;;) {
        int64_t count;
        FLOW_RETURN_IF_ERROR(BlockCount(&count));
        if (count == 0) return Status::Ok();
        for (int64_t i = 0; i < count; ++i) {
          if (n.type == AvroType::kMap) FLOW_RETURN_IF_ERROR(Bytes(&s));
          FLOW_RETURN_IF_ERROR(Skip(n.items, depth + 1));
        }
      }
  }
  return Status::Internal("avro: unknown node type");
}

}  // namespace flow::rt
