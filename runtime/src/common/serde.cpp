#include "flow/runtime/common/serde.h"

#include <array>

namespace flow::rt {

Status BinaryReader::GetRaw(void* p, size_t n) {
  if (remaining() < n) {
    return Status::Corruption("truncated data: need " + std::to_string(n) + " bytes at offset " +
                              std::to_string(pos_) + ", have " + std::to_string(remaining()));
  }
  std::memcpy(p, data_.data() + pos_, n);
  pos_ += n;
  return Status::Ok();
}

Status BinaryReader::GetBool(bool* v) {
  uint8_t b = 0;
  FLOW_RETURN_IF_ERROR(GetU8(&b));
  if (b > 1) return Status::Corruption("invalid bool byte " + std::to_string(b));
  *v = b == 1;
  return Status::Ok();
}

Status BinaryReader::GetBytes(size_t n, std::string_view* out) {
  if (n > remaining()) {
    return Status::Corruption("length " + std::to_string(n) + " exceeds the " +
                              std::to_string(remaining()) + " bytes left");
  }
  *out = data_.substr(pos_, n);
  pos_ += n;
  return Status::Ok();
}

Status BinaryReader::GetString(std::string* s) {
  uint64_t n = 0;
  FLOW_RETURN_IF_ERROR(GetU64(&n));
  if (n > remaining()) {
    return Status::Corruption("string length " + std::to_string(n) + " exceeds the " +
                              std::to_string(remaining()) + " bytes left");
  }
  s->assign(data_.data() + pos_, n);
  pos_ += n;
  return Status::Ok();
}

namespace {
std::array<uint32_t, 256> MakeCrcTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    table[i] = c;
  }
  return table;
}
}  // namespace

uint32_t Crc32c(std::string_view data, uint32_t seed) {
  static const std::array<uint32_t, 256> kTable = MakeCrcTable();
  uint32_t c = ~seed;
  for (unsigned char ch : data) c = kTable[(c ^ ch) & 0xFF] ^ (c >> 8);
  return ~c;
}

}  // namespace flow::rt
