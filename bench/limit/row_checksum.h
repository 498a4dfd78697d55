#pragma once
// RowChecksum: the canonical, order-independent result checksum of the Nexmark benchmark.
//
// A result row's canonical text is its fields joined by ',' in the query's column order: integers
// in decimal, timestamps as epoch milliseconds, strings as they are, floats as
// llround(value * 1000) in decimal. The checksum of a result is the sum (mod 2^64) of the 64-bit
// FNV-1a hashes of its rows' canonical texts, so it does not depend on the order rows arrive in.
// bench/lib/checksum.py and the Flink peer compute the same function.
//
// Threading: one instance per thread; Merge() combines per-thread results.

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace flow::bench {

inline constexpr uint64_t kFnvOffset = 14695981039346656037ULL;
inline constexpr uint64_t kFnvPrime = 1099511628211ULL;

inline uint64_t Fnv1a64(std::string_view text) {
  uint64_t h = kFnvOffset;
  for (const char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= kFnvPrime;
  }
  return h;
}

// Builds one row's canonical text field by field, then adds it to the checksum.
class RowChecksum {
 public:
  RowChecksum& Int(int64_t value) {
    Separator();
    row_ += std::to_string(value);
    return *this;
  }
  RowChecksum& Str(std::string_view value) {
    Separator();
    row_ += value;
    return *this;
  }
  RowChecksum& Float(double value) { return Int(std::llround(value * 1000.0)); }
  // Ends the row: hashes it into the checksum (and prints it when echo is on).
  void End() {
    if (echo_) std::fprintf(stdout, "%s\n", row_.c_str());
    sum_ += Fnv1a64(row_);
    ++rows_;
    row_.clear();
    fields_ = 0;
  }
  void Merge(const RowChecksum& other) {
    sum_ += other.sum_;
    rows_ += other.rows_;
  }

  uint64_t sum() const { return sum_; }
  // Prints each row's canonical text on stdout (to test other implementations of the checksum).
  // Default: off, or on for every instance after SetEchoAll(true).
  static void SetEchoAll(bool on) { EchoAll() = on; }
  int64_t rows() const { return rows_; }

 private:
  void Separator() {
    if (fields_++ > 0) row_ += ',';
  }

  static bool& EchoAll() {
    static bool all = false;
    return all;
  }

  std::string row_;
  bool echo_ = EchoAll();
  int fields_ = 0;
  uint64_t sum_ = 0;
  int64_t rows_ = 0;
};

}  // namespace flow::bench
