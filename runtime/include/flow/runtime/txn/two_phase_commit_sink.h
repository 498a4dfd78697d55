#pragma once
// TwoPhaseCommitSink: the contract of an exactly-once sink subtask, driven by the checkpoint
// protocol (docs/exactly-once.md, docs/checkpoints.md). A user-written sink can implement it.
//
// Life of one instance (one sink subtask of one incarnation of the job):
//   Open(subtask, parallelism)
//   Recover(restored checkpoint id)   -- always, also on a fresh start (0)
//   BeginTransaction()
//   repeat:
//     Write(...)*                       -- records of the current epoch
//     PreCommit(N)                      -- barrier N reached this subtask
//     BeginTransaction()                -- the next epoch starts at once
//     ... Commit(M) whenever "checkpoint M complete" arrives (M may be older than the barrier
//         the subtask is at); Abort(M) only when the job gives up this incarnation
//   Close()
//
// Guarantees every implementation gives:
// - Write: the record belongs to the current transaction; it becomes visible to readers only
//   when a checkpoint >= the next PreCommit id is committed, never earlier.
// - WriteBatch(records, &written): the same as Write for each record in order (so order within
//   a partition is kept); `written` counts the records accepted, all of them on OK. On an error
//   records [0, written) are in the transaction and the rest are not: kUnavailable means retry
//   from `written`; any other error fails the instance as Write's would. The default calls Write
//   per record; sinks override it to pay per-call costs (locks, polling) once per batch.
// - PreCommit(N): seals the current transaction as "pending for N". After it returns OK nothing
//   but an abort decision (Abort, or a restart that restores a checkpoint older than N) can keep
//   the data from being committed. An error fails checkpoint N (the engine declines it).
// - Commit(N): makes every pending transaction with id <= N visible (the coordinator contract:
//   an aborted or subsumed older checkpoint is covered by the next completed one). Idempotent:
//   committing an already committed id (or an id with no pending data) is OK. For a pending
//   transaction it must eventually succeed: transient errors are retried inside (bounded by the
//   sink's options) and reported as kUnavailable when the bound runs out; the engine may call
//   it again.
// - Abort(N): discards uncommitted data up to and including N and the open transaction. After
//   Abort the instance is only good for Close; the job restarts from its last completed
//   checkpoint.
// - Recover(R): called after a restore of checkpoint R (R = 0: fresh start). Commits every
//   transaction pre-committed for a checkpoint <= R (all complete, or subsumed by R), and
//   aborts/deletes every leftover of later, never-completed epochs (orphans). A sink finds them
//   from R alone — the checkpoint stores no sink state (Kafka: the progress record; files: the
//   id in each pending name) — so a rescaled restore needs nothing handed over. Idempotent:
//   recovering twice from the same R gives the same result.
// - OnEventTime(watermark, idle, upstream): the event time of the sink's input moved (a higher
//   watermark, or idleness changed), between writes of the open transaction. `upstream`: the
//   job's sources' split event times (shuffle/split_times.h; null outside the engine). A sink that
//   carries event time to another job's readers (the repartition sink) writes it into the open
//   transaction; others ignore it (the default).
// - CommitIsResumable(): true when a transaction pre-committed by an earlier incarnation can
//   still be committed by Recover (files). False for Kafka: a restart aborts what the previous
//   process left open. A job commits its (at most one) non-resumable participant FIRST on
//   "checkpoint N complete", then the resumable ones, so a crash in between is repaired by
//   Recover of the resumable ones (docs/exactly-once.md, "Several sinks in one job").
// Errors: kFenced (another instance of the job took over: exit 3), kUnavailable (retry later,
// nothing lost), kAborted (the transaction was lost: restart from the last completed
// checkpoint), kIoError / kCorruption naming the path or broker, kInternal for calls out of order.
// Threading: the engine calls one instance from one thread at a time: the sink task for writes
// and barriers, the thread that completed a checkpoint for its commit, serialised by a lock per
// sink subtask (engine/txn_sink.h). Implementations say if they share state across instances.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "flow/runtime/common/serde.h"
#include "flow/runtime/common/status.h"
#include "flow/runtime/common/time.h"
#include "flow/runtime/connectors/connector.h"  // kNoTimestamp, OutHeader

namespace flow::rt {

namespace shuffle {
class SplitTimes;  // shuffle/split_times.h
}

// One record of a WriteBatch: views the caller keeps valid for the duration of the call.
struct TxnRecord {
  std::string_view key;
  std::string_view payload;
  TimestampMs timestamp = kNoTimestamp;
  std::span<const OutHeader> headers = {};  // Kafka only (see RawSink::WriteWithHeaders)
  // Kafka only: the record's own partition, for a batch written with kPartitionPerRecord.
  int32_t partition = -1;
};

class TwoPhaseCommitSink {
 public:
  virtual ~TwoPhaseCommitSink() = default;

  [[nodiscard]] virtual Status Open(uint32_t subtask, uint32_t parallelism) = 0;
  [[nodiscard]] virtual Status Recover(int64_t restored_checkpoint_id) = 0;
  [[nodiscard]] virtual Status BeginTransaction() = 0;
  [[nodiscard]] virtual Status Write(std::string_view key, std::string_view payload,
                                     TimestampMs timestamp) = 0;
  [[nodiscard]] virtual Status WriteBatch(std::span<const TxnRecord> records, size_t* written) {
    *written = 0;
    for (const TxnRecord& r : records) {
      if (!r.headers.empty()) return Status::Internal("this sink cannot write message headers");
      FLOW_RETURN_IF_ERROR(Write(r.key, r.payload, r.timestamp));
      ++*written;
    }
    return Status::Ok();
  }
  [[nodiscard]] virtual Status OnEventTime(TimestampMs /*watermark*/, bool /*idle*/,
                                           const shuffle::SplitTimes* /*upstream*/) {
    return Status::Ok();
  }
  [[nodiscard]] virtual Status PreCommit(int64_t checkpoint_id) = 0;
  [[nodiscard]] virtual Status Commit(int64_t checkpoint_id) = 0;
  [[nodiscard]] virtual Status Abort(int64_t checkpoint_id) = 0;
  // Closes without committing: data not committed yet stays pending (files) or is aborted by
  // the next incarnation (Kafka). Committing at the end of a bounded job is a final checkpoint.
  [[nodiscard]] virtual Status Close() = 0;
  virtual bool CommitIsResumable() const = 0;
};

}  // namespace flow::rt
