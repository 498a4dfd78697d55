// KafkaSource as a member of a consumer group: one instance of a job scaled out through Kafka
// (--instance, docs/deploy.md). The rest of the source is in kafka_source.cpp.

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "flow/runtime/connectors/kafka_source.h"
#include "flow/runtime/log/log.h"
#include "kafka_common.h"
#include "kafka_consumer_handle.h"

namespace flow::rt {
namespace {

// A static member is declared dead after this long without heartbeats: the time a SIGKILLed
// instance's partitions wait before they move. Kafka's own default (45 s) is made for restarts
// that take minutes; ours take a second.
constexpr const char* kDefaultSessionTimeoutMs = "10000";
constexpr const char* kDefaultHeartbeatIntervalMs = "1000";
// How often subtask 0 looks at its group for partitions no member holds, and how long it waits
// for one answer before it abandons the question (kafka_group_looker.h).
constexpr int kGroupLookMs = 2000;
constexpr int kGroupLookPatienceMs = 15000;

std::string PartitionsText(const rd_kafka_topic_partition_list_t* list) {
  std::string out;
  for (int i = 0; i < list->cnt; ++i) {
    out += fmt::format("{}{}", out.empty() ? "" : ",", list->elems[i].partition);
  }
  return out.empty() ? "none" : out;
}

}  // namespace

Status KafkaSource::AddGroupSettings(uint32_t subtask,
                                     std::map<std::string, std::string>* settings) {
  if (context_.job_id.empty()) {
    return Status::InvalidArgument("kafka source: --instance needs the job's id (--job-id)");
  }
  auto isolation = settings->find("isolation.level");
  if (KafkaInstanceOffsets::ForJob(context_.job_id)->attached() &&
      (isolation == settings->end() || isolation->second != "read_committed")) {
    // A partition that moves must wait for its last owner's pending offsets (a zombie's
    // transaction may still commit them): librdkafka asks the broker for stable offsets only
    // for read_committed consumers.
    return Status::InvalidArgument(fmt::format(
        "kafka source '{}': --instance with an exactly-once sink needs `read_committed: true` "
        "(isolation.level=read_committed): a partition that moves to this instance must wait "
        "for its last owner's pending offset commit",
        context_.operator_name));
  }
  group_mode_ = true;
  group_id_ = KafkaInstanceGroupId(context_.job_id, context_.operator_name);
  (*settings)["group.id"] = group_id_;
  // One member per source subtask of each instance; the name survives the instance's restarts.
  (*settings)["group.instance.id"] =
      KafkaInstanceMemberId(context_.job_id, context_.operator_name, context_.instance, subtask);
  // Only partitions that must move are revoked: the others go on reading during a rebalance.
  (*settings)["partition.assignment.strategy"] = "cooperative-sticky";
  settings->try_emplace("session.timeout.ms", kDefaultSessionTimeoutMs);
  // Members hear of a rebalance with their next heartbeat: a joining instance gets work sooner.
  settings->try_emplace("heartbeat.interval.ms", kDefaultHeartbeatIntervalMs);
  (*settings)["auto.offset.reset"] = options_.start == KafkaStart::kLatest ? "latest" : "earliest";
  return Status::Ok();
}

void KafkaSource::RegisterGroupMember() {
  instance_offsets_ = KafkaInstanceOffsets::ForJob(context_.job_id);
  transactional_ = instance_offsets_->attached();
  if (transactional_) offsets_slot_ = instance_offsets_->Register();
  if (MetricsRegistry* registry = context_.metrics.registry(); registry != nullptr) {
    MetricLabels labels = context_.metrics.Labels();
    labels.emplace_back("topic", options_.topic);
    rebalances_ = registry->Counter(
        kMetricKafkaRebalances,
        "Consumer-group rebalances that assigned or revoked partitions of this subtask", labels);
    assigned_gauge_ =
        registry->Gauge(kMetricKafkaAssignedPartitions,
                        "Partitions the consumer group assigned to this subtask", labels);
    assigned_gauge_->Set(0);
  }
}

Status KafkaSource::Subscribe() {
  RegisterGroupMember();
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(list, options_.topic.c_str(), RD_KAFKA_PARTITION_UA);
  rd_kafka_resp_err_t err = rd_kafka_subscribe(rk_, list);
  rd_kafka_topic_partition_list_destroy(list);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return KafkaError(err, fmt::format("kafka source: cannot join consumer group `{}`: {}",
                                       group_id_, rd_kafka_err2str(err)));
  }
  assigned_ = true;  // the group assigns; Poll must not assign() itself
  Log(LogLevel::kInfo, "kafka", "joining consumer group",
      {{"source", context_.operator_name},
       {"subtask", std::to_string(subtask_)},
       {"group", group_id_},
       {"instance", context_.instance},
       {"offsets",
        transactional_ ? "in the instance's transactions" : "committed after checkpoints"}});
  return Status::Ok();
}

