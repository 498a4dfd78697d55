#include "types/cpp_type.h"

#include <gtest/gtest.h>

namespace flow::types {
namespace {

std::string Rec(const Type& record) {
  return "rec::" + record.record_name();
}

TEST(CppType, Scalars) {
  EXPECT_EQ(CppType(Type::Bool(), nullptr), "bool");
  EXPECT_EQ(CppType(Type::Int(), nullptr), "int64_t");
  EXPECT_EQ(CppType(Type::Timestamp(), nullptr), "int64_t");
  EXPECT_EQ(CppType(Type::Duration(), nullptr), "int64_t");
  EXPECT_EQ(CppType(Type::Float(), nullptr), "double");
  EXPECT_EQ(CppType(Type::String(), nullptr), "std::string");
  EXPECT_EQ(CppType(Type::Bytes(), nullptr), "std::string");
  EXPECT_EQ(CppType(Type::Error(), nullptr), "void");
}

TEST(CppType, NullableAndLists) {
  EXPECT_EQ(CppType(Type::Timestamp().AsNullable(), nullptr), "std::optional<int64_t>");
  EXPECT_EQ(CppType(Type::List(Type::String().AsNullable()), nullptr),
            "std::vector<std::optional<std::string>>");
  EXPECT_EQ(CppType(Type::List(Type::Int()).AsNullable(), nullptr),
            "std::optional<std::vector<int64_t>>");
}

TEST(CppType, TheNullLiteralsTypeIsANullBool) {
  // What generated code writes for an untyped null, nullable-marked or not.
  EXPECT_EQ(CppType(Type::Null(), nullptr), "std::optional<bool>");
  EXPECT_EQ(CppType(Type::Null().AsNullable(), nullptr), "std::optional<bool>");
  EXPECT_EQ(CppType(Type::List(Type::Null()), nullptr), "std::vector<std::optional<bool>>");
}

TEST(CppType, RecordsAreNamedByTheCaller) {
  Type click = Type::Record("Click", {Field{"user", Type::String()}});
  EXPECT_EQ(CppType(click, Rec), "rec::Click");
  EXPECT_EQ(CppType(click.AsNullable(), Rec), "std::optional<rec::Click>");
  EXPECT_EQ(CppType(Type::List(click), Rec), "std::vector<rec::Click>");
  // The namer sees the record itself, not the list or the nullable around it.
  int calls = 0;
  auto count = [&calls](const Type& r) {
    ++calls;
    EXPECT_EQ(r.kind(), Kind::kRecord);
    return std::string("X");
  };
  EXPECT_EQ(CppType(Type::List(click.AsNullable()), count), "std::vector<std::optional<X>>");
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace flow::types
