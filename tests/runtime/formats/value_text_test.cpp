#include "flow/runtime/formats/value_text.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace flow::rt {
namespace {

TEST(Base64, Rfc4648TestVectors) {
  // RFC 4648 section 10.
  const std::pair<std::string, std::string> vectors[] = {{"", ""},
                                                         {"f", "Zg=="},
                                                         {"fo", "Zm8="},
                                                         {"foo", "Zm9v"},
                                                         {"foob", "Zm9vYg=="},
                                                         {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : vectors) {
    std::string out;
    AppendBase64(plain, &out);
    EXPECT_EQ(out, encoded);
    std::string back;
    ASSERT_TRUE(DecodeBase64(encoded, &back)) << encoded;
    EXPECT_EQ(back, plain);
  }
  std::string out;
  EXPECT_TRUE(DecodeBase64("Zm8", &out));  // padding optional
  EXPECT_EQ(out, "fo");
  for (const char* bad : {"Z", "Zm9v!", "Zm=v", "Zh==", "Zm9vY", "===="}) {
    EXPECT_FALSE(DecodeBase64(bad, &out)) << bad;
  }
}

TEST(Base64, RandomBytesRoundTrip) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 2000; ++i) {
    std::string bytes;
    for (size_t j = 0, n = rng() % 40; j < n; ++j) bytes.push_back(static_cast<char>(rng()));
    std::string enc, dec;
    AppendBase64(bytes, &enc);
    ASSERT_EQ(enc.size(), (bytes.size() + 2) / 3 * 4);
    ASSERT_TRUE(DecodeBase64(enc, &dec));
    ASSERT_EQ(dec, bytes);
  }
}

TEST(Duration, ParseAndFormat) {
  const std::pair<const char*, DurationMs> cases[] = {
      {"250ms", 250},   {"10s", 10000}, {"1h30m", 5400000}, {"2d", 172800000},
      {"1m1ms", 60001}, {"-5s", -5000}, {"0ms", 0},         {"1h1m1s1ms", 3661001}};
  for (const auto& [text, ms] : cases) {
    DurationMs d = -1;
    ASSERT_TRUE(ParseDuration(text, &d)) << text;
    EXPECT_EQ(d, ms) << text;
  }
  for (const char* bad : {"", "-", "10", "s", "10x", "1.5s", "10 s", "9223372036854775807d"}) {
    DurationMs d;
    EXPECT_FALSE(ParseDuration(bad, &d)) << bad;
  }
  const std::pair<DurationMs, const char*> formats[] = {
      {0, "0ms"}, {1500, "1s500ms"}, {5400000, "1h30m"}, {-90061001, "-1d1h1m1s1ms"}};
  for (const auto& [ms, text] : formats) {
    std::string out;
    AppendDuration(ms, &out);
    EXPECT_EQ(out, text);
  }
  // INT64_MIN has no positive counterpart; formatting must still work: 9223372036854775808 ms is
  // 106751991167 days 7 h 12 min 55 s 808 ms.
  std::string min;
  AppendDuration(INT64_MIN, &min);
  EXPECT_EQ(min, "-106751991167d7h12m55s808ms");
}

TEST(Numbers, ParseWholeTextOnly) {
  int64_t i;
  EXPECT_TRUE(ParseInt64("-42", &i));
  EXPECT_EQ(i, -42);
  EXPECT_TRUE(ParseInt64("+7", &i));
  EXPECT_EQ(i, 7);
  EXPECT_FALSE(ParseInt64("", &i));
  EXPECT_FALSE(ParseInt64("1 ", &i));
  EXPECT_FALSE(ParseInt64("9223372036854775808", &i));
  double d;
  EXPECT_TRUE(ParseDouble("2.5e3", &d));
  EXPECT_EQ(d, 2500.0);
  EXPECT_FALSE(ParseDouble("2.5x", &d));
  std::string s;
  AppendDouble(0.1, &s);
  EXPECT_EQ(s, "0.1");
}

}  // namespace
}  // namespace flow::rt