void KafkaSource::HandleRebalance(int err_code, rd_kafka_topic_partition_list_t* partitions) {
  const auto err = static_cast<rd_kafka_resp_err_t>(err_code);
  if (rebalances_ != nullptr) rebalances_->Add(1);
  std::vector<int32_t> changed;
  for (int i = 0; i < partitions->cnt; ++i) changed.push_back(partitions->elems[i].partition);
  const std::string text = PartitionsText(partitions);
  if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
    had_assignment_ = true;
    if (rd_kafka_error_t* error = ServeKafkaRebalance(rk_, err, partitions); error != nullptr) {
      rebalance_error_ = Status::Unavailable(
          fmt::format("kafka source: cannot take partitions {} of topic `{}` from group `{}`: {}",
                      text, options_.topic, group_id_, rd_kafka_error_string(error)));
      rd_kafka_error_destroy(error);
      return;
    }
    // Positions become known with each partition's first record (offsets the group committed).
    const int64_t now = SteadyNowMs();
    for (int32_t p : changed) {
      next_offsets_.try_emplace(p, -1);
      unheard_.insert(p);
      assigned_at_ms_[p] = now;
    }
    // Their last owner may have died with a transaction open, which holds back their committed
    // offsets: the commit group looks for such instances and ends it (KafkaTakeover).
    if (!changed.empty() && transactional_) instance_offsets_->Assigned(group_id_);
    Log(LogLevel::kInfo, "kafka", "partitions assigned",
        {{"source", context_.operator_name},
         {"subtask", std::to_string(subtask_)},
         {"topic", options_.topic},
         {"partitions", text},
         {"instance", context_.instance}});
  } else if (err == RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS) {
    const bool lost = rd_kafka_assignment_lost(rk_) != 0;
    if (!changed.empty() && transactional_) {
      // The open transaction may hold output of these partitions past their committed offsets:
      // it must never commit once another instance reads them. Revoke waits for a commit in
      // progress and stops every later one of this run.
      reassigned_ =
          fmt::format("partitions {} of topic `{}` {} (consumer group `{}` rebalanced)", text,
                      options_.topic, lost ? "were lost" : "moved to another instance", group_id_);
      instance_offsets_->Revoke(reassigned_);
    }
    // After Revoke: the partitions may move once the revocation is served.
    ServeKafkaRebalance(rk_, err, partitions);
    DropPartitions(changed);
    Log(LogLevel::kInfo, "kafka", lost ? "partitions lost" : "partitions revoked",
        {{"source", context_.operator_name},
         {"subtask", std::to_string(subtask_)},
         {"topic", options_.topic},
         {"partitions", text},
         {"instance", context_.instance}});
  } else {
    rebalance_error_ = Status::Unavailable(fmt::format(
        "kafka source: consumer group `{}` failed: {}", group_id_, rd_kafka_err2str(err)));
    ServeKafkaRebalance(rk_, err, partitions);
  }
  if (assigned_gauge_ != nullptr) assigned_gauge_->Set(static_cast<int64_t>(next_offsets_.size()));
}

