#pragma once
// An accumulator's aggregates stored by name, so that a savepoint restores into a script that
// added or removed aggregates (checkpoint/state_schema.h): u32 count, then count x
// { u32 tag, u32 length, bytes }, the tag a hash of the aggregate's name that flowc computes.
// Reading skips an unknown tag (a removed aggregate); an aggregate without an entry (an added
// one) keeps its empty state. Tags are unique within an accumulator (flowc checks).

#include <cstdint>
#include <string_view>

#include "flow/runtime/common/serde.h"
#include "flow/runtime/common/status.h"

namespace flow::exec {

// Writes one entry: `write(BinaryWriter&)` serializes the aggregate.
template <typename Write>
void PutTagged(::flow::rt::BinaryWriter& w, uint32_t tag, Write&& write) {
  w.PutU32(tag);
  const size_t at = w.size();
  w.PutU32(0);
  write(w);
  w.PatchU32(at, static_cast<uint32_t>(w.size() - at - sizeof(uint32_t)));
}

// Calls `read(tag, BinaryReader&)` (returning Status) for each entry, the reader over its bytes.
template <typename Read>
::flow::rt::Status ReadTagged(::flow::rt::BinaryReader& r, Read&& read) {
  uint32_t n = 0;
  FLOW_RETURN_IF_ERROR(r.GetU32(&n));
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t tag = 0;
    uint32_t length = 0;
    std::string_view bytes;
    FLOW_RETURN_IF_ERROR(r.GetU32(&tag));
    FLOW_RETURN_IF_ERROR(r.GetU32(&length));
    FLOW_RETURN_IF_ERROR(r.GetBytes(length, &bytes));
    ::flow::rt::BinaryReader entry(bytes);
    FLOW_RETURN_IF_ERROR(read(tag, entry));
  }
  return ::flow::rt::Status::Ok();
}

}  // namespace flow::exec
