#pragma once
// `a | join b on a.k == b.k [and ...] within D | window ...`: an inner equi-join of two streams.
// inputs[0] is the left stream, inputs[1] the right; both are hash-partitioned by their side's
// key expressions (left_keys[i] pairs with right_keys[i]).
//
// Output: a join pair, JoinPairType(left, right): {left, right, window_start, window_end}, so the
// operators after the join read both sides by name without copying them into one record (the
// window bounds are 0 for an interval join). Where the merged record sema gives the join is
// needed (a sink, a union, a stream read elsewhere, `select *`), lowering adds a chain step whose
// op is the JoinOp: it flattens the pair into that record.

#include <memory>
#include <string>
#include <vector>

#include "ast/pipeline.h"
#include "plan/node.h"

namespace flow::plan {

struct JoinNode : Node {
  static constexpr NodeKind kKind = NodeKind::kJoin;
  JoinNode() : Node(kKind) {}
  std::string Describe() const override;

  const ast::JoinOp* op = nullptr;
  std::vector<const ast::Expr*> left_keys;   // read the left record only
  std::vector<const ast::Expr*> right_keys;  // read the right record only
  types::Type left;                          // the record types of the two inputs
  types::Type right;
};

// The record a JoinNode emits: the two matched records under these names, then window_start and
// window_end.
inline constexpr const char* kJoinPairLeft = "left";
inline constexpr const char* kJoinPairRight = "right";
types::Type JoinPairType(const types::Type& left, const types::Type& right);
// True for a JoinPairType record.
bool IsJoinPair(const types::Type& type);

}  // namespace flow::plan

namespace flow::plan {

// The join node for `op` between inputs of types `left` and `right` (not added to a plan; inputs
// and ids are the caller's). On a construct flowc build does not support, returns null and sets
// `*error` ("session-window joins") and `*range`.
std::unique_ptr<JoinNode> MakeJoinNode(const ast::JoinOp& op, const types::Type& left,
                                       const types::Type& right, std::string* error,
                                       diag::SourceRange* range);

}  // namespace flow::plan