Status KafkaSource::CheckStalledAssignment(int64_t now_ms) {
  // The clock runs only while Poll is called at least every second with the brokers up.
  if (last_poll_ms_ < 0 || now_ms - last_poll_ms_ > 1000 || down_since_ms_ >= 0)
    polled_since_ms_ = now_ms;
  last_poll_ms_ = now_ms;
  if (!group_mode_ || unheard_.empty()) return Status::Ok();
  for (int32_t p : unheard_) {
    auto at = assigned_at_ms_.find(p);
    if (at == assigned_at_ms_.end()) continue;
    const int64_t waited = now_ms - std::max(at->second, polled_since_ms_);
    if (waited <= options_.stalled_assignment_ms) continue;
    renew_member_ = true;
    Log(LogLevel::kWarn, "kafka",
        "an assigned partition is never read: restarting with a new consumer",
        {{"source", context_.operator_name},
         {"subtask", std::to_string(subtask_)},
         {"topic", options_.topic},
         {"partition", std::to_string(p)},
         {"waited_ms", std::to_string(waited)},
         {"instance", context_.instance}});
    return Status::Reassigned(fmt::format(
        "partition {} of topic `{}` (consumer group `{}`) has had no record and no end of "
        "partition for {} ms since it was assigned, while the brokers were up: its committed "
        "offset never arrived (librdkafka); restarting the run with a new consumer",
        p, options_.topic, group_id_, waited));
  }
  return Status::Ok();
}

Status KafkaSource::CheckStrandedPartitions(int64_t now_ms) {
  if (!group_mode_ || subtask_ != 0 || rk_ == nullptr) return Status::Ok();
  if (group_looker_ == nullptr) {
    std::map<std::string, std::string> connect = KafkaConnectionProperties(settings_);
    connect["bootstrap.servers"] = settings_["bootstrap.servers"];
    group_looker_ = std::make_unique<KafkaGroupLooker>(std::move(connect), group_id_,
                                                       options_.topic, kGroupLookPatienceMs);
  }
  if (!group_looker_->asking()) {
    if (now_ms < next_look_ms_) return Status::Ok();
    next_look_ms_ = now_ms + kGroupLookMs;
    Status asked = group_looker_->Ask(now_ms);
    if (!asked.ok()) {
      // A safety net that cannot be set up this time: the consumer itself is unaffected.
      Log(LogLevel::kWarn, "kafka", "cannot look at the consumer group",
          {{"source", context_.operator_name}, {"reason", asked.message()}});
    }
    return Status::Ok();
  }
  std::optional<std::optional<KafkaGroupLook>> answer = group_looker_->Poll(now_ms);
  if (!answer) return Status::Ok();  // not answered yet
  const std::optional<KafkaGroupLook>& look = *answer;
  // No answer, a rebalance under way, or every partition held: nothing is stranded now.
  const std::vector<int32_t> free = look && look->stable
                                        ? KafkaUnassignedPartitions(known_partitions_, *look)
                                        : std::vector<int32_t>{};
  if (free.empty()) {
    stranded_since_ms_ = -1;
    return Status::Ok();
  }
  if (stranded_since_ms_ < 0) stranded_since_ms_ = now_ms;
  const int64_t stranded = now_ms - stranded_since_ms_;
  if (stranded < options_.stranded_partitions_ms ||
      !KafkaGroupLookActs(*look, settings_["group.instance.id"])) {
    return Status::Ok();
  }
  std::string text;
  for (int32_t p : free) {
    if (!text.empty()) text += ',';
    text += std::to_string(p);
  }
  renew_member_ = true;
  reassigned_ = fmt::format(
      "partitions {} of topic `{}` have been held by no member of the stable consumer group `{}` "
      "for {} ms (a cooperative rebalance whose second round never came): leaving the group so "
      "that it rebalances",
      text, options_.topic, group_id_, stranded);
  Log(LogLevel::kWarn, "kafka", "partitions held by no member: leaving the group to rebalance it",
      {{"source", context_.operator_name},
       {"topic", options_.topic},
       {"partitions", text},
       {"group", group_id_},
       {"instance", context_.instance}});
  return Status::Reassigned(reassigned_);
}

std::shared_ptr<KafkaConsumerHandle> KafkaSource::TakeKeptMember(
    const std::map<std::string, std::string>& settings) {
  if (context_.handover == nullptr) return nullptr;
  auto kept = std::dynamic_pointer_cast<KafkaConsumerHandle>(
      context_.handover->Take(KafkaKeptMemberName(settings)));
  if (kept == nullptr || kept->rk == nullptr) return nullptr;
  if (kept->settings != settings) {
    // Not made as this source would make it (cannot happen within one process today): a new
    // member replaces it, so the old one goes first.
    kept->Drop(/*stopping=*/true);
    return nullptr;
  }
  return kept;
}

