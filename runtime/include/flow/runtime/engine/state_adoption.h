#pragma once
// StateAdoption: how the keys of a repartition partition take their state along when the partition
// moves to another instance of a scaled-out job (--instance with --state-root;
// docs/exactly-once.md, "State that follows its partition").
//
// Every instance's state dir is <state-root>/<instance>, readable by all. A record's offset in a
// repartition topic commits in the same transaction as the state it made, with the offset metadata
// `<instance>/chk-<N>` (KafkaInstanceOffsetMetadata); while an instance holds a partition, every
// one of its transactions commits the partition's position again. So the committed metadata of a
// partition names the checkpoint that holds its keys' state as of its committed offset: the last
// one of the last instance that held it.
//
// One run of an instance adopts the state of the partitions its group gave it when it starts:
// - each subtask of a repartition source publishes its first assignment of the run, with the
//   origin (instance, checkpoint) each partition's committed metadata names (Publish);
// - a keyed operator fed by that source waits until every subtask published (Wait), then restores,
//   for each assigned partition with an origin, the key groups of that partition it owns from the
//   origin's snapshot of the operator (Task), and nothing else: the state of key groups whose
//   partition is read elsewhere stays out of this instance;
// - the source restores each partition's event-time progress from the origin's snapshot of itself.
// A later change of the assignment ends the run (a revoked partition: kReassigned from the Kafka
// source; a partition that arrives with state: kReassigned from the repartition source), and the
// restart adopts again.
//
// Retention must keep every checkpoint a committed offset still names, also after its instance
// lost the partition: at each barrier, subtask 0 of every repartition source reads the last
// committed metadata of all its topic's partitions (SetNamed), and the storage keeps the named
// checkpoints of this instance (Named) on top of the newest ones. A checkpoint is named by its
// own transaction's commit, which is visible before the checkpoint two later completes; with at
// least three retained, the reading at any later barrier sees the name before retention could
// drop it.
//
// Threading: Publish and Wait from task threads; Checkpoint from any thread.

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "flow/runtime/checkpoint/recovery.h"
#include "flow/runtime/checkpoint/restart_policy.h"
#include "flow/runtime/common/status.h"

namespace flow::rt {

// The checkpoint that holds a partition's keys' state: instance `instance`'s chk-<checkpoint_id>.
struct StateOrigin {
  std::string instance;
  int64_t checkpoint_id = 0;
  bool operator==(const StateOrigin&) const = default;
};

// What one repartition source's subtasks were given, all together.
struct AdoptedPartitions {
  int32_t partitions = 0;  // of the topic
  // Each assigned partition that has committed state, with its origin. An assigned partition
  // without an entry starts empty: nothing of it was ever committed.
  std::map<int32_t, StateOrigin> origins;
};

class StateAdoption {
 public:
  // `instance`: this instance's name; `state_root`: --state-root; `max_parallelism`: the job's.
  StateAdoption(std::string instance, std::string state_root, uint32_t max_parallelism);

  const std::string& instance() const { return instance_; }
  // The job graph's fingerprint (a checkpoint of another build is refused). Set before the run's
  // threads start.
  void SetFingerprint(uint64_t fingerprint) { fingerprint_ = fingerprint; }
  // Before the run starts: source `reader` has `subtasks` subtasks that will publish.
  void Expect(const std::string& reader, uint32_t subtasks);
  // A subtask's first assignment of the run: partition -> origin (nullopt: nothing committed).
  // A subtask that ends before it had one publishes none (RepartitionSource::Close).
  void Publish(const std::string& reader, uint32_t subtask, int32_t partitions,
               const std::map<int32_t, std::optional<StateOrigin>>& assigned);
  // Blocks until every subtask of `reader` published; kCancelled once `*cancel` is set (polled).
  [[nodiscard]] Result<AdoptedPartitions> Wait(const std::string& reader,
                                               const std::atomic<bool>* cancel) const;
  // Retention: the checkpoints of this instance the committed offsets of `reader`'s topic name,
  // as read at a barrier by its subtask 0; nullopt when they could not be read.
  void SetNamed(const std::string& reader, std::optional<std::set<int64_t>> named);
  // The union over every reader, or nullopt while one has not read them (or could not): then
  // retention keeps every checkpoint.
  std::optional<std::set<int64_t>> Named() const;
  // <state-root>/<instance>/chk-<N>.
  std::string PathOf(const StateOrigin& origin) const;
  // The checkpoint `origin` names, verified once per run. kNotFound or kCorruption naming the
  // path when it cannot be read (retention removed it, or the root is not shared);
  // kInvalidArgument when another build of the job took it.
  [[nodiscard]] Result<std::shared_ptr<const RestorePoint>> Checkpoint(const StateOrigin& origin);

 private:
  struct Reader {
    uint32_t subtasks = 0;
    int32_t partitions = 0;
    std::map<uint32_t, std::map<int32_t, std::optional<StateOrigin>>> published;
    std::optional<std::set<int64_t>> named;  // SetNamed's last
  };

  const std::string instance_;
  const std::string state_root_;
  uint64_t fingerprint_ = 0;
  const uint32_t max_parallelism_;
  mutable std::mutex mu_;
  std::map<std::string, Reader> readers_;  // guarded by mu_
  std::map<std::pair<std::string, int64_t>, std::shared_ptr<const RestorePoint>>
      checkpoints_;  // guarded by mu_
};

// Paces subtask 0's reads of the committed metadata (SetNamed) while they fail. A read that cannot
// reach the brokers blocks the barrier for up to the source's metadata timeout, so after a failed
// read the next ones wait, 1 s doubling up to 60 s; in between the reader's names are unknown and
// retention keeps every checkpoint. It also tells the caller when to log: the first failure of a
// run of them, and the read that ends it. Not thread-safe (the source's thread).
class NamedReadPacing {
 public:
  NamedReadPacing();
  // Whether to read at `now_ms` (steady clock).
  bool Due(int64_t now_ms) const { return now_ms >= next_ms_; }
  // A read failed at `now_ms`: how many have failed in a row, this one included.
  uint32_t Failed(int64_t now_ms);
  // A read worked: how many had failed in a row before it (0: nothing to report).
  uint32_t Succeeded();

 private:
  RestartBackoff backoff_;
  int64_t next_ms_ = 0;
  uint32_t failed_ = 0;
};

}  // namespace flow::rt
