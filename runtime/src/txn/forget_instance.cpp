#include "flow/runtime/txn/forget_instance.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "../connectors/kafka_common.h"
#include "flow/runtime/checkpoint/checkpoint_storage.h"
#include "flow/runtime/checkpoint/state_dir.h"
#include "flow/runtime/common/job_id.h"
#include "flow/runtime/common/time.h"
#include "flow/runtime/connectors/kafka_instance.h"
#include "flow/runtime/log/log.h"
#include "flow/runtime/shuffle/repartition_topic.h"
#include "kafka_admin.h"
#include "kafka_takeover.h"

namespace flow::rt {
namespace {

namespace fs = std::filesystem;

constexpr int kCallMs = 10000;
// Between two reads of the committed offsets while they still name a checkpoint of the instance.
constexpr int64_t kPollMs = 1000;
// The marker's "who took over": no instance of the job can have this name (a space).
constexpr const char* kForgetter = "(forget-instance)";

using ClientPtr = std::unique_ptr<rd_kafka_t, void (*)(rd_kafka_t*)>;

// The committed offsets of one repartition topic that name a checkpoint of `instance`.
struct Named {
  std::set<int64_t> ids;
  std::vector<std::string> where;  // "<topic> partition <p>: chk-<N>"
};

Result<std::string> MemberOf(rd_kafka_t* rk, const ForgetInstanceOptions& o) {
  Result<std::vector<std::string>> groups =
      txn_detail::GroupsWithPrefix(rk, KafkaInstanceGroupId(o.job_id, ""), kCallMs);
  if (!groups.ok()) return groups.status();
  if (groups->empty()) return std::string();
  Result<std::map<std::string, std::string>> members = txn_detail::InstanceMembers(
      rk, std::set<std::string>(groups->begin(), groups->end()), kCallMs);
  if (!members.ok()) return members.status();
  auto it = members->find(o.instance);
  return it == members->end() ? std::string() : it->second;
}

Result<int64_t> ProgressEnd(rd_kafka_t* rk, const std::string& topic) {
  Result<txn_detail::TopicBounds> bounds = txn_detail::ProgressTopicBounds(rk, topic, kCallMs);
  if (!bounds.ok()) return bounds.status();
  return bounds->high;
}

Status AddNamedOf(const ForgetInstanceOptions& o, const std::map<std::string, std::string>& conn,
                  rd_kafka_t* admin, const std::string& topic, const std::string& op, Named* out) {
  Result<int32_t> partitions = KafkaPartitionCount(admin, topic, o.brokers, kCallMs);
  if (!partitions.ok()) return partitions.status();
  std::map<std::string, std::string> settings = conn;
  settings["bootstrap.servers"] = o.brokers;
  settings["group.id"] = KafkaInstanceGroupId(o.job_id, op + ".shuffle");
  settings["enable.auto.commit"] = "false";
  // The last committed offsets at once, not after the open transactions of the instances.
  settings["isolation.level"] = "read_uncommitted";
  Result<rd_kafka_t*> made =
      txn_detail::MakeClient(RD_KAFKA_CONSUMER, settings, "forget-instance offsets reader");
  if (!made.ok()) return made.status();
  ClientPtr consumer(*made, rd_kafka_destroy);
  std::unique_ptr<rd_kafka_topic_partition_list_t, void (*)(rd_kafka_topic_partition_list_t*)> list(
      rd_kafka_topic_partition_list_new(*partitions), rd_kafka_topic_partition_list_destroy);
  for (int32_t p = 0; p < *partitions; ++p) {
    rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), p);
  }
  const rd_kafka_resp_err_t err = KafkaCommittedRetrying(consumer.get(), list.get(), kCallMs);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable(fmt::format("kafka: committed offsets of group `{}`: {}",
                                           settings["group.id"], rd_kafka_err2str(err)));
  }
  for (int i = 0; i < list->cnt; ++i) {
    const rd_kafka_topic_partition_t& tp = list->elems[i];
    if (tp.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return Status::Unavailable(fmt::format("kafka: committed offset of `{}` partition {}: {}",
                                             topic, tp.partition, rd_kafka_err2str(tp.err)));
    }
    if (tp.metadata_size == 0) continue;
    std::string_view metadata(static_cast<const char*>(tp.metadata), tp.metadata_size);
    Result<KafkaOffsetOwner> owner = ParseKafkaInstanceOffsetMetadata(metadata, topic);
    // Metadata another tool committed names nothing of ours.
    if (!owner.ok() || owner->instance != o.instance) continue;
    out->ids.insert(owner->checkpoint_id);
    out->where.push_back(
        fmt::format("{} partition {}: chk-{}", topic, tp.partition, owner->checkpoint_id));
  }
  return Status::Ok();
}

