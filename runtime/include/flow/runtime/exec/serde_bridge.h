#pragma once
// Workaround: flow::fn::WriteValue/ReadValue (stdlib/value_serde.h) call WriteValue/ReadValue
// unqualified; with state/serializer.h in the same translation unit, argument-dependent lookup
// also finds the flow::rt templates of the same name and the call is ambiguous. These non-template
// overloads win over both templates for the primitive types. They write exactly what both
// templates write (Serializer<T>: PutI64 / PutF64 / PutBool / PutString), so no encoding changes.
// Remove once the stdlib qualifies its recursive calls.

#include <cstdint>
#include <string>

#include "flow/runtime/state/serializer.h"

namespace flow::rt {

inline void WriteValue(BinaryWriter& w, const int64_t& v) {
  Serializer<int64_t>::Write(w, v);
}
inline void WriteValue(BinaryWriter& w, const double& v) {
  Serializer<double>::Write(w, v);
}
inline void WriteValue(BinaryWriter& w, const bool& v) {
  Serializer<bool>::Write(w, v);
}
inline void WriteValue(BinaryWriter& w, const std::string& v) {
  Serializer<std::string>::Write(w, v);
}
[[nodiscard]] inline Status ReadValue(BinaryReader& r, int64_t* v) {
  return Serializer<int64_t>::Read(r, v);
}
[[nodiscard]] inline Status ReadValue(BinaryReader& r, double* v) {
  return Serializer<double>::Read(r, v);
}
[[nodiscard]] inline Status ReadValue(BinaryReader& r, bool* v) {
  return Serializer<bool>::Read(r, v);
}
[[nodiscard]] inline Status ReadValue(BinaryReader& r, std::string* v) {
  return Serializer<std::string>::Read(r, v);
}

}  // namespace flow::rt
