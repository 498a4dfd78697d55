#include "flow/runtime/engine/channel.h"

namespace flow::rt {

const char* ElementKindName(ElementKind kind) {
  switch (kind) {
    case ElementKind::kBatch:
      return "batch";
    case ElementKind::kWatermark:
      return "watermark";
    case ElementKind::kIdle:
      return "idle";
    case ElementKind::kActive:
      return "active";
    case ElementKind::kBarrier:
      return "barrier";
    case ElementKind::kCancelCheckpoint:
      return "cancel-checkpoint";
    case ElementKind::kEnd:
      return "end";
  }
  return "unknown";
}

bool ChannelBase::WaitForRoom(std::unique_lock<std::mutex>& lock) {
  if (gate_->cancelled()) return false;
  if (depth_.load(std::memory_order_relaxed) < capacity_) return true;
  auto start = std::chrono::steady_clock::now();
  writable_.wait(lock, [&] {
    return gate_->cancelled() || depth_.load(std::memory_order_relaxed) < capacity_;
  });
  auto waited = std::chrono::steady_clock::now() - start;
  blocked_ns_.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(waited).count(),
                        std::memory_order_relaxed);
  return !gate_->cancelled();
}

std::optional<size_t> InputGate::FindReadyLocked() {
  size_t n = channels_.size();
  for (size_t k = 0; k < n; ++k) {
    size_t i = (next_ + k) % n;
    ChannelBase* c = channels_[i];
    if (!c->blocked_ && c->HasElements()) {
      next_ = (i + 1) % n;
      return i;
    }
  }
  return std::nullopt;
}

Result<size_t> InputGate::WaitReady() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    if (cancelled()) return Status::Cancelled("input gate cancelled");
    if (auto i = FindReadyLocked()) return *i;
    readable_.wait(lock);
  }
}

Result<std::optional<size_t>> InputGate::WaitReadyFor(int64_t max_wait_ms) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(std::max<int64_t>(0, max_wait_ms));
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    if (cancelled()) return Status::Cancelled("input gate cancelled");
    if (auto i = FindReadyLocked()) return std::optional<size_t>(*i);
    if (woken_) {
      woken_ = false;
      return std::optional<size_t>();
    }
    if (readable_.wait_until(lock, deadline) == std::cv_status::timeout) {
      if (auto i = FindReadyLocked()) return std::optional<size_t>(*i);
      return std::optional<size_t>();
    }
  }
}

void InputGate::Wake() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    woken_ = true;
  }
  readable_.notify_all();
}

std::optional<size_t> InputGate::PollReady() {
  std::lock_guard<std::mutex> lock(mu_);
  return FindReadyLocked();
}

void InputGate::Block(size_t index) {
  std::lock_guard<std::mutex> lock(mu_);
  channels_[index]->blocked_ = true;
}

void InputGate::Unblock(size_t index) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    channels_[index]->blocked_ = false;
  }
  readable_.notify_one();
}

bool InputGate::IsBlocked(size_t index) {
  std::lock_guard<std::mutex> lock(mu_);
  return channels_[index]->blocked_;
}

void InputGate::Cancel() {
  std::lock_guard<std::mutex> lock(mu_);
  cancelled_.store(true, std::memory_order_release);
  readable_.notify_all();
  for (ChannelBase* c : channels_) c->writable_.notify_all();
}

}  // namespace flow::rt
