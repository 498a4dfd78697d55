#pragma once
// Which records `format protobuf` can carry (formats/protobuf.h has the mapping of Flow types):
// field names must be Protobuf identifiers, repeated fields cannot nest (no list of lists), and a
// sink cannot write a list with nullable elements (repeated fields hold no nulls). The checker
// reports these (check_protobuf.cpp); the code generator relies on it.

#include <string>

#include "types/type.h"

namespace flow::sema {

// Why `f` (and the records inside it) cannot be read, or with `sink` written, as Protobuf; ""
// when it can.
std::string ProtobufFieldProblem(const types::Field& f, bool sink);

// Reads the .proto of `format protobuf(proto: path)`: `path` is relative to the folder of
// `script` (the script's file name as given to flowc). False with `error` naming the file.
bool ReadProtoFile(const std::string& script, const std::string& path, std::string* text,
                   std::string* error);

}  // namespace flow::sema