Status KafkaSource::ResumeMember() {
  RegisterGroupMember();
  assigned_ = true;  // the group assigns; Poll must not assign() itself
  rd_kafka_topic_partition_list_t* current = nullptr;
  rd_kafka_resp_err_t err = rd_kafka_assignment(rk_, &current);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    renew_member_ = true;
    return KafkaError(err, fmt::format("kafka source: cannot read the assignment of group `{}`: {}",
                                       group_id_, rd_kafka_err2str(err)));
  }
  Status s = ResumePartitions(current);
  const std::string text = PartitionsText(current);
  rd_kafka_topic_partition_list_destroy(current);
  if (!s.ok()) {
    renew_member_ = true;  // its positions are unknown now: a new member starts clean
    return s;
  }
  if (assigned_gauge_ != nullptr) assigned_gauge_->Set(static_cast<int64_t>(next_offsets_.size()));
  // The run's assignment, as a rebalance's is logged (tools follow ownership by this line).
  Log(LogLevel::kInfo, "kafka", "partitions assigned",
      {{"source", context_.operator_name},
       {"subtask", std::to_string(subtask_)},
       {"topic", options_.topic},
       {"partitions", text},
       {"instance", context_.instance},
       {"member", "kept across the restart"}});
  return Status::Ok();
}

Status KafkaSource::ResumePartitions(rd_kafka_topic_partition_list_t* current) {
  if (current->cnt == 0) return Status::Ok();
  const int64_t now = SteadyNowMs();
  for (int i = 0; i < current->cnt; ++i) {
    const int32_t p = current->elems[i].partition;
    next_offsets_[p] = -1;
    unheard_.insert(p);  // until a record or the end of the partition after the seek below
    assigned_at_ms_[p] = now;
  }
  if (transactional_) instance_offsets_->Assigned(group_id_);
  // Where the last commit left each partition (read_committed: a pending transaction's offsets
  // are waited for). ReadCommitted makes those the positions.
  Result<std::map<int32_t, std::string>> committed = ReadCommitted(rk_, current, /*adopt=*/true);
  if (!committed.ok()) return committed.status();
  for (int i = 0; i < current->cnt; ++i) {
    rd_kafka_topic_partition_t& tp = current->elems[i];
    const int64_t next = next_offsets_[tp.partition];
    tp.offset = next >= 0                               ? next
                : options_.start == KafkaStart::kLatest ? RD_KAFKA_OFFSET_END
                                                        : RD_KAFKA_OFFSET_BEGINNING;
  }
  // Waits until the fetchers moved: nothing fetched from the old positions reaches Poll, and
  // each partition reports its end again once it gets there. librdkafka before 2.1.0 waits a
  // thousandth of the timeout it is given (its issue 4230): a wait that ran out is asked again
  // (seeking to the same offset twice is harmless) until the real timeout has passed.
  const int64_t deadline = SteadyNowMs() + options_.metadata_timeout_ms;
  rd_kafka_error_t* error = nullptr;
  while (true) {
    for (int i = 0; i < current->cnt; ++i) current->elems[i].err = RD_KAFKA_RESP_ERR_NO_ERROR;
    error = rd_kafka_seek_partitions(
        rk_, current, static_cast<int>(std::max<int64_t>(deadline - SteadyNowMs(), 1)));
    if (error == nullptr || rd_kafka_error_code(error) != RD_KAFKA_RESP_ERR__TIMED_OUT ||
        SteadyNowMs() >= deadline) {
      break;
    }
    rd_kafka_error_destroy(error);
  }
  if (error != nullptr) {
    Status s = Status::Unavailable(fmt::format(
        "kafka source: cannot move group `{}`'s partitions {} of topic `{}` back to "
        "their committed offsets: {}",
        group_id_, PartitionsText(current), options_.topic, rd_kafka_error_string(error)));
    rd_kafka_error_destroy(error);
    return s;
  }
  for (int i = 0; i < current->cnt; ++i) {
    const rd_kafka_topic_partition_t& tp = current->elems[i];
    // Not fetching yet (its committed offset is still being looked up: it starts there anyway),
    // or being revoked (the revocation ends this run at the first Poll).
    if (tp.err == RD_KAFKA_RESP_ERR_NO_ERROR || tp.err == RD_KAFKA_RESP_ERR__STATE ||
        tp.err == RD_KAFKA_RESP_ERR__PREV_IN_PROGRESS) {
      continue;
    }
    return KafkaError(
        tp.err, fmt::format("kafka source: cannot move partition {} of topic `{}` "
                            "back to offset {}: {}",
                            tp.partition, options_.topic, tp.offset, rd_kafka_err2str(tp.err)));
  }
  return Status::Ok();
}

