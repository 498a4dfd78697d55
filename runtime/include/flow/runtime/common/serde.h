#pragma once
// Binary encoding for state snapshots: little-endian fixed-width integers, length-prefixed strings.
// Readers never trust their input: every read checks bounds and returns Corruption on short data.

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "flow/runtime/common/status.h"

namespace flow::rt {

class BinaryWriter {
 public:
  void PutU8(uint8_t v) { buf_.push_back(static_cast<char>(v)); }
  void PutU32(uint32_t v) { PutRaw(&v, sizeof v); }
  void PutU64(uint64_t v) { PutRaw(&v, sizeof v); }
  void PutI64(int64_t v) { PutRaw(&v, sizeof v); }
  void PutF64(double v) { PutRaw(&v, sizeof v); }
  void PutBool(bool v) { PutU8(v ? 1 : 0); }
  void PutString(std::string_view s) {
    PutU64(s.size());
    buf_.append(s.data(), s.size());
  }

  const std::string& data() const { return buf_; }
  std::string Release() { return std::move(buf_); }
  size_t size() const { return buf_.size(); }
  // Overwrites the u32 written at byte `at` (a length known only after what follows it).
  void PatchU32(size_t at, uint32_t v) { std::memcpy(buf_.data() + at, &v, sizeof v); }

 private:
  void PutRaw(const void* p, size_t n) { buf_.append(static_cast<const char*>(p), n); }
  std::string buf_;
};

class BinaryReader {
 public:
  explicit BinaryReader(std::string_view data) : data_(data) {}

  Status GetU8(uint8_t* v) { return GetRaw(v, sizeof *v); }
  Status GetU32(uint32_t* v) { return GetRaw(v, sizeof *v); }
  Status GetU64(uint64_t* v) { return GetRaw(v, sizeof *v); }
  Status GetI64(int64_t* v) { return GetRaw(v, sizeof *v); }
  Status GetF64(double* v) { return GetRaw(v, sizeof *v); }
  Status GetBool(bool* v);
  Status GetString(std::string* s);
  // The next n bytes, without copying (valid while the reader's data is).
  Status GetBytes(size_t n, std::string_view* out);

  bool AtEnd() const { return pos_ == data_.size(); }
  size_t remaining() const { return data_.size() - pos_; }

 private:
  Status GetRaw(void* p, size_t n);
  std::string_view data_;
  size_t pos_ = 0;
};

// CRC-32C (Castagnoli) of `data`, for checksums on checkpoint files.
uint32_t Crc32c(std::string_view data, uint32_t seed = 0);

}  // namespace flow::rt
