// Rescaling: which (file, key group) pieces each new subtask reads. The reference owner of a key
// group is computed here from the contiguous-range definition (subtask s of p owns
// [ceil(s*K/p), ceil((s+1)*K/p))), independently of the code under test.

#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "flow/runtime/checkpoint/recovery.h"

namespace flow::rt {
namespace {

uint32_t CeilDiv(uint64_t a, uint64_t b) {
  return static_cast<uint32_t>((a + b - 1) / b);
}

uint32_t ReferenceOwner(uint32_t g, uint32_t k, uint32_t p) {
  for (uint32_t s = 0; s < p; ++s) {
    if (g >= CeilDiv(uint64_t{s} * k, p) && g < CeilDiv(uint64_t{s + 1} * k, p)) return s;
  }
  ADD_FAILURE() << "no owner for group " << g;
  return 0;
}

// Operator "agg" snapshotted at parallelism `p` over `k` key groups; subtask s wrote "agg-s.snap".
CheckpointMetadata Taken(uint32_t p, uint32_t k) {
  CheckpointMetadata m;
  m.checkpoint_id = 5;
  m.max_parallelism = k;
  m.operators = {{"agg", p}};
  for (uint32_t s = 0; s < p; ++s) {
    OperatorSnapshot o;
    o.operator_name = "agg";
    o.subtask = s;
    o.key_group_first = CeilDiv(uint64_t{s} * k, p);
    o.key_group_end = CeilDiv(uint64_t{s + 1} * k, p);
    o.files = {{"agg-" + std::to_string(s) + ".snap", 1, 0, false}};
    m.snapshots.push_back(o);
  }
  // A source without keyed state is not part of the plan.
  OperatorSnapshot src;
  src.operator_name = "src";
  src.source_position = "p";
  m.snapshots.push_back(src);
  return m;
}

void CheckPlan(uint32_t old_p, uint32_t new_p, uint32_t k) {
  SCOPED_TRACE(std::to_string(old_p) + " -> " + std::to_string(new_p) + " over " +
               std::to_string(k));
  auto plan = PlanKeyedRestore(Taken(old_p, k), "agg", new_p);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ASSERT_EQ(plan->size(), new_p);
  std::set<uint32_t> seen;
  for (uint32_t s = 0; s < new_p; ++s) {
    uint32_t prev = 0;
    bool first = true;
    for (const RestorePiece& piece : (*plan)[s]) {
      EXPECT_EQ(ReferenceOwner(piece.key_group, k, new_p), s) << "group " << piece.key_group;
      uint32_t old_owner = ReferenceOwner(piece.key_group, k, old_p);
      EXPECT_EQ(piece.old_subtask, old_owner);
      EXPECT_EQ(piece.file.name, "agg-" + std::to_string(old_owner) + ".snap");
      EXPECT_TRUE(first || piece.key_group > prev) << "ordered by key group";
      prev = piece.key_group;
      first = false;
      EXPECT_TRUE(seen.insert(piece.key_group).second) << "group " << piece.key_group << " twice";
    }
  }
  EXPECT_EQ(seen.size(), k);  // every key group restored exactly once
}

TEST(PlanKeyedRestore, FourToTwo) {
  auto plan = PlanKeyedRestore(Taken(4, 128), "agg", 2);
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->size(), 2u);
  // Hand-checked: new subtask 0 reads groups 0..63 = old subtasks 0 and 1 (32 groups each).
  std::map<std::string, int> files0;
  for (const RestorePiece& p : (*plan)[0]) ++files0[p.file.name];
  EXPECT_EQ(files0, (std::map<std::string, int>{{"agg-0.snap", 32}, {"agg-1.snap", 32}}));
  std::map<std::string, int> files1;
  for (const RestorePiece& p : (*plan)[1]) ++files1[p.file.name];
  EXPECT_EQ(files1, (std::map<std::string, int>{{"agg-2.snap", 32}, {"agg-3.snap", 32}}));
  EXPECT_EQ((*plan)[1].front().key_group, 64u);
  CheckPlan(4, 2, 128);
}

TEST(PlanKeyedRestore, FourToEight) {
  auto plan = PlanKeyedRestore(Taken(4, 128), "agg", 8);
  ASSERT_TRUE(plan.ok());
  for (uint32_t s = 0; s < 8; ++s) {
    ASSERT_EQ((*plan)[s].size(), 16u);
    for (const RestorePiece& p : (*plan)[s])
      EXPECT_EQ(p.file.name, "agg-" + std::to_string(s / 2) + ".snap");
  }
  CheckPlan(4, 8, 128);
}

TEST(PlanKeyedRestore, UnevenParallelisms) {
  CheckPlan(3, 5, 128);
  CheckPlan(5, 3, 10);
  CheckPlan(7, 1, 128);
  CheckPlan(1, 128, 128);
  CheckPlan(4, 4, 128);
}

TEST(PlanKeyedRestore, SharedFilesTravelWithTheirKeyGroups) {
  CheckpointMetadata m = Taken(2, 8);
  m.snapshots[0].files.push_back({"sst-7", 1, 0, true});
  auto plan = PlanKeyedRestore(m, "agg", 1);
  ASSERT_TRUE(plan.ok());
  int shared = 0;
  for (const RestorePiece& p : (*plan)[0]) shared += p.file.shared ? 1 : 0;
  EXPECT_EQ(shared, 4);  // the four key groups of old subtask 0
}

TEST(PlanKeyedRestore, NonKeyedOperatorGivesEmptyLists) {
  auto plan = PlanKeyedRestore(Taken(2, 128), "src", 3);
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->size(), 3u);
  for (const auto& l : *plan) EXPECT_TRUE(l.empty());
}

TEST(PlanKeyedRestore, Errors) {
  EXPECT_EQ(PlanKeyedRestore(Taken(2, 128), "agg", 0).status().code(),
            StatusCode::kInvalidArgument);
  auto too_many = PlanKeyedRestore(Taken(2, 16), "agg", 17);
  EXPECT_NE(too_many.status().message().find("must be in 1..16"), std::string::npos);
  CheckpointMetadata gap = Taken(4, 128);
  gap.snapshots.erase(gap.snapshots.begin() + 2);
  auto g = PlanKeyedRestore(gap, "agg", 2);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("key group 64 of agg is in no snapshot"), std::string::npos)
      << g.status().message();
  CheckpointMetadata overlap = Taken(2, 128);
  overlap.snapshots[1].key_group_first = 60;
  auto o = PlanKeyedRestore(overlap, "agg", 2);
  ASSERT_FALSE(o.ok());
  EXPECT_NE(
      o.status().message().find("key group 60 of agg is in the snapshots of subtasks 0 and 1"),
      std::string::npos)
      << o.status().message();
}

}  // namespace
}  // namespace flow::rt
