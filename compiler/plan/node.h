#pragma once
// flow::plan: the logical plan of one job, a DAG lowered from sema::CheckedProgram. Nodes point
// into the checked AST (which outlives the plan) for expressions and keep the .flow source range
// they came from. Each node kind has its own header; Describe() gives a one-line summary for
// plan printing (`flowc explain`).

#include <memory>
#include <string>
#include <vector>

#include "diag/source_range.h"
#include "types/type.h"

namespace flow::plan {

enum class NodeKind {
  kSource,
  kChain,
  kKeyBy,
  kWindowAggregate,
  kRunningAggregate,
  kUnion,
  kJoin,
  kPrune,
  kSink
};

const char* KindName(NodeKind kind);

struct Node {
  explicit Node(NodeKind k) : kind(k) {}
  virtual ~Node() = default;
  virtual std::string Describe() const = 0;

  NodeKind kind;
  int id = -1;
  std::vector<int> inputs;  // node ids, in input order
  types::Type output;       // the record type this node emits
  diag::SourceRange range;  // where in the .flow file it comes from
  std::string stream;       // the stream (or sink pipeline) it belongs to, for names
  // Earlier nodes of the same kind in the same stream (RunPasses numbers them): the second window
  // of a stream is `s.window2`, so runtime names (and the state they key) never collide.
  int ordinal = 0;
};

template <class T>
T* As(Node* n) {
  return n && n->kind == T::kKind ? static_cast<T*>(n) : nullptr;
}
template <class T>
const T* As(const Node* n) {
  return n && n->kind == T::kKind ? static_cast<const T*>(n) : nullptr;
}

}  // namespace flow::plan
