#include "flow/runtime/checkpoint/state_mapping.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "flow/runtime/checkpoint/state_schema.h"

namespace flow::rt {
namespace {

// Whether the checkpoint holds anything of `name`: a declared schema, a state file or a source
// position. An operator that kept nothing loses nothing when it is removed or changed.
bool HadState(const CheckpointMetadata& m, const OperatorParallelism& op) {
  if (!op.state_schema.empty()) return true;
  return std::any_of(m.snapshots.begin(), m.snapshots.end(), [&](const OperatorSnapshot& s) {
    return s.operator_name == op.name && (!s.files.empty() || !s.source_position.empty());
  });
}

const OperatorParallelism* Find(const std::vector<OperatorParallelism>& ops,
                                const std::string& name) {
  for (const OperatorParallelism& op : ops) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

}  // namespace

StateMapping MapRestoredState(const CheckpointMetadata& m, const JobCheckpointInfo& job) {
  StateMapping out;
  for (const OperatorParallelism& was : m.operators) {
    if (!HadState(m, was)) continue;
    const OperatorParallelism* now = Find(job.operators, was.name);
    std::string problem;
    if (now == nullptr) {
      problem = fmt::format("'{}': removed from the script", was.name);
    } else {
      StateSchemaDiff diff = DiffStateSchema(was.state_schema, now->state_schema);
      if (diff.compatible()) {
        if (diff.migrated.empty()) out.kept.push_back(was.name);
        for (const std::string& change : diff.migrated) {
          out.migrated.push_back(fmt::format("'{}': {}", was.name, change));
        }
        continue;
      }
      problem = fmt::format("'{}': its state cannot be carried over: {}", was.name,
                            fmt::join(diff.changed, ", "));
    }
    out.not_restored.push_back(was.name);
    (job.allow_dropped_state ? out.dropped : out.refused).push_back(std::move(problem));
  }
  for (const OperatorParallelism& now : job.operators) {
    if (!now.state_schema.empty() && Find(m.operators, now.name) == nullptr)
      out.fresh.push_back(now.name);
  }
  return out;
}

Status StateMappingStatus(const StateMapping& mapping, std::string_view where) {
  if (mapping.refused.empty()) return Status::Ok();
  return Status::InvalidArgument(fmt::format(
      "{}: the script changed in a way its state cannot follow: {}. Restore into the script that "
      "took it, or give --allow-dropped-state to drop that state (a changed operator then starts "
      "empty); `flowc compare-state OLD.flow NEW.flow` shows what carries over",
      where, fmt::join(mapping.refused, "; ")));
}

void DropUnmappedState(const StateMapping& mapping, CheckpointMetadata* m) {
  auto gone = [&](const std::string& name) {
    return std::find(mapping.not_restored.begin(), mapping.not_restored.end(), name) !=
           mapping.not_restored.end();
  };
  m->snapshots.erase(
      std::remove_if(m->snapshots.begin(), m->snapshots.end(),
                     [&](const OperatorSnapshot& s) { return gone(s.operator_name); }),
      m->snapshots.end());
  m->operators.erase(std::remove_if(m->operators.begin(), m->operators.end(),
                                    [&](const OperatorParallelism& op) { return gone(op.name); }),
                     m->operators.end());
}

std::string DescribeStateMapping(const StateMapping& mapping) {
  auto part = [](std::string_view what, const std::vector<std::string>& items) {
    return items.empty() ? fmt::format("{} 0", what)
                         : fmt::format("{} {} ({})", what, items.size(), fmt::join(items, "; "));
  };
  std::vector<std::string> fresh;
  for (const std::string& name : mapping.fresh) fresh.push_back("'" + name + "'");
  return fmt::format("kept {}, {}, {}, {}", mapping.kept.size(), part("migrated", mapping.migrated),
                     part("new", fresh), part("dropped", mapping.dropped));
}

}  // namespace flow::rt
