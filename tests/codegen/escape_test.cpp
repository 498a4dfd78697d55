// The escaping rules: every byte string round-trips through a C++ literal (checked by decoding
// the literal with an independent decoder here), comments never contain comment terminators, and
// mangled identifiers are safe and injective.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>

#include "codegen/escape.h"

namespace flow::codegen {
namespace {

// Decodes the subset of C++ literal syntax the escaper may produce; fails the test otherwise.
std::string DecodeLiteral(const std::string& lit) {
  EXPECT_GE(lit.size(), 2u);
  EXPECT_EQ(lit.front(), '"');
  EXPECT_EQ(lit.back(), '"');
  std::string out;
  for (size_t i = 1; i + 1 < lit.size(); ++i) {
    char c = lit[i];
    EXPECT_TRUE(c >= 0x20 && c < 0x7f) << "raw non-printable byte in literal";
    EXPECT_NE(c, '"');
    EXPECT_NE(c, '?') << "a raw `?` could start a trigraph";
    if (c != '\\') {
      out.push_back(c);
      continue;
    }
    EXPECT_LT(i + 3, lit.size());
    int v = 0;
    for (int k = 1; k <= 3; ++k) {
      char d = lit[i + static_cast<size_t>(k)];
      EXPECT_TRUE(d >= '0' && d <= '7');
      v = v * 8 + (d - '0');
    }
    out.push_back(static_cast<char>(v));
    i += 3;
  }
  return out;
}

TEST(EscapeTest, EveryByteRoundTrips) {
  std::string all;
  for (int c = 0; c < 256; ++c) all.push_back(static_cast<char>(c));
  EXPECT_EQ(DecodeLiteral(CppStringLiteral(all)), all);
  std::mt19937 rng(1);
  for (int n = 0; n < 200; ++n) {
    std::string s;
    for (size_t i = rng() % 40; i > 0; --i) s.push_back(static_cast<char>(rng() % 256));
    EXPECT_EQ(DecodeLiteral(CppStringLiteral(s)), s);
  }
  // Octal escapes are always three digits, so a following digit is never swallowed.
  EXPECT_EQ(DecodeLiteral(CppStringLiteral(std::string("\0"
                                                       "7",
                                                       2))),
            std::string("\0"
                        "7",
                        2));
  EXPECT_EQ(CppStringObject(std::string("a\0b", 3)), "std::string(\"a\\000b\", 3)");
}

TEST(EscapeTest, CommentTextCannotEndOrExtendAComment) {
  std::string nasty = "x */ y /* z // w \\\n q ?\?/ \xff";
  std::string c = CommentText(nasty, 200);
  EXPECT_EQ(c.find("*/"), std::string::npos);
  EXPECT_EQ(c.find("//"), std::string::npos);
  EXPECT_EQ(c.find('\\'), std::string::npos);
  EXPECT_EQ(c.find('\n'), std::string::npos);
  EXPECT_EQ(c.find('?'), std::string::npos);
  for (char ch : c) EXPECT_TRUE(ch >= 0x20 && ch < 0x7f);
}

TEST(EscapeTest, MangledIdentifiersAreSafeAndDistinct) {
  std::vector<std::string> names = {"user",
                                    "class",
                                    "int",
                                    "x_y",
                                    "x_",
                                    "_a",
                                    "a__b",
                                    "main",
                                    "std",
                                    "a_",
                                    "Click",
                                    "x_5f",
                                    "x__",
                                    "new",
                                    "delete",
                                    "a b",
                                    "\xC3\xA9t\xC3\xA9",
                                    "P",
                                    "rec",
                                    "f_user",
                                    "f_",
                                    "f__user",
                                    "int64_t",
                                    "stdin"};
  std::set<std::string> seen;
  for (const std::string& n : names) {
    std::string m = MangleIdent(n);
    EXPECT_TRUE(seen.insert(m).second) << n << " collides as " << m;
    ASSERT_FALSE(m.empty());
    EXPECT_TRUE(std::isalpha(static_cast<unsigned char>(m[0]))) << m;
    EXPECT_EQ(m.find("__"), std::string::npos) << m;
    for (char ch : m) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_') << m;
  }
  // Every name gets a prefix, keyword or not: names of types and macros are no list's to know.
  EXPECT_EQ(MangleIdent("user"), "f_user");
  EXPECT_EQ(MangleIdent("class"), "f_class");
  EXPECT_EQ(MangleIdent("int64_t"), "f_int64_t");
  EXPECT_EQ(MangleIdent("EXIT_FAILURE"), "f_EXIT_FAILURE");
  EXPECT_EQ(MangleIdent("a__b").rfind("x_", 0), 0u);
}

}  // namespace
}  // namespace flow::codegen
