#pragma once
// A bounds-checked cursor over one record's bytes, shared by the binary formats' readers (AvroIn,
// ProtoIn): LEB128 varints (at most 10 bytes), fixed-size little-endian values and byte runs,
// each checked against what is left, so malformed input is an error, never a read past the end.
// Errors are kInvalidArgument: "truncated: the record ends inside a value", "a variable-length
// integer longer than 10 bytes".
// Threading: one per record being read.

#include <cstdint>
#include <cstring>
#include <string_view>

#include "flow/runtime/common/status.h"

namespace flow::rt {

class WireReader {
 public:
  explicit WireReader(std::string_view bytes)
      : p_(bytes.data()), end_(bytes.data() + bytes.size()) {}

  size_t remaining() const { return static_cast<size_t>(end_ - p_); }
  bool done() const { return p_ == end_; }

  [[nodiscard]] Status Varint(uint64_t* out) {
    // One byte (values below 128: most tags, lengths and small numbers) first.
    if (p_ != end_ && static_cast<uint8_t>(*p_) < 0x80) [[likely]] {
      *out = static_cast<uint8_t>(*p_++);
      return Status::Ok();
    }
    return VarintSlow(out);
  }
  // The next `n` bytes, as a view into the input.
  [[nodiscard]] Status Run(uint64_t n, std::string_view* out) {
    if (n > remaining()) [[unlikely]]
      return Truncated();
    *out = std::string_view(p_, static_cast<size_t>(n));
    p_ += n;
    return Status::Ok();
  }
  [[nodiscard]] Status Raw(void* out, size_t n) {
    if (remaining() < n) [[unlikely]]
      return Truncated();
    std::memcpy(out, p_, n);
    p_ += n;
    return Status::Ok();
  }

  static Status Truncated();

 protected:
  Status VarintSlow(uint64_t* out);

  const char* p_;
  const char* end_;
};

}  // namespace flow::rt
