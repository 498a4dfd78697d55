// Malformed input never crashes: random mutations of valid records are either decoded or
// rejected with kInvalidArgument. (Run under FLOW_SANITIZE=ON to check memory safety too.)

#include <gtest/gtest.h>

#include <bitset>
#include <random>
#include <string>
#include <vector>

#include "flow/runtime/formats/csv_decoder.h"
#include "flow/runtime/formats/json_codecs.h"

namespace flow::rt {
namespace {

std::string Mutate(std::string s, std::mt19937_64& rng) {
  static const std::string kBytes = "{}[]\",:\\ 0123456789.eE-+tfnul\x01\xff\xc3\n\r";
  for (size_t i = 0, n = 1 + rng() % 4; i < n && !s.empty(); ++i) {
    size_t pos = rng() % s.size();
    switch (rng() % 4) {
      case 0:
        s[pos] = kBytes[rng() % kBytes.size()];
        break;
      case 1:
        s.erase(pos, 1 + rng() % 3);
        break;
      case 2:
        s.insert(pos, 1, kBytes[rng() % kBytes.size()]);
        break;
      default:
        s.resize(pos);
        break;
    }
  }
  return s;
}

TEST(MalformedJson, MutationsAreDecodedOrRejected) {
  const std::vector<std::string> seeds = {
      R"({"user":"ann","bytes":42,"tags":["x","y"],"ref":null,"ts":"2026-11-29T14:41:15.123Z"})",
      R"({"ts":1,"extra":{"a":[1,2,{"b":"\u00e9\n"}]},"bytes":-1e3,"user":"\"q\"","tags":[]})",
  };
  constexpr JsonFieldTable<5> kFields{{"user", "bytes", "tags", "ref", "ts"},
                                      {true, true, true, false, true}};
  std::mt19937_64 rng(99);
  JsonDecoder d;
  int accepted = 0, rejected = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string input = Mutate(seeds[i % seeds.size()], rng);
    Status s = d.Begin(input);
    std::string user;
    int64_t bytes = 0;
    std::vector<std::string> tags;
    std::optional<std::string> ref;
    TimestampMs ts = 0;
    std::bitset<5> seen;
    std::string_view key;
    while (s.ok() && d.NextField(&key)) {
      switch (kFields.Find(key)) {
        case 0:
          s = d.Read<JsonString>("user", &user);
          seen.set(0);
          break;
        case 1:
          s = d.Read<JsonInt>("bytes", &bytes);
          seen.set(1);
          break;
        case 2:
          s = d.Read<JsonList<JsonString>>("tags", &tags);
          seen.set(2);
          break;
        case 3:
          s = d.Read<JsonNullable<JsonString>>("ref", &ref);
          seen.set(3);
          break;
        case 4:
          s = d.Read<JsonTimestamp>("ts", &ts);
          seen.set(4);
          break;
        default:
          break;
      }
    }
    if (s.ok()) s = d.End();
    if (s.ok()) s = d.CheckRequired(kFields, seen);
    if (s.ok()) {
      ++accepted;
    } else {
      ++rejected;
      ASSERT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString() << " for " << input;
      ASSERT_FALSE(s.message().empty());
    }
  }
  EXPECT_GT(rejected, 0);
  EXPECT_GT(accepted, 0);
}

TEST(MalformedCsv, MutationsAreDecodedOrRejected) {
  std::mt19937_64 rng(5);
  CsvDecoder d;
  constexpr std::array<std::string_view, 3> kNames{"a", "b", "c"};
  d.BindPositions(kNames);
  for (int i = 0; i < 20000; ++i) {
    std::string input = Mutate("x,\"y \"\"z\"\" w\",12\r\n", rng);
    Status s = d.Parse(input, i + 1);
    if (s.ok()) {
      int64_t c = 0;
      std::string a;
      s = d.Read<CsvString>(0, &a);
      if (s.ok()) s = d.Read<CsvInt>(2, &c);
    }
    if (!s.ok()) {
      ASSERT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
      ASSERT_NE(s.message().find("line " + std::to_string(i + 1)), std::string::npos)
          << s.message();
    }
  }
}

}  // namespace
}  // namespace flow::rt
