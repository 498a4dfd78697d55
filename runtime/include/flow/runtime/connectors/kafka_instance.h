#pragma once
// KafkaInstanceOffsets: how the Kafka sources of one instance of a scaled-out job (--instance,
// docs/deploy.md) hand what they read to the instance's transactional producer, so that output
// and consumed offsets commit in one Kafka transaction (KIP-447).
//
// Each source subtask is a member of a consumer group. At every barrier it records, per
// checkpoint id, the next offset of each partition it reads and its consumer's group metadata
// (generation, member id) as of that barrier (Record). The exactly-once Kafka commit group of the
// same job, when it commits checkpoint N, sends each source's newest record <= N with
// send_offsets_to_transaction inside the transaction (Commit): the broker then refuses the whole
// transaction if the group moved on since (a zombie that lost its partitions is fenced).
//
// A source that loses partitions in a rebalance calls Revoke before it lets them go: Revoke waits
// for a commit in progress and makes every later Commit of this run fail with kReassigned, so
// nothing it wrote for those partitions after their last committed offset can ever commit; the
// job restarts from the last commit (the engine restarts at once on kReassigned).
//
// One object per job id in a process (ForJob); the commit group Attaches it when it starts (each
// run of the job), which forgets the records and the revocation of the run before. Without an
// attached group (at-least-once sinks only) sources commit their offsets to the group themselves
// when a checkpoint completes. Threading: thread-safe.

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "flow/runtime/common/status.h"

struct rd_kafka_consumer_group_metadata_s;

namespace flow::rt {

// Names of an instance's Kafka resources. Instances find each other by them (KafkaTakeover), so
// they are made here only.
// Consumer group of the job's Kafka source `source`: "flow-<job>.<source>".
std::string KafkaInstanceGroupId(std::string_view job_id, std::string_view source);
// Static member of that group: "<job>.<source>.<instance>.<subtask>".
std::string KafkaInstanceMemberId(std::string_view job_id, std::string_view source,
                                  std::string_view instance, uint32_t subtask);
// The instance named by `member_id` (a group.instance.id in group `group_id`), or "" when the
// member is not one of a Flow instance.
std::string KafkaInstanceOfMember(std::string_view group_id, std::string_view member_id);
// Whether a rebalance callback must assign and unassign incrementally. `protocol` is what
// rd_kafka_rebalance_protocol returned: NULL when librdkafka could not tell, as during
// rd_kafka_consumer_close. An instance's group has one assignor, cooperative-sticky, so an
// unknown protocol is the cooperative one.
bool KafkaInstanceRebalanceIsCooperative(const char* protocol);
// A look at a consumer group (DescribeConsumerGroups): its id, the broker's error for it ("" when
// described), whether it is stable, and each member's group.instance.id ("" for a dynamic member)
// with the partitions of one topic it holds.
struct KafkaGroupLook {
  std::string group;
  std::string error;
  bool stable = false;
  std::vector<std::pair<std::string, std::vector<int32_t>>> members;
};
// The partitions of a topic with `partitions` partitions that no member holds.
std::vector<int32_t> KafkaUnassignedPartitions(int32_t partitions, const KafkaGroupLook& look);
// Whether `member` (a group.instance.id) is the one member of the group that acts on what every
// member sees: the least static member id.
bool KafkaGroupLookActs(const KafkaGroupLook& look, std::string_view member);
// Progress topic of an instance: "__flow_progress_<job>.<instance>" (one process:
// "__flow_progress_<job>"), and the prefix every instance's topic of the job starts with.
std::string KafkaProgressTopic(std::string_view job_id, std::string_view instance);
std::string KafkaInstanceProgressPrefix(std::string_view job_id);
// Transactional id: "flow-<job>@<instance>" (one process: "flow-<job>").
std::string KafkaTransactionalId(std::string_view job_id, std::string_view instance);

// The metadata an instance commits with each offset: "<instance>/chk-<N>", the checkpoint whose
// snapshot holds the state as of that offset, under the checkpoint root every instance shares.
// Whoever reads the partition next restores that partition's state from it (docs/deploy.md).
std::string KafkaInstanceOffsetMetadata(std::string_view instance, int64_t checkpoint_id);
struct KafkaOffsetOwner {
  std::string instance;
  int64_t checkpoint_id = 0;
};
// The inverse; kCorruption naming `where` for anything else (an offset committed by another tool
// has none of it, and a partition's state is then unknown).
[[nodiscard]] Result<KafkaOffsetOwner> ParseKafkaInstanceOffsetMetadata(std::string_view metadata,
                                                                        std::string_view where);

// What one source subtask had read when a barrier passed it.
struct KafkaReadOffsets {
  int64_t checkpoint_id = 0;
  std::string topic;
  std::vector<std::pair<int32_t, int64_t>> next_offsets;  // partition, offset of the next record
  std::shared_ptr<rd_kafka_consumer_group_metadata_s> group;  // the consumer's, at that barrier
};

class KafkaInstanceOffsets {
 public:
  // The object of `job_id` in this process (made on first use; lives as long as the process).
  static std::shared_ptr<KafkaInstanceOffsets> ForJob(const std::string& job_id);

  // By the commit group at its start: a new run; records and revocation of the last are dropped.
  void Attach();
  // By the commit group when it goes away: sources of a later run without a group commit alone.
  void Detach();
  // True while a commit group is attached: sources leave their offsets to it.
  bool attached() const;

  // By the commit group: `listener` hears of every Assigned until Detach. It runs under this
  // object's lock, so it must not block or call back.
  void SetAssignedListener(std::function<void(const std::string& group)> listener);
  // By a source of the current run: the group gave it partitions of consumer group `group`.
  void Assigned(const std::string& group);

  // A source subtask of the current run; the slot to Record under.
  size_t Register();
  // The offsets of `slot` at barrier `read.checkpoint_id` (ids of a slot only grow).
  void Record(size_t slot, KafkaReadOffsets read);
  // Partitions of this run moved to another instance: waits for a commit in progress; every
  // later Commit of this run fails with kReassigned naming `why`.
  void Revoke(const std::string& why);

  // Under the commit lock: `commit` gets each source's newest record <= checkpoint_id (sources
  // with none are left out), or kReassigned after a Revoke of this run. Records <= checkpoint_id
  // are dropped after a successful commit.
  [[nodiscard]] Status Commit(
      int64_t checkpoint_id,
      const std::function<Status(const std::vector<const KafkaReadOffsets*>&)>& commit);

 private:
  mutable std::mutex commit_mu_;  // one Commit at a time; Revoke waits for it
  mutable std::mutex mu_;         // the fields below; taken after commit_mu_
  bool attached_ = false;
  std::string revoked_;  // why, after Revoke; empty while the run may commit
  std::function<void(const std::string&)> assigned_listener_;
  std::vector<std::vector<KafkaReadOffsets>> slots_;
};

}  // namespace flow::rt