void KafkaSource::CloseMember() {
  // Kept for the engine to decide (common/run_handover.h): the next run, if the engine restarts
  // at once, continues as this member, so neither this instance's other partitions nor any
  // other instance's move, and a revocation's second round comes as for any live member. When
  // no run follows at once the engine drops it: it leaves the group when the job stops (so the
  // partitions move to the other instances at once; a static member's close alone would keep
  // them until session.timeout.ms), and after a failure it just closes, so that a restart within
  // the session gets the same partitions back without a rebalance.
  const bool healthy = rebalance_error_.ok() && !renew_member_ &&
                       rd_kafka_fatal_error(rk_, nullptr, 0) == RD_KAFKA_RESP_ERR_NO_ERROR;
  handle_->had_assignment = had_assignment_;
  handle_->revoked = !reassigned_.empty();
  if (healthy && context_.handover != nullptr) {
    handle_->source = nullptr;
    context_.handover->Keep(KafkaKeptMemberName(handle_->settings), handle_);
    return;
  }
  // Not kept: a member a net gave up on (CheckStalledAssignment, CheckStrandedPartitions) leaves,
  // so that the group rebalances; outside the engine, a clean stop leaves too.
  handle_->Drop(/*stopping=*/rebalance_error_.ok() && (renew_member_ || !context_.cancelled()));
}

Status KafkaSource::FatalError(const Status& error) {
  char reason[512];
  const rd_kafka_resp_err_t cause = rd_kafka_fatal_error(rk_, reason, sizeof reason);
  if (cause != RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID || !group_mode_) return error;
  // Static membership: the newer of two members with one name wins. Restarting would only fence
  // the other process in turn.
  return Status::Fenced(fmt::format(
      "kafka source: another process joined consumer group `{}` as this instance (`{}`): every "
      "instance of a job needs its own --instance name ({})",
      group_id_, context_.instance, reason));
}

void KafkaSource::DropPartitions(const std::vector<int32_t>& partitions) {
  for (int32_t p : partitions) {
    next_offsets_.erase(p);
    unheard_.erase(p);
    assigned_at_ms_.erase(p);
    end_offsets_.erase(p);
    if (auto it = lag_.find(p); it != lag_.end()) {
      it->second->Set(kMetricAbsent);
      lag_.erase(it);
    }
    // An older offset committed later would only move the group back: more duplicates for an
    // at-least-once job, never fewer; but the partition is another instance's now.
    for (auto& [id, offsets] : pending_commits_) offsets.erase(p);
  }
}

Status KafkaSource::OnCheckpoint(int64_t checkpoint_id) {
  if (!group_mode_) return Status::Ok();
  if (!transactional_) {
    std::map<int32_t, int64_t>& offsets = pending_commits_[checkpoint_id];
    for (const auto& [p, off] : next_offsets_) {
      if (off >= 0) offsets[p] = off;
    }
    return Status::Ok();
  }
  KafkaReadOffsets read;
  read.checkpoint_id = checkpoint_id;
  read.topic = options_.topic;
  for (const auto& [p, off] : next_offsets_) {
    if (off >= 0) read.next_offsets.emplace_back(p, off);
  }
  // As of this barrier: a rebalance after it makes the broker refuse the offsets, and with them
  // the transaction (KIP-447), unless it only added partitions here.
  read.group = std::shared_ptr<rd_kafka_consumer_group_metadata_t>(
      rd_kafka_consumer_group_metadata(rk_), rd_kafka_consumer_group_metadata_destroy);
  if (read.group == nullptr) {
    return Status::Internal(
        fmt::format("kafka source: no group metadata for group `{}`", group_id_));
  }
  instance_offsets_->Record(offsets_slot_, std::move(read));
  return Status::Ok();
}

