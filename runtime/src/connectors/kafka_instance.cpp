#include "flow/runtime/connectors/kafka_instance.h"

#include <algorithm>
#include <cctype>
#include <map>

#include <fmt/format.h>

#include "flow/runtime/checkpoint/checkpoint_storage.h"

namespace flow::rt {

std::string KafkaInstanceGroupId(std::string_view job_id, std::string_view source) {
  return fmt::format("flow-{}.{}", job_id, source);
}

std::string KafkaInstanceMemberId(std::string_view job_id, std::string_view source,
                                  std::string_view instance, uint32_t subtask) {
  return fmt::format("{}.{}.{}.{}", job_id, source, instance, subtask);
}

bool KafkaInstanceRebalanceIsCooperative(const char* protocol) {
  return protocol == nullptr || std::string_view(protocol) == "COOPERATIVE";
}

std::string KafkaInstanceOfMember(std::string_view group_id, std::string_view member_id) {
  constexpr std::string_view kGroupPrefix = "flow-";
  if (group_id.substr(0, kGroupPrefix.size()) != kGroupPrefix) return "";
  const std::string prefix = fmt::format("{}.", group_id.substr(kGroupPrefix.size()));
  if (member_id.size() <= prefix.size() || member_id.substr(0, prefix.size()) != prefix) return "";
  std::string_view rest = member_id.substr(prefix.size());  // "<instance>.<subtask>"
  const size_t dot = rest.rfind('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == rest.size()) return "";
  for (char c : rest.substr(dot + 1)) {
    if (std::isdigit(static_cast<unsigned char>(c)) == 0) return "";
  }
  return std::string(rest.substr(0, dot));
}

std::string KafkaProgressTopic(std::string_view job_id, std::string_view instance) {
  if (instance.empty()) return fmt::format("__flow_progress_{}", job_id);
  return fmt::format("{}{}", KafkaInstanceProgressPrefix(job_id), instance);
}

std::string KafkaInstanceProgressPrefix(std::string_view job_id) {
  return fmt::format("__flow_progress_{}.", job_id);
}

std::string KafkaTransactionalId(std::string_view job_id, std::string_view instance) {
  if (instance.empty()) return fmt::format("flow-{}", job_id);
  return fmt::format("flow-{}@{}", job_id, instance);
}

std::string KafkaInstanceOffsetMetadata(std::string_view instance, int64_t checkpoint_id) {
  return fmt::format("{}/{}", instance, CheckpointDirName(checkpoint_id));
}

Result<KafkaOffsetOwner> ParseKafkaInstanceOffsetMetadata(std::string_view metadata,
                                                          std::string_view where) {
  const size_t slash = metadata.rfind('/');
  const int64_t id =
      slash == std::string_view::npos ? -1 : ParseCheckpointDir(metadata.substr(slash + 1));
  if (slash == 0 || id <= 0) {
    return Status::Corruption(fmt::format(
        "{}: the committed offset's metadata `{}` does not name a checkpoint (<instance>/chk-<N>)",
        where, metadata));
  }
  return KafkaOffsetOwner{std::string(metadata.substr(0, slash)), id};
}

std::shared_ptr<KafkaInstanceOffsets> KafkaInstanceOffsets::ForJob(const std::string& job_id) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<KafkaInstanceOffsets>> jobs;
  std::lock_guard<std::mutex> lock(mu);
  std::shared_ptr<KafkaInstanceOffsets>& o = jobs[job_id];
  if (o == nullptr) o = std::make_shared<KafkaInstanceOffsets>();
  return o;
}

void KafkaInstanceOffsets::Attach() {
  std::lock_guard<std::mutex> commit(commit_mu_);
  std::lock_guard<std::mutex> lock(mu_);
  attached_ = true;
  revoked_.clear();
  slots_.clear();
}

void KafkaInstanceOffsets::Detach() {
  std::lock_guard<std::mutex> commit(commit_mu_);
  std::lock_guard<std::mutex> lock(mu_);
  attached_ = false;
  slots_.clear();
  assigned_listener_ = nullptr;
}

void KafkaInstanceOffsets::SetAssignedListener(
    std::function<void(const std::string& group)> listener) {
  std::lock_guard<std::mutex> lock(mu_);
  assigned_listener_ = std::move(listener);
}

void KafkaInstanceOffsets::Assigned(const std::string& group) {
  std::lock_guard<std::mutex> lock(mu_);
  if (assigned_listener_) assigned_listener_(group);
}

bool KafkaInstanceOffsets::attached() const {
  std::lock_guard<std::mutex> lock(mu_);
  return attached_;
}

size_t KafkaInstanceOffsets::Register() {
  std::lock_guard<std::mutex> lock(mu_);
  slots_.emplace_back();
  return slots_.size() - 1;
}

void KafkaInstanceOffsets::Record(size_t slot, KafkaReadOffsets read) {
  std::lock_guard<std::mutex> lock(mu_);
  if (slot >= slots_.size()) return;  // registered before a later Attach: a run that ended
  slots_[slot].push_back(std::move(read));
}

void KafkaInstanceOffsets::Revoke(const std::string& why) {
  std::lock_guard<std::mutex> commit(commit_mu_);
  std::lock_guard<std::mutex> lock(mu_);
  if (revoked_.empty()) revoked_ = why.empty() ? std::string("partitions revoked") : why;
}

Status KafkaInstanceOffsets::Commit(
    int64_t checkpoint_id,
    const std::function<Status(const std::vector<const KafkaReadOffsets*>&)>& commit) {
  std::lock_guard<std::mutex> commit_lock(commit_mu_);
  std::vector<KafkaReadOffsets> newest;  // copies: Record may grow a slot meanwhile
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!revoked_.empty()) {
      return Status::Reassigned("checkpoint " + std::to_string(checkpoint_id) +
                                " not committed: " + revoked_);
    }
    for (const std::vector<KafkaReadOffsets>& slot : slots_) {
      const KafkaReadOffsets* best = nullptr;
      for (const KafkaReadOffsets& r : slot) {
        if (r.checkpoint_id <= checkpoint_id) best = &r;
      }
      if (best != nullptr) newest.push_back(*best);
    }
  }
  std::vector<const KafkaReadOffsets*> view;
  for (const KafkaReadOffsets& r : newest) view.push_back(&r);
  Status s = commit(view);
  if (!s.ok()) return s;
  std::lock_guard<std::mutex> lock(mu_);
  for (std::vector<KafkaReadOffsets>& slot : slots_) {
    size_t keep = 0;
    while (keep < slot.size() && slot[keep].checkpoint_id <= checkpoint_id) ++keep;
    slot.erase(slot.begin(), slot.begin() + static_cast<std::ptrdiff_t>(keep));
  }
  return Status::Ok();
}

std::vector<int32_t> KafkaUnassignedPartitions(int32_t partitions, const KafkaGroupLook& look) {
  std::vector<bool> held(static_cast<size_t>(std::max(partitions, 0)), false);
  for (const auto& [member, owned] : look.members) {
    for (int32_t p : owned) {
      if (p >= 0 && p < partitions) held[static_cast<size_t>(p)] = true;
    }
  }
  std::vector<int32_t> free;
  for (int32_t p = 0; p < partitions; ++p) {
    if (!held[static_cast<size_t>(p)]) free.push_back(p);
  }
  return free;
}

bool KafkaGroupLookActs(const KafkaGroupLook& look, std::string_view member) {
  std::string_view least;
  for (const auto& [id, owned] : look.members) {
    if (!id.empty() && (least.empty() || id < least)) least = id;
  }
  return !member.empty() && member == least;
}

}  // namespace flow::rt