// Every checkpoint of the instance a committed repartition offset of the job names.
Result<Named> NamedCheckpoints(const ForgetInstanceOptions& o,
                               const std::map<std::string, std::string>& conn, rd_kafka_t* admin) {
  const std::string prefix = shuffle::RepartitionTopicPrefix(o.job_id);
  Result<std::vector<std::string>> topics = txn_detail::TopicsWithPrefix(admin, prefix, kCallMs);
  if (!topics.ok()) return topics.status();
  Named named;
  for (const std::string& topic : *topics) {
    FLOW_RETURN_IF_ERROR(AddNamedOf(o, conn, admin, topic, topic.substr(prefix.size()), &named));
  }
  return named;
}

std::string Joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : "; ") + s;
  return out;
}

// Whether the instance wrote to its progress topic at or after offset `from`: a commit (its
// progress record, or the marker that ends its transaction), not a takeover marker of another.
Result<bool> CommittedSince(const ForgetInstanceOptions& o,
                            const std::map<std::string, std::string>& conn,
                            const std::string& progress, int64_t from) {
  bool committed = false;
  FLOW_RETURN_IF_ERROR(txn_detail::ScanProgressTopic(
      o.brokers, conn, progress, from, kCallMs, [&](std::string_view key, std::string_view) {
        committed = key != txn_detail::kTakeoverMarkerKey;
        return !committed;  // one commit is enough
      }));
  return committed;
}

// Step 1: the instance must not run. A stopped one may stay a member of a group until its
// session times out; one that commits runs.
Status CheckStopped(const ForgetInstanceOptions& o, const std::map<std::string, std::string>& conn,
                    rd_kafka_t* rk, const std::string& progress, bool has_topic) {
  const std::string stop_first = "stop it first, then forget it";
  int64_t from = -1;
  if (has_topic) {
    Result<int64_t> end = ProgressEnd(rk, progress);
    if (!end.ok()) return end.status();
    from = *end;
  }
  const int64_t start = SteadyNowMs();
  bool waiting = false;
  while (true) {
    Result<std::string> member = MemberOf(rk, o);
    if (!member.ok()) return member.status();
    if (has_topic) {
      Result<int64_t> end = ProgressEnd(rk, progress);
      if (!end.ok()) return end.status();
      if (*end > from) {
        Result<bool> committed = CommittedSince(o, conn, progress, from);
        if (!committed.ok()) return committed.status();
        if (*committed) {
          return Status::FailedPrecondition(
              fmt::format("instance `{}` is running: it commits to `{}`; {}", o.instance, progress,
                          stop_first));
        }
      }
    }
    const int64_t waited = SteadyNowMs() - start;
    if (member->empty() && waited >= txn_detail::kTakeoverConfirmMs) return Status::Ok();
    if (!member->empty() && waited >= o.wait_ms) {
      return Status::FailedPrecondition(
          fmt::format("instance `{}` is running: {} for {} s and no session timeout ended it; {}",
                      o.instance, *member, o.wait_ms / 1000, stop_first));
    }
    if (!member->empty() && !waiting) {
      Log(LogLevel::kInfo, "engine",
          "waiting for a member of the instance to leave: a stopped instance stays a member "
          "until its session times out",
          {{"instance", o.instance}, {"member", *member}});
      waiting = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(kPollMs));
  }
}

}  // namespace

