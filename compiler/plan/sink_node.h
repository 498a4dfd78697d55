#pragma once
// `| into <connector> format <format>`: the end of a sink pipeline.
//
// `delivery` is the guarantee the script asked for; codegen passes it to the sink factory, which
// is where a transactional (exactly-once) sink plugs in. The message key (used by sinks that have
// keys: Kafka) is the stream's key: `key_fields` when the record carries it in fields (after a
// keyed aggregate, kept by later `where`/`select`), or `key_by` when the sink directly follows
// `key by` (and `where`s): its expressions evaluated on the sink's record. Neither: no key.
//
// A late sink (`window ... on late into ...`, `late`) reads the late records of its input, a
// WindowAggregateNode: a side output of the window's input records, not its results. Its output
// type is the window's input type, and its key the window's `key by`.

#include <string>
#include <vector>

#include "ast/pipeline.h"
#include "plan/node.h"

namespace flow::plan {

struct Plan;

struct SinkNode : Node {
  static constexpr NodeKind kKind = NodeKind::kSink;
  SinkNode() : Node(kKind) {}
  std::string Describe() const override;

  const ast::IntoOp* into = nullptr;
  ast::Delivery delivery = ast::Delivery::kAtLeastOnce;
  std::vector<std::string> key_fields;   // record fields that form the key, in key order
  const ast::KeyByOp* key_by = nullptr;  // or the `key by` whose expressions form it
  bool late = false;                     // reads its window's late records
};

// What of `into` flowc build cannot do yet (empty when all is supported); *where is set to it.
std::string UnsupportedSink(const ast::IntoOp& into, diag::SourceRange* where);
// Sets sink->key_fields / key_by from the nodes before the sink (the sink must be in `plan`).
void ResolveSinkKey(const Plan& plan, SinkNode* sink);

}  // namespace flow::plan
