#include "flow/runtime/connectors/kafka_instance.h"

#include <map>

namespace flow::rt {

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

}  // namespace flow::rt
