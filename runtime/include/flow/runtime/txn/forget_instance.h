#pragma once
// Forgetting an instance removed for good: `<job> --forget-instance NAME --shuffle-brokers B
// [--state-root DIR] [--kafka-properties F] [--dry-run]` (docs/deploy.md, "Removing an instance
// for good").
//
// Nobody else deletes what an instance leaves behind: under a shared --state-root the other
// instances' retention looks after their own directories only, and its progress topic stays. Its
// checkpoints are still needed while a committed repartition offset names one (whoever reads that
// partition next restores its keys from it), and its newest one while it may come back under its
// name; only the operator knows that it will not. So removing it is a command, which
//  1. refuses while NAME runs: it commits to its progress topic, or stays a member of one of the
//     job's consumer groups for wait_ms (a stopped or killed instance stays a member until its
//     session times out; the command waits for that);
//  2. fences NAME's transactional id, a takeover marker first (txn/kafka_takeover.h): no zombie of
//     it commits after this, so no offset can name one of its checkpoints again;
//  3. deletes NAME's checkpoints that no committed offset of the job's repartition topics names,
//     and waits (at most `wait_ms`) for the instances that read its partitions now to commit
//     them, which names their own checkpoints instead (each of their checkpoints does);
//  4. then deletes NAME's state dir, under its lock, and its progress topic.
// With `dry_run` it only reports what it would do (steps 1 and 3's reading).

#include <cstdint>
#include <map>
#include <string>

#include "flow/runtime/common/status.h"

namespace flow::rt {

struct ForgetInstanceOptions {
  std::string brokers;                                  // the cluster of the job's transactions
  std::map<std::string, std::string> kafka_properties;  // --kafka-properties (security settings)
  std::string job_id;
  std::string instance;    // the instance to forget
  std::string state_root;  // "": the Kafka side only (an instance's own --state-dir is its host's)
  bool dry_run = false;
  int64_t wait_ms = 60000;  // for offsets that still name one of its checkpoints
};

// Ok once NAME is forgotten (or, with dry_run, could be). kFailedPrecondition when it runs, or
// offsets still name its checkpoints after wait_ms (nothing named was deleted); kNotFound when
// the job has no such instance; kUnavailable when the brokers do not answer; kIoError naming a
// path; kInvalidArgument for a bad name or setting. Each says what to do.
[[nodiscard]] Status ForgetInstance(const ForgetInstanceOptions& options);

}  // namespace flow::rt
