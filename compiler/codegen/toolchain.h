#pragma once
// Where the runtime of this build lives, known from CMake (codegen.cmake generates the definition):
// the C++ compiler, include directories, the runtime's static libraries and their link
// dependencies. `flowc build` and `flowc emit-cpp` use it; no flags are needed from the user.

#include <string>
#include <vector>

namespace flow::codegen {

struct Toolchain {
  std::string cxx;                        // the compiler CMake used
  std::vector<std::string> include_dirs;  // runtime + stdlib headers
  std::vector<std::string> libraries;     // runtime static libraries (full paths)
  std::vector<std::string> link_deps;     // fmt, simdjson, rdkafka, rocksdb, pthread
  std::vector<std::string> link_flags;    // e.g. -fuse-ld=gold when CMake found it working
  std::string version;                    // project version, part of the build-cache key
};

const Toolchain& BuiltToolchain();

}  // namespace flow::codegen
