#include <gtest/gtest.h>

#include <array>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "flow/runtime/formats/csv_encoder.h"

namespace flow::rt {
namespace {

std::vector<std::string> Split(CsvDecoder& d, std::string_view record) {
  Status s = d.Parse(record, 1);
  EXPECT_TRUE(s.ok()) << s.ToString() << " for " << record;
  std::vector<std::string> out;
  for (size_t i = 0; i < d.column_count(); ++i) out.emplace_back(d.column(i));
  return out;
}

using V = std::vector<std::string>;

TEST(CsvParse, Rfc4180EdgeCases) {
  CsvDecoder d;
  EXPECT_EQ(Split(d, "a,b,c"), (V{"a", "b", "c"}));
  EXPECT_EQ(Split(d, "a,b,c\r\n"), (V{"a", "b", "c"}));
  EXPECT_EQ(Split(d, "a,b\n"), (V{"a", "b"}));
  EXPECT_EQ(Split(d, ""), (V{""}));
  EXPECT_EQ(Split(d, ",,"), (V{"", "", ""}));
  EXPECT_EQ(Split(d, R"("a,b",c)"), (V{"a,b", "c"}));
  EXPECT_EQ(Split(d, R"("say ""hi""",x)"), (V{"say \"hi\"", "x"}));
  EXPECT_EQ(Split(d, R"("""","""""")"), (V{"\"", "\"\""}));
  EXPECT_EQ(Split(d, "\"line1\nline2\r\nline3\",z\r\n"), (V{"line1\nline2\r\nline3", "z"}));
  EXPECT_EQ(Split(d, R"("",x)"), (V{"", "x"}));
  EXPECT_EQ(Split(d, " a , b "), (V{" a ", " b "}));  // spaces are data
  CsvDecoder tabs('\t');
  EXPECT_EQ(Split(tabs, "a,b\t\"c\td\""), (V{"a,b", "c\td"}));
}

TEST(CsvParse, MalformedQuotesAreErrorsWithLineAndColumn) {
  CsvDecoder d;
  Status s = d.Parse("a,\"open", 12);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "line 12, column 2: unterminated quoted field");
  s = d.Parse("\"ab\"c,d", 3);
  EXPECT_EQ(s.message(), "line 3, column 1: unexpected character after closing quote");
}

struct Row {
  std::string user;
  int64_t bytes = 0;
  std::optional<std::string> ref;
  double score = 0;
  bool ok = false;
  TimestampMs ts = 0;
  bool operator==(const Row&) const = default;
};

constexpr std::array<std::string_view, 6> kNames{"user", "bytes", "ref", "score", "ok", "ts"};
constexpr std::array<bool, 6> kRequired{true, true, false, true, true, true};

Status DecodeRow(CsvDecoder& d, std::string_view payload, int64_t line, Row* out) {
  FLOW_RETURN_IF_ERROR(d.Parse(payload, line));
  FLOW_RETURN_IF_ERROR(d.Read<CsvString>(0, &out->user));
  FLOW_RETURN_IF_ERROR(d.Read<CsvInt>(1, &out->bytes));
  FLOW_RETURN_IF_ERROR(d.Read<CsvNullable<CsvString>>(2, &out->ref));
  FLOW_RETURN_IF_ERROR(d.Read<CsvFloat>(3, &out->score));
  FLOW_RETURN_IF_ERROR(d.Read<CsvBool>(4, &out->ok));
  FLOW_RETURN_IF_ERROR(d.Read<CsvTimestamp>(5, &out->ts));
  return Status::Ok();
}

void EncodeRow(const Row& r, CsvEncoder* e) {
  e->Clear();
  e->Field<CsvString>(r.user);
  e->Field<CsvInt>(r.bytes);
  e->Field<CsvNullable<CsvString>>(r.ref);
  e->Field<CsvFloat>(r.score);
  e->Field<CsvBool>(r.ok);
  e->Field<CsvTimestamp>(r.ts);
}

TEST(CsvDecode, ByPositionTypedFields) {
  CsvDecoder d;
  d.BindPositions(kNames);
  Row r;
  ASSERT_TRUE(DecodeRow(d, "ann,42,,2.5,TRUE,1970-01-01T00:00:01.5Z", 2, &r).ok());
  EXPECT_EQ(r, (Row{"ann", 42, std::nullopt, 2.5, true, 1500}));
  ASSERT_TRUE(DecodeRow(d, "bob,-1,\"\",3,0,2000", 3, &r).ok());
  EXPECT_EQ(r, (Row{"bob", -1, std::string(""), 3.0, false, 2000}));

  Status s = DecodeRow(d, "ann,4x2,,2.5,true,0", 7, &r);
  EXPECT_EQ(s.message(), "line 7, column 2 (`bytes`): expected int, found \"4x2\"");
  s = DecodeRow(d, "ann,,,2.5,true,0", 8, &r);
  EXPECT_EQ(s.message(), "line 8, column 2 (`bytes`): expected int, found an empty field");
  s = DecodeRow(d, "ann,99999999999999999999,,1,true,0", 9, &r);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("column 2 (`bytes`)"), std::string::npos);
  s = DecodeRow(d, "ann,1,,1,yes,0", 10, &r);
  EXPECT_EQ(s.message(), "line 10, column 5 (`ok`): expected bool, found \"yes\"");
  s = DecodeRow(d, "ann,1,x", 11, &r);
  EXPECT_EQ(s.message(), "line 11, column 4 (`score`): missing (the record has 3 columns)");
}

TEST(CsvDecode, ByHeaderNamesInAnyOrder) {
  CsvDecoder d;
  ASSERT_TRUE(d.BindHeader("\xEF\xBB\xBFts,extra,ok,score,bytes,user\r\n", kNames, kRequired).ok());
  Row r;
  r.ref = "stale";
  ASSERT_TRUE(DecodeRow(d, "5,ignored,false,0.25,7,\"a,b\"", 2, &r).ok());
  EXPECT_EQ(r, (Row{"a,b", 7, std::nullopt, 0.25, false, 5}));  // ref: not in header -> null

  Status s = d.BindHeader("user,bytes", kNames, kRequired);
  EXPECT_EQ(s.message(), "line 1: header has no column `score`");
}

TEST(CsvDecode, HeaderRowPerFile) {
  CsvDecoder d;
  d.UseHeaderRows(kNames, kRequired);
  Row r;
  Status s = DecodeRow(d, "ann,1,,1,true,0", 2, &r);
  EXPECT_EQ(s.message(), "line 2: no CSV header row (line 1) seen before this record");
  // Two files with different column orders, each starting with its header at line 1.
  Result<bool> h = d.ConsumeHeader("user,bytes,score,ok,ts", 1);
  ASSERT_TRUE(h.ok());
  EXPECT_TRUE(*h);
  h = d.ConsumeHeader("bob,2,0.5,true,9", 2);
  ASSERT_TRUE(h.ok());
  EXPECT_FALSE(*h);
  ASSERT_TRUE(DecodeRow(d, "bob,2,0.5,true,9", 2, &r).ok());
  EXPECT_EQ(r, (Row{"bob", 2, std::nullopt, 0.5, true, 9}));
  ASSERT_TRUE(*d.ConsumeHeader("ts,ok,score,ref,bytes,user", 1));
  ASSERT_TRUE(DecodeRow(d, "7,false,1.5,r,3,cy", 2, &r).ok());
  EXPECT_EQ(r, (Row{"cy", 3, std::string("r"), 1.5, false, 7}));
  EXPECT_EQ(d.ConsumeHeader("user,ts", 1).status().message(),
            "line 1: header has no column `bytes`");
}

TEST(CsvEncode, QuotesOnlyWhenNeeded) {
  CsvEncoder e;
  e.Field<CsvString>(std::string("plain"));
  e.Field<CsvString>(std::string("a,b"));
  e.Field<CsvString>(std::string("q\"q"));
  e.Field<CsvString>(std::string("l1\nl2"));
  e.Field<CsvString>(std::string(""));
  e.Field<CsvNullable<CsvInt>>(std::optional<int64_t>());
  e.Field<CsvInt>(int64_t{-5});
  EXPECT_EQ(e.view(), "plain,\"a,b\",\"q\"\"q\",\"l1\nl2\",\"\",,-5");
}

TEST(CsvRoundTrip, RandomRowsSurvive) {
  std::mt19937_64 rng(7);
  const std::string alphabet = "ab,\"\n\r x\xC3\xA9";
  auto text = [&] {
    std::string s;
    for (size_t i = 0, n = rng() % 8; i < n; ++i) s.push_back(alphabet[rng() % alphabet.size()]);
    return s;
  };
  CsvEncoder e;
  CsvDecoder d;
  d.BindPositions(kNames);
  for (int i = 0; i < 2000; ++i) {
    Row in{text(),         static_cast<int64_t>(rng()),
           std::nullopt,   std::uniform_real_distribution<double>(-1e9, 1e9)(rng),
           rng() % 2 == 0, static_cast<int64_t>(rng() % 253402300799999ULL)};
    if (rng() % 2) in.ref = text();
    EncodeRow(in, &e);
    Row out;
    Status s = DecodeRow(d, e.view(), 1, &out);
    ASSERT_TRUE(s.ok()) << s.ToString() << " for " << e.view();
    ASSERT_EQ(out, in) << e.view();
  }
}

}  // namespace
}  // namespace flow::rt
