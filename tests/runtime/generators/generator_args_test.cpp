// Argument parsing of the nexmark and datagen sources: values land in the config, defaults stay,
// and every bad argument is rejected with a message naming it.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "flow/runtime/generators/generator_args.h"

namespace flow::rt {
namespace {

TEST(GeneratorArgsTest, NexmarkArgumentsSetTheConfig) {
  auto r = ParseNexmarkArgs({{"kind", "auction"},
                             {"events", "5000"},
                             {"rate", "2500.5"},
                             {"base_time", "2026-03-01T00:00:00Z"},
                             {"avg_bid_byte_size", "300"},
                             {"num_active_people", "77"},
                             {"out_of_order_group_size", "4"}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->kind, NexmarkKind::kAuction);
  EXPECT_EQ(r->config.events, 5000);
  EXPECT_DOUBLE_EQ(r->config.rate, 2500.5);
  EXPECT_EQ(r->config.base_time, 1772323200000);  // 2026-03-01T00:00:00Z
  EXPECT_EQ(r->config.avg_bid_byte_size, 300);
  EXPECT_EQ(r->config.num_active_people, 77);
  EXPECT_EQ(r->config.out_of_order_group_size, 4);
  // Untouched arguments keep the documented defaults.
  EXPECT_EQ(r->config.hot_auction_ratio, 2);
  EXPECT_EQ(r->config.avg_person_byte_size, 200);
  EXPECT_EQ(r->config.first_event_id, 0);
}

TEST(GeneratorArgsTest, DatagenArgumentsSetTheConfig) {
  auto r = ParseDatagenArgs({{"count", "100"},
                             {"seed", "7"},
                             {"disorder", "3s"},
                             {"cardinality", "20"},
                             {"max", "500"},
                             {"nulls", "0.5"},
                             {"base_time", "86400000"}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->count, 100);
  EXPECT_EQ(r->seed, 7u);
  EXPECT_EQ(r->disorder, 3000);
  EXPECT_EQ(r->cardinality, 20);
  EXPECT_EQ(r->max_int, 500);
  EXPECT_DOUBLE_EQ(r->null_probability, 0.5);
  EXPECT_EQ(r->base_time, 86400000);
  EXPECT_DOUBLE_EQ(r->rate, 1000);
  for (auto [text, ms] : {std::pair{"250ms", 250}, {"2m", 120000}, {"1h", 3600000}, {"40", 40}}) {
    auto d = ParseDatagenArgs({{"disorder", text}});
    ASSERT_TRUE(d.ok()) << text;
    EXPECT_EQ(d->disorder, ms) << text;
  }
}

void ExpectError(const Status& s, const std::string& fragment) {
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find(fragment), std::string::npos) << s.message();
}

TEST(GeneratorArgsTest, BadArgumentsAreNamed) {
  ExpectError(ParseNexmarkArgs({{"events", "10"}}).status(), "missing argument `kind`");
  ExpectError(ParseNexmarkArgs({{"kind", "bids"}}).status(), "argument `kind`");
  ExpectError(ParseNexmarkArgs({{"kind", "bid"}, {"events", "ten"}}).status(),
              "argument `events`: expected an integer, got `ten`");
  ExpectError(ParseNexmarkArgs({{"kind", "bid"}, {"rate", "0"}}).status(), "rate");
  ExpectError(ParseNexmarkArgs({{"kind", "bid"}, {"avg_bid_byte_size", "99999999999"}}).status(),
              "avg_bid_byte_size");
  ExpectError(ParseNexmarkArgs({{"kind", "bid"}, {"speed", "1"}}).status(),
              "unknown argument `speed` (valid: kind, events,");
  ExpectError(ParseDatagenArgs({{"disorder", "5 s"}}).status(), "argument `disorder`");
  ExpectError(ParseDatagenArgs({{"disorder", "5y"}}).status(), "argument `disorder`");
  ExpectError(ParseDatagenArgs({{"base_time", "yesterday"}}).status(), "argument `base_time`");
  ExpectError(ParseDatagenArgs({{"max", "0"}}).status(), "max");
  ExpectError(ParseDatagenArgs({{"rate", "fast"}}).status(), "argument `rate`: expected a number");
  ExpectError(ParseDatagenArgs({{"nulls", "2"}}).status(), "nulls");
}

TEST(GeneratorArgsTest, SpecTablesListEveryParsedArgumentOnce) {
  std::set<std::string> names;
  for (const auto& spec : NexmarkArgSpecs())
    EXPECT_TRUE(names.insert(std::string(spec.name)).second);
  // Every listed name is accepted by the parser (with a valid value for its type).
  for (const auto& spec : NexmarkArgSpecs()) {
    std::map<std::string, std::string> args = {{"kind", "bid"}};
    const char* value = spec.type == GeneratorArgType::kTimestamp ? "2026-01-01T00:00:00Z" : "3";
    if (spec.name != "kind") args[std::string(spec.name)] = value;
    EXPECT_TRUE(ParseNexmarkArgs(args).ok()) << spec.name;
  }
  names.clear();
  for (const auto& spec : DatagenArgSpecs()) {
    EXPECT_TRUE(names.insert(std::string(spec.name)).second);
    const char* value = spec.type == GeneratorArgType::kTimestamp  ? "2026-01-01T00:00:00Z"
                        : spec.type == GeneratorArgType::kDuration ? "1s"
                        : spec.name == "nulls"                     ? "0.5"
                                                                   : "3";
    EXPECT_TRUE(ParseDatagenArgs({{std::string(spec.name), value}}).ok()) << spec.name;
  }
}

}  // namespace
}  // namespace flow::rt
