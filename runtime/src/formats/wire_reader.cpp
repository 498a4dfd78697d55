#include "flow/runtime/formats/wire_reader.h"

namespace flow::rt {

Status WireReader::Truncated() {
  return Status::InvalidArgument("truncated: the record ends inside a value");
}

Status WireReader::VarintSlow(uint64_t* out) {
  uint64_t v = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (p_ == end_) [[unlikely]]
      return Truncated();
    uint8_t b = static_cast<uint8_t>(*p_++);
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      *out = v;
      return Status::Ok();
    }
  }
  return Status::InvalidArgument("a variable-length integer longer than 10 bytes");
}

}  // namespace flow::rt