Status KafkaSource::OnCheckpointComplete(int64_t checkpoint_id) {
  if (!group_mode_ || transactional_ || pending_commits_.empty()) return Status::Ok();
  auto newest = pending_commits_.upper_bound(checkpoint_id);
  if (newest == pending_commits_.begin()) return Status::Ok();
  --newest;
  if (!newest->second.empty()) {
    rd_kafka_topic_partition_list_t* list =
        rd_kafka_topic_partition_list_new(static_cast<int>(newest->second.size()));
    for (const auto& [p, off] : newest->second) {
      rd_kafka_topic_partition_list_add(list, options_.topic.c_str(), p)->offset = off;
    }
    // Asynchronous: a failed commit is repeated, with newer offsets, after the next checkpoint.
    rd_kafka_commit(rk_, list, 1);
    rd_kafka_topic_partition_list_destroy(list);
  }
  pending_commits_.erase(pending_commits_.begin(), std::next(newest));
  return Status::Ok();
}

Result<std::map<int32_t, std::string>> KafkaSource::CommittedMetadata(
    const std::vector<int32_t>& partitions) {
  if (!group_mode_ || rk_ == nullptr) {
    return Status::FailedPrecondition(fmt::format(
        "kafka source of `{}`: committed offsets are a consumer group's", options_.topic));
  }
  rd_kafka_topic_partition_list_t* list =
      rd_kafka_topic_partition_list_new(static_cast<int>(partitions.size()));
  for (int32_t p : partitions) rd_kafka_topic_partition_list_add(list, options_.topic.c_str(), p);
  auto out = ReadCommitted(rk_, list, /*adopt=*/true);
  rd_kafka_topic_partition_list_destroy(list);
  return out;
}

Result<std::map<int32_t, std::string>> KafkaSource::LastCommittedMetadata(int32_t partitions) {
  if (!group_mode_ || rk_ == nullptr) {
    return Status::FailedPrecondition(fmt::format(
        "kafka source of `{}`: committed offsets are a consumer group's", options_.topic));
  }
  if (offsets_rk_ == nullptr) {
    std::map<std::string, std::string> settings = settings_;
    // A read_committed consumer's fetch waits while a transaction holds an offset back; the
    // last committed one is what retention needs, at once.
    settings["isolation.level"] = "read_uncommitted";
    settings.erase("group.instance.id");
    Result<rd_kafka_t*> made =
        MakeKafkaClient(RD_KAFKA_CONSUMER, settings, "kafka source: the offsets consumer");
    if (!made.ok()) return made.status();
    offsets_rk_ = *made;
  }
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(partitions);
  for (int32_t p = 0; p < partitions; ++p) {
    rd_kafka_topic_partition_list_add(list, options_.topic.c_str(), p);
  }
  auto out = ReadCommitted(offsets_rk_, list, /*adopt=*/false);
  rd_kafka_topic_partition_list_destroy(list);
  return out;
}

Result<std::map<int32_t, std::string>> KafkaSource::ReadCommitted(
    rd_kafka_t* rk, rd_kafka_topic_partition_list_t* list, bool adopt) {
  rd_kafka_resp_err_t err = KafkaCommittedRetrying(rk, list, options_.metadata_timeout_ms);
  std::map<int32_t, std::string> out;
  for (int i = 0; err == RD_KAFKA_RESP_ERR_NO_ERROR && i < list->cnt; ++i) {
    const rd_kafka_topic_partition_t& tp = list->elems[i];
    if (tp.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      err = tp.err;
      break;
    }
    out[tp.partition] = tp.offset < 0 || tp.metadata == nullptr
                            ? std::string()
                            : std::string(static_cast<const char*>(tp.metadata), tp.metadata_size);
    if (auto it = next_offsets_.find(tp.partition);
        adopt && tp.offset >= 0 && it != next_offsets_.end() && it->second < 0) {
      it->second = tp.offset;
    }
  }
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return KafkaError(err, fmt::format("kafka source: cannot read the offsets group `{}` committed "
                                       "for topic `{}`: {}",
                                       group_id_, options_.topic, rd_kafka_err2str(err)));
  }
  return out;
}

}  // namespace flow::rt
