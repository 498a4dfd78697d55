// Job's checks and walks for --instance (docs/deploy.md): which plans several instances of a job
// can run, and the forward path a repartition sink reports the progress of.

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "flow/runtime/engine/job.h"

namespace flow::rt {

// Instances share the job's input by Kafka partition. Records keep to their partition's instance
// through forward and rebalance edges. A key-by crosses instances only behind a repartition
// topic's reader (shuffle_key_by.h: every record arrives in the partition of its key group), and
// an operator with state keeps it per key group only when every input is such a key-by; a
// broadcast, a key-by elsewhere, or a two-input operator (a join runs behind one topic as a
// one-input operator, shuffle_join.h) would need records of other instances.
Status Job::CheckInstancePlan() const {
  if (options_.instance.empty()) return Status::Ok();
  auto shuffled = [this](const engine_detail::EdgeBase& e) {
    return e.kind == Partitioning::kHash && nodes_[e.from]->shuffle_reader;
  };
  for (const auto& e : edges_) {
    const auto& down = *nodes_[e->to];
    const bool local = e->kind == Partitioning::kForward || e->kind == Partitioning::kRebalance ||
                       e->kind == Partitioning::kDefault;
    if (local || shuffled(*e)) continue;
    return Status::InvalidArgument(fmt::format(
        "--instance {}: operator '{}' needs records from every partition of its input ({}), and "
        "instances of a job read disjoint partitions; a key-by reaches other instances only "
        "through a repartition topic (flowc builds one for windows, aggregates and joins; "
        "docs/deploy.md). Run it as one process without --instance",
        options_.instance, down.name,
        e->kind == Partitioning::kHash ? "a key-by exchange" : "a broadcast"));
  }
  for (const auto& node : nodes_) {
    if (node->Stateless()) continue;
    bool joined = false, keyed = !node->in_edges.empty();
    for (int in : node->in_edges) {
      joined = joined || edges_[in]->input_index != 0;
      keyed = keyed && shuffled(*edges_[in]);
    }
    if (keyed && !joined) continue;
    return Status::InvalidArgument(fmt::format(
        "--instance {}: operator '{}' keeps state across records, and each instance would keep its "
        "own for the partitions it reads; {} (docs/deploy.md). Run it as one process without "
        "--instance",
        options_.instance, node->name,
        joined ? "a join's state moves with its keys only when both sides reach it through one "
                 "repartition topic (JoinAcrossInstances, engine/shuffle_join.h)"
               : "only state behind a key-by through a repartition topic moves with its keys"));
  }
  return Status::Ok();
}

Result<ForwardOrigins> Job::ForwardSourcesOf(int node, std::string_view what) const {
  std::vector<bool> source(nodes_.size(), false), reader(nodes_.size(), false);
  std::vector<bool> seen(nodes_.size(), false);
  std::vector<int> stack = {node};
  while (!stack.empty()) {
    const int v = stack.back();
    stack.pop_back();
    if (seen[v]) continue;
    seen[v] = true;
    const auto& n = *nodes_[v];
    // Records straight from a reader, not through its key-by's keyed operator: the writer would
    // see one reader subtask's partitions, whose key groups no keyed subtask's range matches.
    auto straight_from = [&](const engine_detail::NodeBase& r) {
      return Status::InvalidArgument(fmt::format(
          "{}: its input comes straight from '{}', the reader of another key-by's repartition "
          "topic, without the keyed operator that reader feeds; key by once, or put the keyed "
          "operator between (docs/deploy.md)",
          what, r.name));
    };
    if (n.shuffle_reader) return straight_from(n);
    if (n.is_source) source[v] = true;
    for (int in : n.in_edges) {
      const auto& e = *edges_[in];
      const auto& up = *nodes_[e.from];
      if (up.shuffle_reader) {
        // A second key-by: `n` is the keyed operator behind the first one's reader, and what it
        // emits is by the key groups of its subtask's range.
        if (e.kind != Partitioning::kHash) return straight_from(up);
        reader[e.from] = true;
        continue;
      }
      const bool forward = e.kind == Partitioning::kForward ||
                           (e.kind == Partitioning::kDefault && up.parallelism == n.parallelism);
      if (!forward) {
        const std::string how =
            e.kind == Partitioning::kHash        ? "is a key-by"
            : e.kind == Partitioning::kBroadcast ? "is a broadcast"
            : e.kind == Partitioning::kRebalance
                ? "is a rebalance"
                : fmt::format("goes from {} to {} subtasks", up.parallelism, n.parallelism);
        return Status::InvalidArgument(fmt::format(
            "{}: the edge '{}' -> '{}' {}; under --instance every step in front of a key-by must "
            "keep its source's records and parallelism (docs/deploy.md)",
            what, up.name, n.name, how));
      }
      stack.push_back(e.from);
    }
  }
  // Graph order: names do not depend on how the walk went.
  ForwardOrigins origins;
  for (size_t v = 0; v < nodes_.size(); ++v) {
    if (source[v]) origins.sources.push_back(nodes_[v]->name);
    if (reader[v]) origins.readers.push_back(nodes_[v]->name);
  }
  return origins;
}

}  // namespace flow::rt
