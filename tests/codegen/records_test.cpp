// Record codecs with wire names: the generated field table holds each field's wire name as a C++
// literal (any bytes, escaped by CppStringLiteral), structs keep the script names, and records
// that differ only in wire names get codecs of their own.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codegen/escape.h"
#include "codegen/records.h"

namespace flow::codegen {
namespace {

types::Type Hostile() {
  return types::Type::Record(
      "", {types::Field{"user_id", types::Type::String(), "user-id"},
           types::Field{"ts", types::Type::Timestamp(), "@timestamp"},
           types::Field{"q", types::Type::Int(), "say \"hi\" \\ */ ?\?= \n\"); abort(); (\""},
           types::Field{"prenom", types::Type::String().AsNullable(), "pr\xc3\xa9nom"},
           types::Field{"plain", types::Type::Int()}});
}

TEST(RecordCodecs, FieldTableHoldsEscapedWireNames) {
  RecordTypes records;
  std::string name = records.Register(Hostile(), "Out");
  Writer w("job.flow", "job.cpp");
  records.EmitStructs(w);
  records.EmitJsonCodecs(w);
  const std::string& cpp = w.text();
  std::string names;
  types::Type hostile = Hostile();
  for (const types::Field& f : hostile.fields()) {
    names += (names.empty() ? "" : ", ") + CppStringLiteral(f.Wire());
  }
  EXPECT_NE(cpp.find("JsonFieldTable<5> kFields" + name + "{{" + names + "}"), std::string::npos)
      << cpp;
  // Members are named by (mangled) script names; no wire name appears outside a literal or
  // comment.
  EXPECT_NE(cpp.find(" " + MangleIdent("user_id") + "{};"), std::string::npos) << cpp;
  EXPECT_NE(cpp.find(" " + MangleIdent("plain") + "{};"), std::string::npos) << cpp;
  EXPECT_EQ(cpp.find("\n\"); abort"), std::string::npos)
      << "a raw line break or quote in the literal";
  EXPECT_EQ(cpp.find("\xc3\xa9"), std::string::npos) << "non-ASCII bytes are escaped";
}

TEST(RecordCodecs, WireNamesAreOnlyInTheTable) {
  RecordTypes records;
  records.Register(Hostile(), "Out");
  Writer w("job.flow", "job.cpp");
  records.EmitJsonCodecs(w);
  // Read and Write refer to the table, so each wire name is written once.
  const std::string& cpp = w.text();
  std::string lit = CppStringLiteral("user-id");
  size_t first = cpp.find(lit);
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(cpp.find(lit, first + 1), std::string::npos) << cpp;
}

TEST(RecordCodecs, RecordsDifferingOnlyInWireNamesGetTheirOwnCodec) {
  auto with_wire = [](std::string wire) {
    return types::Type::Record("", {types::Field{"a", types::Type::Int(), std::move(wire)}});
  };
  RecordTypes records;
  std::string plain = records.Register(with_wire(""), "Out");
  std::string dashed = records.Register(with_wire("a-b"), "Out");
  EXPECT_NE(plain, dashed);
  EXPECT_EQ(records.Register(with_wire("a-b"), "Out"), dashed);
  EXPECT_NE(with_wire(""), with_wire("a-b"));
  EXPECT_EQ(with_wire(""), with_wire("a"));  // a wire name equal to the name is no wire name
}

}  // namespace
}  // namespace flow::codegen
