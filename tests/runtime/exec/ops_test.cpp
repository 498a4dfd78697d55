// Expression helpers: null semantics and arithmetic as docs/language.md states them.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>

#include "flow/runtime/exec/cast.h"
#include "flow/runtime/exec/ops.h"

namespace flow::exec {
namespace {

using OB = std::optional<bool>;

// Kleene logic reference: -1 null, 0 false, 1 true.
int KAnd(int a, int b) {
  if (a == 0 || b == 0) return 0;
  if (a == 1 && b == 1) return 1;
  return -1;
}
int KOr(int a, int b) {
  if (a == 1 || b == 1) return 1;
  if (a == 0 && b == 0) return 0;
  return -1;
}
OB ToOpt(int v) {
  return v < 0 ? OB() : OB(v == 1);
}
int FromOpt(const OB& v) {
  return v ? (*v ? 1 : 0) : -1;
}

TEST(OpsTest, ThreeValuedLogicMatchesKleeneTable) {
  for (int a = -1; a <= 1; ++a) {
    for (int b = -1; b <= 1; ++b) {
      EXPECT_EQ(FromOpt(ops::And(ToOpt(a), ToOpt(b))), KAnd(a, b)) << a << " and " << b;
      EXPECT_EQ(FromOpt(ops::Or(ToOpt(a), ToOpt(b))), KOr(a, b)) << a << " or " << b;
    }
  }
  EXPECT_FALSE(ops::IsTrue(OB()));
  EXPECT_TRUE(ops::IsTrue(true));
  EXPECT_FALSE(ops::Not(OB()).has_value());
}

TEST(OpsTest, NullOperandGivesNull) {
  std::optional<int64_t> none;
  EXPECT_FALSE(ops::Add(none, int64_t{1}).has_value());
  EXPECT_FALSE(ops::Lt(std::optional<std::string>(), std::string("a")).has_value());
  EXPECT_EQ(ops::Add(std::optional<int64_t>(2), int64_t{3}), std::optional<int64_t>(5));
  EXPECT_FALSE(ops::In(std::optional<int64_t>(), int64_t{1}).has_value());
  EXPECT_TRUE(ops::In(int64_t{2}, int64_t{1}, int64_t{2}));
  EXPECT_FALSE(ops::In(int64_t{3}, int64_t{1}, std::optional<int64_t>()));
}

TEST(OpsTest, IntegerArithmeticWrapsAndMixesWithFloat) {
  EXPECT_EQ(ops::Add(INT64_MAX, int64_t{1}), INT64_MIN);
  EXPECT_EQ(ops::Mul(INT64_MIN, int64_t{-1}), INT64_MIN);
  EXPECT_DOUBLE_EQ(ops::Add(int64_t{1}, 0.5), 1.5);
  EXPECT_EQ(ops::Div(int64_t{-7}, int64_t{2}, "t"), -3);  // toward zero
  EXPECT_EQ(ops::Mod(int64_t{-7}, int64_t{2}, "t"), -1);  // dividend's sign
  EXPECT_TRUE(ops::Eq(int64_t{2}, 2.0));
  EXPECT_EQ(ops::Add(std::string("ab"), std::string("cd")), "abcd");
}

TEST(OpsTest, IntegerDivisionByZeroRecordsAnErrorNamingTheSite) {
  ASSERT_TRUE(ops::TakeError().ok());
  EXPECT_EQ(ops::Div(int64_t{1}, int64_t{0}, "job.flow:7:3"), 0);
  ASSERT_TRUE(ops::HasError());
  rt::Status s = ops::TakeError();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("job.flow:7:3"), std::string::npos);
  EXPECT_NE(s.message().find("division by zero"), std::string::npos);
  EXPECT_FALSE(ops::HasError());
  EXPECT_TRUE(std::isinf(ops::Div(1.0, int64_t{0}, "x")));  // float division is IEEE
  EXPECT_FALSE(ops::HasError());
}

TEST(OpsTest, AsConvertsRepresentations) {
  EXPECT_EQ((ops::As<std::optional<double>>(int64_t{3})), std::optional<double>(3.0));
  EXPECT_EQ((ops::As<int64_t>(std::optional<int64_t>())), 0);
  EXPECT_EQ((ops::As<std::optional<std::string>>(std::nullopt)), std::nullopt);
}

TEST(CastTest, FollowsTheLanguageRules) {
  using K = CastKind;
  EXPECT_EQ((Cast<K::kString, K::kInt>(std::string("42"))), std::optional<int64_t>(42));
  EXPECT_FALSE((Cast<K::kString, K::kInt>(std::string("4x2"))).has_value());
  EXPECT_EQ((Cast<K::kFloat, K::kInt>(-2.9)), std::optional<int64_t>(-2));
  EXPECT_FALSE((Cast<K::kFloat, K::kInt>(1e300)).has_value());
  EXPECT_FALSE((Cast<K::kFloat, K::kInt>(std::nan(""))).has_value());
  EXPECT_EQ((Cast<K::kInt, K::kString>(int64_t{-5})), std::optional<std::string>("-5"));
  EXPECT_EQ((Cast<K::kString, K::kBool>(std::string("TRUE"))), std::optional<bool>(true));
  EXPECT_EQ((Cast<K::kTimestamp, K::kString>(int64_t{0})),
            std::optional<std::string>("1970-01-01T00:00:00.000Z"));
  EXPECT_FALSE((Cast<K::kInt, K::kFloat>(std::optional<int64_t>())).has_value());
}

}  // namespace
}  // namespace flow::exec
