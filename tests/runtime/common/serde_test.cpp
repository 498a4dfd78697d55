#include "flow/runtime/common/serde.h"

#include <gtest/gtest.h>

namespace flow::rt {
namespace {

TEST(SerdeTest, RoundTripsEveryKind) {
  BinaryWriter w;
  w.PutU8(7);
  w.PutU32(123456);
  w.PutI64(-42);
  w.PutF64(2.5);
  w.PutBool(true);
  w.PutString(std::string("a\0b", 3));
  BinaryReader r(w.data());
  uint8_t u8;
  uint32_t u32;
  int64_t i64;
  double f64;
  bool b;
  std::string s;
  ASSERT_TRUE(r.GetU8(&u8).ok());
  ASSERT_TRUE(r.GetU32(&u32).ok());
  ASSERT_TRUE(r.GetI64(&i64).ok());
  ASSERT_TRUE(r.GetF64(&f64).ok());
  ASSERT_TRUE(r.GetBool(&b).ok());
  ASSERT_TRUE(r.GetString(&s).ok());
  EXPECT_EQ(u8, 7);
  EXPECT_EQ(u32, 123456u);
  EXPECT_EQ(i64, -42);
  EXPECT_EQ(f64, 2.5);
  EXPECT_TRUE(b);
  EXPECT_EQ(s, std::string("a\0b", 3));
  EXPECT_TRUE(r.AtEnd());
}

TEST(SerdeTest, TruncatedInputIsCorruptionNotACrash) {
  BinaryWriter w;
  w.PutString("hello");
  std::string data = w.data().substr(0, 10);
  BinaryReader r(data);
  std::string s;
  Status st = r.GetString(&s);
  EXPECT_EQ(st.code(), StatusCode::kCorruption);
  int64_t v;
  BinaryReader empty("");
  EXPECT_EQ(empty.GetI64(&v).code(), StatusCode::kCorruption);
}

TEST(SerdeTest, HugeLengthPrefixIsRejected) {
  BinaryWriter w;
  w.PutU64(~0ULL);
  BinaryReader r(w.data());
  std::string s;
  EXPECT_EQ(r.GetString(&s).code(), StatusCode::kCorruption);
}

TEST(SerdeTest, Crc32cMatchesKnownVector) {
  // The CRC-32C check value for "123456789" (RFC 3720, appendix B.4).
  EXPECT_EQ(Crc32c("123456789"), 0xE3069283u);
  EXPECT_NE(Crc32c("123456788"), Crc32c("123456789"));
}

}  // namespace
}  // namespace flow::rt
