#include <gtest/gtest.h>

#include "flow/stdlib/scalar.h"

namespace flow::fn {
namespace {

using OptI = std::optional<int64_t>;
using OptS = std::optional<std::string>;

TEST(StdlibConditional, CoalesceTypesAndValues) {
  OptI none;
  EXPECT_EQ(Coalesce(none, OptI(2), OptI(3)), OptI(2));
  EXPECT_EQ(Coalesce(none, none), OptI());
  // A plain argument makes the result plain.
  static_assert(std::is_same_v<decltype(Coalesce(none, int64_t{0})), int64_t>);
  EXPECT_EQ(Coalesce(none, int64_t{0}), 0);
  EXPECT_EQ(Coalesce(OptI(5), int64_t{0}), 5);
  EXPECT_DOUBLE_EQ(Coalesce(none, 1.5), 1.5);
  EXPECT_EQ(Coalesce(OptS(), std::string("anon")), "anon");
}

TEST(StdlibConditional, NullIf) {
  EXPECT_EQ(NullIf(std::string(""), std::string("")), OptS());
  EXPECT_EQ(NullIf(std::string("x"), std::string("")), OptS("x"));
  EXPECT_EQ(NullIf(OptS(), std::string("")), OptS());
  EXPECT_EQ(NullIf(std::string("x"), OptS()), OptS("x"));
}

TEST(StdlibCollection, ElementAtCardinalityContains) {
  // Built by push_back: an initializer list here trips a g++ 12 -Warray-bounds false positive.
  std::vector<std::string> v;
  for (const char* s : {"a", "b", "c"}) v.emplace_back(s);
  EXPECT_EQ(Cardinality(v), 3);
  EXPECT_EQ(Cardinality(std::vector<int64_t>{}), 0);
  EXPECT_EQ(ElementAt(v, int64_t{1}), OptS("a"));
  EXPECT_EQ(ElementAt(v, int64_t{3}), OptS("c"));
  EXPECT_EQ(ElementAt(v, int64_t{-1}), OptS("c"));
  EXPECT_EQ(ElementAt(v, int64_t{-3}), OptS("a"));
  EXPECT_EQ(ElementAt(v, int64_t{0}), OptS());
  EXPECT_EQ(ElementAt(v, int64_t{4}), OptS());
  EXPECT_EQ(ElementAt(v, int64_t{-4}), OptS());
  EXPECT_EQ(ElementAt(v, std::numeric_limits<int64_t>::min()), OptS());
  // Nullable elements are not wrapped twice.
  std::vector<OptS> nv = {OptS(), OptS("z")};
  static_assert(std::is_same_v<decltype(ElementAt(nv, int64_t{1})), OptS>);
  EXPECT_EQ(ElementAt(nv, int64_t{2}), OptS("z"));
  EXPECT_TRUE(ArrayContains(v, std::string("b")));
  EXPECT_FALSE(ArrayContains(v, std::string("d")));
  EXPECT_TRUE(ArrayContains(nv, std::string("z")));
  EXPECT_EQ(ArrayContains(std::optional<std::vector<std::string>>(), std::string("a")),
            std::optional<bool>());
}

TEST(StdlibConditional, HashIsStableAndDistinguishes) {
  // Equal values hash equally whatever their C++ spelling; the value is the runtime's StableHash.
  EXPECT_EQ(Hash(std::string("abc")),
            static_cast<int64_t>(rt::StableHash(std::string_view("abc"))));
  EXPECT_EQ(Hash(int64_t{42}), static_cast<int64_t>(rt::StableHash(int64_t{42})));
  EXPECT_EQ(Hash(0.0), Hash(-0.0));
  EXPECT_NE(Hash(std::vector<int64_t>{1, 2}), Hash(std::vector<int64_t>{2, 1}));
  EXPECT_EQ(Hash(std::vector<int64_t>{1, 2}), Hash(std::vector<int64_t>{1, 2}));
  EXPECT_EQ(Hash(OptI()), OptI());  // null propagates
}

}  // namespace
}  // namespace flow::fn
