// An accumulator's aggregates stored by tag (exec/tagged.h): what lets a savepoint restore into a
// script that added or removed aggregates.

#include "flow/runtime/exec/tagged.h"

#include <gtest/gtest.h>

namespace flow::exec {
namespace {

using rt::BinaryReader;
using rt::BinaryWriter;
using rt::Status;

// Two aggregates as generated code writes them: a count (i64) and a name (string).
struct Old {
  int64_t count = 0;
  std::string name;
  void Serialize(BinaryWriter& w) const {
    w.PutU32(2);
    PutTagged(w, 11, [&](BinaryWriter& x) { x.PutI64(count); });
    PutTagged(w, 22, [&](BinaryWriter& x) { x.PutString(name); });
  }
};

// The script changed: the name was removed, a sum (tag 33) added.
struct New {
  int64_t count = 0;
  int64_t sum = 0;
  Status Deserialize(BinaryReader& r) {
    return ReadTagged(r, [&](uint32_t tag, BinaryReader& x) -> Status {
      switch (tag) {
        case 11:
          return x.GetI64(&count);
        case 33:
          return x.GetI64(&sum);
        default:
          return Status::Ok();
      }
    });
  }
};

TEST(Tagged, KnownTagsAreReadUnknownSkippedMissingKeepTheirEmptyState) {
  BinaryWriter w;
  Old{42, "a long name that must be skipped whole"}.Serialize(w);
  w.PutU8(7);  // what follows the accumulator in the same buffer
  BinaryReader r(w.data());
  New n;
  ASSERT_TRUE(n.Deserialize(r).ok());
  EXPECT_EQ(n.count, 42);
  EXPECT_EQ(n.sum, 0);
  uint8_t after = 0;
  ASSERT_TRUE(r.GetU8(&after).ok());
  EXPECT_EQ(after, 7);
  EXPECT_TRUE(r.AtEnd());
}

TEST(Tagged, TruncatedEntriesAreCorruption) {
  BinaryWriter w;
  Old{1, "xyz"}.Serialize(w);
  for (size_t cut : {size_t{2}, size_t{9}, w.size() - 1}) {
    BinaryReader r(std::string_view(w.data()).substr(0, cut));
    New n;
    EXPECT_EQ(n.Deserialize(r).code(), rt::StatusCode::kCorruption) << "cut at " << cut;
  }
}

}  // namespace
}  // namespace flow::exec
