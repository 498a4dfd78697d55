#pragma once
// CommitGroup: exactly-once sinks whose output one external transaction commits atomically
// (docs/exactly-once.md, "Sinks behind one commit contract"). Kafka's is the job's one
// transactional producer (KafkaTransactionGroup); a sink that is not in a group is resumable
// (TwoPhaseCommitSink::CommitIsResumable, e.g. files) and commits on its own.
//
// The engine never knows a sink's type. Per job it:
//   1. starts one group for every sink whose spec names a CommitGroupSpec (all such sinks of a job
//      must name the same key: one transaction), before it picks the checkpoint to restore;
//   2. restores exactly group->last_committed() (0: fresh start): an older checkpoint would write
//      committed output again, a newer one lose output that was never committed;
//   3. makes each grouped sink subtask with `participant` (numbered 0..P-1 over all of them);
//   4. on "checkpoint N complete" calls group->Commit(N) once, before the resumable sinks' commits
//      (a crash after it is repaired by their Recover; the group's commit cannot be resumed).
//
// Threading: Commit is called by one thread at a time; participants may write concurrently.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "flow/runtime/checkpoint/coordinator.h"
#include "flow/runtime/common/status.h"
#include "flow/runtime/txn/two_phase_commit_sink.h"

namespace flow::rt {

// What the engine tells a group when it starts it.
struct CommitGroupContext {
  std::string job_id;                         // JobOptions::job_id ("" when the job has none)
  std::string instance;                       // JobOptions::instance ("" = one process)
  CheckpointOptions checkpoints;              // for timeouts that must outlive a checkpoint
  const std::atomic<bool>* cancel = nullptr;  // set when the job fails: stop waiting
  // JobOptions::kafka_properties: client settings the group's own properties override.
  const std::map<std::string, std::string>* kafka_properties = nullptr;
};

class CommitGroup {
 public:
  virtual ~CommitGroup() = default;  // aborts what is open (bounded), never commits
  // The checkpoint whose output the group committed last; 0 = none.
  virtual int64_t last_committed() const = 0;
  // Commits the output of every participant's epochs <= checkpoint_id atomically; idempotent.
  // kUnavailable after the group's retry bound, kFenced, kAborted: the job fails and restarts.
  [[nodiscard]] virtual Status Commit(int64_t checkpoint_id) = 0;
  // For logs and errors, e.g. "Kafka transactional id flow-clicks".
  virtual std::string Describe() const = 0;
};

struct CommitGroupSpec {
  // Sinks whose specs carry equal keys share one group; a job may have only one key.
  std::string key;
  // Starts the group for `participants` sink subtasks (fencing, aborting what an earlier process
  // left, reading last_committed). Errors end the job's start-up.
  std::function<Result<std::unique_ptr<CommitGroup>>(const CommitGroupContext&,
                                                     uint32_t participants)>
      start;
  // The sink of `participant` on the started group (the group outlives it).
  std::function<std::unique_ptr<TwoPhaseCommitSink>(CommitGroup* group, uint32_t participant)>
      participant;
};

}  // namespace flow::rt
