#include "flow/runtime/state/serializer.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "flow/runtime/state/key_hash.h"

namespace flow::rt {
namespace {

struct Point {
  int64_t x = 0;
  std::string label;
  bool operator==(const Point&) const = default;
  uint64_t Hash() const { return HashCombine(StableHash(x), StableHash(std::string_view(label))); }
  void Serialize(BinaryWriter& w) const {
    w.PutI64(x);
    w.PutString(label);
  }
  Status Deserialize(BinaryReader& r) {
    FLOW_RETURN_IF_ERROR(r.GetI64(&x));
    return r.GetString(&label);
  }
};

template <typename T>
T RoundTrip(const T& v) {
  BinaryWriter w;
  WriteValue(w, v);
  BinaryReader r(w.data());
  T out{};
  Status s = ReadValue(r, &out);
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(r.AtEnd());
  return out;
}

TEST(SerializerTest, RoundTripsEverySupportedKind) {
  EXPECT_EQ(RoundTrip<int32_t>(-7), -7);
  EXPECT_EQ(RoundTrip<uint16_t>(65535), 65535);
  EXPECT_EQ(RoundTrip<int64_t>(INT64_MIN), INT64_MIN);
  EXPECT_EQ(RoundTrip<double>(-2.25), -2.25);
  EXPECT_EQ(RoundTrip<bool>(true), true);
  EXPECT_EQ(RoundTrip<std::string>(std::string("a\0b", 3)), std::string("a\0b", 3));
  std::vector<std::optional<std::string>> vo{std::nullopt, "x", ""};
  EXPECT_EQ(RoundTrip(vo), vo);
  std::pair<int64_t, std::vector<bool>> p{3, {true, false, true}};
  EXPECT_EQ(RoundTrip(p), p);
  std::tuple<int, double, std::string, Point> t{1, 0.5, "s", Point{9, "nine"}};
  EXPECT_EQ(RoundTrip(t), t);
  std::map<int64_t, std::vector<Point>> m{{1, {Point{1, "a"}}}, {-5, {}}};
  EXPECT_EQ(RoundTrip(m), m);
  std::unordered_map<std::string, int64_t> um{{"a", 1}, {"b", 2}};
  EXPECT_EQ(RoundTrip(um), um);
}

TEST(SerializerTest, RejectsTruncatedAndOutOfRangeInput) {
  BinaryWriter w;
  WriteValue(w, std::vector<std::string>{"hello", "world"});
  std::string bytes = w.data();
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    BinaryReader r(std::string_view(bytes).substr(0, cut));
    std::vector<std::string> out;
    Status s = ReadValue(r, &out);
    EXPECT_EQ(s.code(), StatusCode::kCorruption) << "cut at " << cut;
  }
  BinaryWriter big;
  WriteValue(big, int64_t{1} << 40);
  BinaryReader r(big.data());
  int32_t small = 0;
  EXPECT_EQ(ReadValue(r, &small).code(), StatusCode::kCorruption);
}

TEST(SerializerTest, HugeCountIsCorruptionNotAllocation) {
  BinaryWriter w;
  w.PutU64(uint64_t{1} << 60);
  BinaryReader r(w.data());
  std::vector<int64_t> out;
  EXPECT_EQ(ReadValue(r, &out).code(), StatusCode::kCorruption);
}

TEST(KeyHashTest, StableAndStructural) {
  // Equal keys hash equally; the hash of an int equals StableHash of its int64 value (so a key
  // group does not depend on the integer's C++ width).
  EXPECT_EQ(KeyHash<int32_t>{}(42), StableHash(int64_t{42}));
  EXPECT_EQ(KeyHash<std::string>{}("abc"), StableHash(std::string_view("abc")));
  EXPECT_EQ((KeyHash<std::pair<int, std::string>>{}({1, "a"})),
            HashCombine(StableHash(int64_t{1}), StableHash(std::string_view("a"))));
  EXPECT_EQ(KeyHash<Point>{}(Point{1, "a"}), Point({1, "a"}).Hash());
  EXPECT_NE(KeyHash<int64_t>{}(1), KeyHash<int64_t>{}(2));
}

}  // namespace
}  // namespace flow::rt
