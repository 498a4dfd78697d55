#pragma once
// The C++ type that generated code holds a Flow value in: the one mapping, used for record struct
// members, casts and typed nulls (codegen/records.h) and for the `{T}` of a stdlib function's C++
// template (stdlib/registry/registry.h).
//
//   bool -> bool            int, timestamp, duration -> int64_t (timestamps and durations in ms)
//   float -> double         string, bytes -> std::string
//   list<E> -> std::vector<E'>                nullable T -> std::optional<T'>
//   a record -> the generated struct, named by `record_name` (the code generator's `rec::Name`)
//   the type of the literal `null` -> std::optional<bool>: generated code spells an untyped null
//     as a null bool, whether the type is marked nullable or not
//   Error -> void

#include <functional>
#include <string>

#include "types/type.h"

namespace flow::types {

// Names the generated struct of a record type. May be empty when no record can occur (e.g. the
// stdlib's tests of scalar functions); a record then maps to void.
using CppRecordNamer = std::function<std::string(const Type& record)>;

std::string CppType(const Type& type, const CppRecordNamer& record_name);

}  // namespace flow::types