Status ForgetInstance(const ForgetInstanceOptions& o) {
  if (o.instance.empty() || o.instance.size() > 64 || !IsValidJobId(o.instance)) {
    return Status::InvalidArgument(fmt::format(
        "--forget-instance {}: expected 1 to 64 characters of A-Z a-z 0-9 . _ -", o.instance));
  }
  if (o.brokers.empty()) {
    return Status::InvalidArgument(
        "--forget-instance: give --shuffle-brokers, the Kafka cluster of the job's transactions "
        "and consumer groups");
  }
  const std::map<std::string, std::string> conn = KafkaConnectionProperties(o.kafka_properties);
  Result<std::unique_ptr<txn_detail::MarkerClient>> admin =
      txn_detail::MakeMarkerClient(o.brokers, conn);
  if (!admin.ok()) return admin.status();
  rd_kafka_t* rk = (*admin)->rk;

  const std::string progress = KafkaProgressTopic(o.job_id, o.instance);
  Result<std::vector<std::string>> topics = txn_detail::TopicsWithPrefix(rk, progress, kCallMs);
  if (!topics.ok()) return topics.status();
  const bool has_topic = std::find(topics->begin(), topics->end(), progress) != topics->end();
  const std::string dir =
      o.state_root.empty() ? "" : (fs::path(o.state_root) / o.instance).string();
  std::error_code ec;
  const bool has_dir = !dir.empty() && fs::is_directory(dir, ec);
  if (!has_topic && !has_dir) {
    return Status::NotFound(fmt::format(
        "job `{}` has no instance `{}`: no progress topic `{}`{}; check the name and --job-id",
        o.job_id, o.instance, progress,
        dir.empty() ? "" : fmt::format(" and no state dir {}", dir)));
  }
  FLOW_RETURN_IF_ERROR(CheckStopped(o, conn, rk, progress, has_topic));

  std::unique_ptr<StateDirectory> lock;
  if (has_dir) {
    Result<std::unique_ptr<StateDirectory>> opened = StateDirectory::Open(dir);
    if (!opened.ok()) {
      return opened.status().code() == StatusCode::kFenced
                 ? Status::FailedPrecondition(
                       fmt::format("instance `{}`: {}", o.instance, opened.status().message()))
                 : opened.status();
    }
    lock = std::move(opened).value();
    if (!lock->recorded_job_id().empty() && lock->recorded_job_id() != o.job_id) {
      return Status::InvalidArgument(
          fmt::format("{} belongs to job `{}`, not `{}`: check --job-id and --state-root", dir,
                      lock->recorded_job_id(), o.job_id));
    }
  }

  if (!o.dry_run && has_topic) {
    txn_detail::KafkaTakeover::Options fence{.brokers = o.brokers,
                                             .connection = conn,
                                             .job_id = o.job_id,
                                             .instance = kForgetter,
                                             .transaction_timeout_ms = 60000,
                                             .operation_timeout_ms = kCallMs};
    FLOW_RETURN_IF_ERROR(
        txn_detail::FenceInstance(admin->get(), fence, o.instance, [] { return false; }));
  }

  // Offsets name checkpoints of the state dir only: without one there is nothing to keep.
  const int64_t deadline = SteadyNowMs() + o.wait_ms;
  bool waiting = false;
  while (has_dir) {
    Result<Named> named = NamedCheckpoints(o, conn, rk);
    if (!named.ok()) return named.status();
    if (!o.dry_run) {
      Result<std::vector<int64_t>> deleted = DeleteCheckpointsExcept(dir, named->ids);
      if (!deleted.ok()) return deleted.status();
      if (!deleted->empty()) {
        Log(LogLevel::kInfo, "engine", "deleted checkpoints no committed offset names",
            {{"instance", o.instance}, {"count", std::to_string(deleted->size())}});
      }
    }
    if (named->ids.empty()) break;
    if (o.dry_run) {
      Log(LogLevel::kInfo, "engine",
          "dry run: committed offsets name checkpoints of the instance; forgetting it waits until "
          "the instances reading those partitions commit them",
          {{"instance", o.instance}, {"named", Joined(named->where)}});
      break;
    }
    if (SteadyNowMs() >= deadline) {
      return Status::FailedPrecondition(fmt::format(
          "committed offsets still name checkpoints of instance `{}` after {} s ({}): no running "
          "instance has committed those partitions since; they were kept, the others deleted. "
          "Run the job's instances, then forget `{}` again",
          o.instance, o.wait_ms / 1000, Joined(named->where), o.instance));
    }
    if (!waiting) {
      Log(LogLevel::kInfo, "engine",
          "waiting for the instances that read its partitions to commit them",
          {{"instance", o.instance}, {"named", Joined(named->where)}});
      waiting = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(kPollMs));
  }

  if (o.dry_run) {
    Log(LogLevel::kInfo, "engine", "dry run: would forget the instance",
        {{"instance", o.instance},
         {"state_dir", has_dir ? dir : "(none)"},
         {"progress_topic", has_topic ? progress : "(none)"}});
    return Status::Ok();
  }
  if (has_dir) {
    fs::remove_all(dir, ec);  // under its lock: no job process can have opened it meanwhile
    if (ec) return Status::IoError(fmt::format("cannot delete {}: {}", dir, ec.message()));
    lock.reset();
  }
  if (has_topic) FLOW_RETURN_IF_ERROR(txn_detail::DeleteTopicIfExists(rk, progress, kCallMs));
  Log(LogLevel::kInfo, "engine", "forgot the instance",
      {{"instance", o.instance},
       {"job", o.job_id},
       {"state_dir", has_dir ? dir : "(none)"},
       {"progress_topic", has_topic ? progress : "(none)"}});
  return Status::Ok();
}

}  // namespace flow::rt
