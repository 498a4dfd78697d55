#include "flow/runtime/engine/state_adoption.h"

#include <chrono>
#include <filesystem>
#include <limits>
#include <thread>

#include <fmt/format.h>

#include "flow/runtime/checkpoint/checkpoint_storage.h"

namespace flow::rt {

StateAdoption::StateAdoption(std::string instance, std::string state_root, uint32_t max_parallelism)
    : instance_(std::move(instance)),
      state_root_(std::move(state_root)),
      max_parallelism_(max_parallelism) {}

void StateAdoption::Expect(const std::string& reader, uint32_t subtasks) {
  std::lock_guard<std::mutex> lock(mu_);
  readers_[reader].subtasks = subtasks;
}

void StateAdoption::Publish(const std::string& reader, uint32_t subtask, int32_t partitions,
                            const std::map<int32_t, std::optional<StateOrigin>>& assigned) {
  std::lock_guard<std::mutex> lock(mu_);
  Reader& r = readers_[reader];
  r.partitions = partitions;
  r.published[subtask] = assigned;
}

Result<AdoptedPartitions> StateAdoption::Wait(const std::string& reader,
                                              const std::atomic<bool>* cancel) const {
  // Polled, not signalled: a wait ends within a few milliseconds of the cancel flag, which the
  // engine sets without knowing about this object.
  while (true) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = readers_.find(reader);
      if (it == readers_.end()) {
        return Status::Internal(fmt::format(
            "no repartition source '{}' is expected to publish its partitions", reader));
      }
      const Reader& r = it->second;
      if (r.published.size() >= r.subtasks) {
        AdoptedPartitions out;
        out.partitions = r.partitions;
        for (const auto& [subtask, assigned] : r.published) {
          for (const auto& [partition, origin] : assigned) {
            if (origin) out.origins[partition] = *origin;
          }
        }
        return out;
      }
    }
    if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) {
      return Status::Cancelled(
          fmt::format("the run ended before repartition source '{}' knew its partitions", reader));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void StateAdoption::SetNamed(const std::string& reader, std::optional<std::set<int64_t>> named) {
  std::lock_guard<std::mutex> lock(mu_);
  readers_[reader].named = std::move(named);
}

std::optional<std::set<int64_t>> StateAdoption::Named() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::set<int64_t> all;
  for (const auto& [name, r] : readers_) {
    if (!r.named) return std::nullopt;
    all.insert(r.named->begin(), r.named->end());
  }
  return all;
}

std::string StateAdoption::PathOf(const StateOrigin& origin) const {
  return (std::filesystem::path(state_root_) / origin.instance /
          CheckpointDirName(origin.checkpoint_id))
      .string();
}

Result<std::shared_ptr<const RestorePoint>> StateAdoption::Checkpoint(const StateOrigin& origin) {
  const auto key = std::make_pair(origin.instance, origin.checkpoint_id);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = checkpoints_.find(key); it != checkpoints_.end()) return it->second;
  }
  // Verified outside the lock: it reads every file's checksum.
  const std::string path = PathOf(origin);
  auto point = VerifyCheckpoint(path);
  if (!point.ok()) {
    return Status(point.status().code(),
                  fmt::format("the state of instance {}'s checkpoint {} ({}): {}", origin.instance,
                              origin.checkpoint_id, path, point.status().message()));
  }
  if (point->metadata.job_fingerprint != fingerprint_ ||
      point->metadata.max_parallelism != max_parallelism_) {
    return Status::InvalidArgument(fmt::format(
        "{}: taken by another build of the job (graph or max parallelism differ); every instance "
        "of a job must run the same binary (docs/deploy.md)",
        path));
  }
  auto shared = std::make_shared<const RestorePoint>(std::move(point).value());
  std::lock_guard<std::mutex> lock(mu_);
  return checkpoints_.emplace(key, std::move(shared)).first->second;
}

namespace {
RestartPolicyOptions NamedReadBackoff() {
  RestartPolicyOptions o;
  o.initial_delay_ms = 1000;
  o.max_delay_ms = 60000;
  o.multiplier = 2.0;
  o.max_attempts = std::numeric_limits<uint32_t>::max();  // reads never give up
  return o;
}
}  // namespace

NamedReadPacing::NamedReadPacing() : backoff_(NamedReadBackoff()) {}

uint32_t NamedReadPacing::Failed(int64_t now_ms) {
  ++failed_;
  next_ms_ = now_ms + backoff_.NextDelay().value_or(60000);
  return failed_;
}

uint32_t NamedReadPacing::Succeeded() {
  const uint32_t failed = failed_;
  failed_ = 0;
  next_ms_ = 0;
  backoff_.Reset();
  return failed;
}

}  // namespace flow::rt
