#include "flow/runtime/common/run_handover.h"

#include <utility>

namespace flow::rt {

void RunHandover::Keep(const std::string& name, std::shared_ptr<Kept> kept) {
  std::shared_ptr<Kept> before;
  {
    std::lock_guard<std::mutex> lock(mu_);
    before = std::exchange(kept_[name], std::move(kept));
  }
  if (before != nullptr) before->Drop(/*stopping=*/false);
}

std::shared_ptr<RunHandover::Kept> RunHandover::Take(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = kept_.find(name);
  if (it == kept_.end()) return nullptr;
  std::shared_ptr<Kept> out = std::move(it->second);
  kept_.erase(it);
  return out;
}

void RunHandover::DropAll(bool stopping) {
  std::map<std::string, std::shared_ptr<Kept>> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    all.swap(kept_);
  }
  // Outside the lock: dropping a Kafka member can take seconds (it leaves its group).
  for (auto& [name, kept] : all) kept->Drop(stopping);
}

size_t RunHandover::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return kept_.size();
}

}  // namespace flow::rt
