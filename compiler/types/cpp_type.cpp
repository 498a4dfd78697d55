#include "types/cpp_type.h"

#include <cassert>

namespace flow::types {

std::string CppType(const Type& type, const CppRecordNamer& record_name) {
  std::string base;
  switch (type.kind()) {
    case Kind::kBool:
      base = "bool";
      break;
    case Kind::kInt:
    case Kind::kTimestamp:
    case Kind::kDuration:
      base = "int64_t";
      break;
    case Kind::kFloat:
      base = "double";
      break;
    case Kind::kString:
    case Kind::kBytes:
      base = "std::string";
      break;
    case Kind::kList:
      base = "std::vector<" + CppType(type.element(), record_name) + ">";
      break;
    case Kind::kRecord:
      assert(record_name && "a record type without a namer for generated structs");
      base = record_name ? record_name(type) : "void";
      break;
    case Kind::kNull:
      return "std::optional<bool>";
    case Kind::kError:
      base = "void";
      break;
  }
  return type.nullable() ? "std::optional<" + base + ">" : base;
}

}  // namespace flow::types
