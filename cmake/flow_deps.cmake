# Every dependency comes from a Debian 12 package; scripts/setup installs them.
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
find_package(fmt REQUIRED)
find_package(simdjson REQUIRED)
# howardhinnant-date's tz library: time zones of the system's tzdata (stdlib/src/time_zone.cpp).
find_package(date REQUIRED CONFIG)
find_package(RocksDB REQUIRED CONFIG)
pkg_check_modules(RDKAFKA REQUIRED IMPORTED_TARGET rdkafka)
# The job's HTTP endpoints (engine/metrics_server.cpp).
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
# Abseil's flat hash containers: the state tables' inner maps and timer sets (state/map_state.h).
pkg_check_modules(ABSL REQUIRED IMPORTED_TARGET absl_flat_hash_map absl_flat_hash_set)
# libprotobuf: the .proto parser and descriptors behind `format protobuf` (formats/protobuf_schema.h).
pkg_check_modules(PROTOBUF REQUIRED IMPORTED_TARGET protobuf)
# flowc's cache keys and precompiled-header checksums (XXH3).
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
find_package(antlr4-runtime REQUIRED)
find_package(antlr4-generator REQUIRED)
if(FLOW_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
