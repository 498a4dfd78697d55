#pragma once
// Fault injection: named points in the checkpoint, restore, commit and processing paths where a
// test can make the process die abruptly (SIGKILL to itself: no cleanup, no destructors, no
// buffered output flushed), to prove that recovery handles whatever was left on disk or in Kafka,
// or (error kind) make the task fail with a retriable Status, to test in-process restarts.
//
// Configure with FLOW_FAULT (ConfigureFaultsFromEnv) or ConfigureFaults, a comma-separated list:
//   [error:]point[:arg...][:nth]
// A point has a fixed number of arguments (below); `*` matches any value. `nth` (default 1)
// kills on the nth matching hit. With the `error:` prefix the nth hit instead returns
// kUnavailable ("fault injection: error at ..."), which fails the task and, with a state dir and
// --restart-attempts, restarts the job in-process; only points marked [error] accept it. Each
// entry fires once: hits are counted per entry over the life of the process (across in-process
// restarts), so `error:P:1,error:P:2` fails two consecutive hits of P (name a subtask to make them
// fall in consecutive attempts of a parallel job). Points:
//   after-barrier:<checkpoint>:<operator>   a task forwarded barrier <checkpoint> (engine)
//   during-snapshot-write                   half of a snapshot file written, not yet synced
//   after-state-before-metadata             all task snapshots acked, metadata not yet written
//   after-metadata                          metadata durable, retention not yet applied
//   during-restore                          reading a snapshot file for a restore
//   after-precommit                         a 2PC sink pre-committed (later: Kafka sink)
//   during-commit                           a 2PC sink is committing (later: Kafka sink)
//   after-commit-before-cleanup             a 2PC sink committed, bookkeeping not yet done
//   before-batch:<operator>:<subtask>  [error]  an operator or sink subtask is about to take a
//   batch
// `random:<seed>` picks one checkpoint-path point (every point above before-batch; arguments `*`)
// and an nth in 1..3 from the seed, so a crash test can explore points reproducibly;
// DescribeFaults() tells which was chosen.
//
// Cost when nothing is configured: one relaxed atomic load per FaultPoint call (inline).
// Threading: all functions are thread-safe. Configure before starting the job.

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "flow/runtime/common/status.h"

namespace flow::rt {

namespace fault_detail {
extern std::atomic<bool> g_armed;
void Hit(std::string_view point, std::string_view arg1, std::string_view arg2);
void Hit(std::string_view point, int64_t checkpoint, std::string_view op);
Status HitStatus(std::string_view point, std::string_view arg1, std::string_view arg2);
}  // namespace fault_detail

inline bool FaultsArmed() {
  return fault_detail::g_armed.load(std::memory_order_relaxed);
}

// Marks a fault point; dies here when a configured entry matches for the nth time.
inline void FaultPoint(std::string_view point) {
  if (FaultsArmed()) fault_detail::Hit(point, {}, {});
}
inline void FaultPoint(std::string_view point, int64_t checkpoint, std::string_view op) {
  if (FaultsArmed()) fault_detail::Hit(point, checkpoint, op);
}

// Points that accept `error:` are hit through FaultPointStatus: dies for a kill entry, returns the
// injected error for an error entry, Ok otherwise.
[[nodiscard]] inline Status FaultPointStatus(std::string_view point, std::string_view op,
                                             uint32_t subtask) {
  if (!FaultsArmed()) return Status::Ok();
  return fault_detail::HitStatus(point, op, std::to_string(subtask));
}

struct FaultPointInfo {
  std::string_view name;
  int args;             // number of ':'-separated arguments after the name
  bool errors = false;  // accepts the error: kind
  bool random = true;   // random:<seed> may pick it
};
const std::vector<FaultPointInfo>& KnownFaultPoints();

// Replaces the configuration; "" disarms. InvalidArgument naming the bad entry: unknown point,
// wrong argument count, nth not a positive integer, bad seed, error: on a point without [error].
[[nodiscard]] Status ConfigureFaults(std::string_view spec);
// ConfigureFaults(getenv("FLOW_FAULT")); unset or empty disarms.
[[nodiscard]] Status ConfigureFaultsFromEnv();
void DisarmFaults();
// The active entries, normalised ("after-metadata:1,error:before-batch:window:*:2"); "" when
// disarmed.
std::string DescribeFaults();

}  // namespace flow::rt
