#pragma once
// Restoring a checkpoint or savepoint into a changed script (docs/operations.md, "Upgrading a
// job"): state is mapped by operator name, and each operator's state schema
// (checkpoint/state_schema.h) decides whether its state carries over.
//
//   kept      same name, same schema: restored as it was
//   migrated  same name, aggregates added or removed: restored, added ones start empty
//   new       a stateful operator the checkpoint does not have: starts empty
//   dropped   removed from the script, or changed so its state cannot carry over, with
//             --allow-dropped-state: not restored (a changed operator starts empty)
//   refused   the same without the flag: the restore is refused (exit 2) naming each one
//
// Only when both the job and the checkpoint carry schemas (jobs built by flowc); otherwise a
// restore needs the same graph (CheckCompatible's fingerprint rule).
//
// Threading: free functions, no shared state.

#include <string>
#include <string_view>
#include <vector>

#include "flow/runtime/checkpoint/checkpoint_metadata.h"
#include "flow/runtime/common/status.h"

namespace flow::rt {

struct StateMapping {
  std::vector<std::string> kept;          // operator names
  std::vector<std::string> migrated;      // "'name': aggregate `x` added: starts empty"
  std::vector<std::string> fresh;         // operator names
  std::vector<std::string> dropped;       // "'name': removed from the script"
  std::vector<std::string> refused;       // as dropped, without --allow-dropped-state
  std::vector<std::string> not_restored;  // names whose snapshots must not be restored
};

StateMapping MapRestoredState(const CheckpointMetadata& m, const JobCheckpointInfo& job);

// InvalidArgument listing what is refused, with what to do about it; OK when nothing is.
[[nodiscard]] Status StateMappingStatus(const StateMapping& mapping, std::string_view where);

// Removes the snapshots of mapping.not_restored from `m`, so their operators start empty.
void DropUnmappedState(const StateMapping& mapping, CheckpointMetadata* m);

// "kept 3, migrated 1 ('x.window': aggregate `n` added: starts empty), new 0, dropped 0".
std::string DescribeStateMapping(const StateMapping& mapping);

}  // namespace flow::rt
