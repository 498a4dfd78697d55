#pragma once
// Bounded channels and input gates.
//
// A Channel<T> connects one upstream subtask to one downstream subtask. It holds at most
// `capacity` elements (batches or control elements); Push blocks while it is full, which is how
// backpressure reaches the sources. All channels read by one downstream subtask share that
// subtask's InputGate (one mutex + one "readable" condition), so the reader can wait on all of
// them at once.
//
// The gate can BLOCK individual channels: a blocked channel is not read (its elements stay queued
// and its writer is eventually backpressured) until unblocked. Barrier alignment uses this.
//
// Threading: exactly one writer thread per channel and one reader thread per gate. Cancel() may be
// called from any thread; it wakes every waiter, and waits then return a kCancelled Status.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "flow/runtime/common/status.h"
#include "flow/runtime/engine/batch.h"

namespace flow::rt {

class InputGate;

// The untyped part of a channel: capacity accounting and instrumentation.
class ChannelBase {
 public:
  virtual ~ChannelBase() = default;
  size_t capacity() const { return capacity_; }
  // Elements queued now. Thread-safe.
  size_t Depth() const { return depth_.load(std::memory_order_relaxed); }
  // Highest depth ever observed (instrumentation for backpressure tests). Thread-safe.
  size_t MaxDepth() const { return max_depth_.load(std::memory_order_relaxed); }
  // Total nanoseconds the writer spent blocked on a full channel. Thread-safe.
  int64_t BlockedNanos() const { return blocked_ns_.load(std::memory_order_relaxed); }
  InputGate* gate() const { return gate_; }

 protected:
  friend class InputGate;
  ChannelBase(InputGate* gate, size_t capacity)
      : gate_(gate), capacity_(std::max<size_t>(1, capacity)) {}
  // Waits (with the gate mutex held in `lock`) until there is room; false when cancelled.
  bool WaitForRoom(std::unique_lock<std::mutex>& lock);
  void NoteDepth(size_t depth) {
    depth_.store(depth, std::memory_order_relaxed);
    if (depth > max_depth_.load(std::memory_order_relaxed))
      max_depth_.store(depth, std::memory_order_relaxed);
  }
  virtual bool HasElements() const = 0;  // gate mutex held

  InputGate* gate_;
  size_t capacity_;
  bool blocked_ = false;  // gate mutex held
  std::condition_variable writable_;
  std::atomic<size_t> depth_{0};
  std::atomic<size_t> max_depth_{0};
  std::atomic<int64_t> blocked_ns_{0};
};

// The reading side shared by all channels of one downstream subtask.
class InputGate {
 public:
  InputGate() = default;
  InputGate(const InputGate&) = delete;
  InputGate& operator=(const InputGate&) = delete;

  // Registers a channel; returns its index in this gate. Call before any thread uses the gate.
  size_t Add(ChannelBase* channel) {
    channels_.push_back(channel);
    return channels_.size() - 1;
  }
  size_t size() const { return channels_.size(); }
  ChannelBase* channel(size_t index) const { return channels_[index]; }

  // Index of a non-empty, unblocked channel, waiting until there is one (round-robin between
  // ready channels for fairness). kCancelled after Cancel().
  Result<size_t> WaitReady();
  // Like WaitReady but never waits: nullopt when no unblocked channel has an element.
  std::optional<size_t> PollReady();
  // Like WaitReady, but gives up after `max_wait_ms` (0: do not wait) or at Wake(): nullopt then.
  // Processing-time timers bound the wait this way.
  Result<std::optional<size_t>> WaitReadyFor(int64_t max_wait_ms);
  // Ends the reader's current (or next) WaitReadyFor early. Any thread.
  void Wake();

  // A blocked channel is skipped by WaitReady/PollReady until unblocked. Reader thread only.
  void Block(size_t index);
  void Unblock(size_t index);
  bool IsBlocked(size_t index);

  // Wakes all readers and writers of this gate; every later wait returns kCancelled.
  void Cancel();
  bool cancelled() const { return cancelled_.load(std::memory_order_acquire); }

  std::mutex& mutex() { return mu_; }
  void NotifyReadable() { readable_.notify_one(); }

 private:
  std::optional<size_t> FindReadyLocked();

  std::mutex mu_;
  std::condition_variable readable_;
  std::vector<ChannelBase*> channels_;
  size_t next_ = 0;
  bool woken_ = false;  // guarded by mu_
  std::atomic<bool> cancelled_{false};
};

template <typename T>
class Channel final : public ChannelBase {
 public:
  Channel(InputGate* gate, size_t capacity) : ChannelBase(gate, capacity) {}

  // Moves the records of `batch` into the channel and leaves `batch` empty (it receives a recycled
  // buffer when one is available). Blocks while the channel is full. kCancelled after Cancel().
  Status PushBatch(Batch<T>& batch) {
    Element<T> e;
    e.kind = ElementKind::kBatch;
    std::unique_lock<std::mutex> lock(gate_->mutex());
    if (!WaitForRoom(lock)) return Status::Cancelled("channel cancelled");
    if (!pool_.empty()) {
      e.batch = std::move(pool_.back());
      pool_.pop_back();
    }
    std::swap(e.batch, batch);
    queue_.push_back(std::move(e));
    NoteDepth(queue_.size());
    lock.unlock();
    gate_->NotifyReadable();
    return Status::Ok();
  }

  // Enqueues a control element. Blocks while the channel is full (control elements count toward
  // the capacity, so a channel never holds more than `capacity` elements).
  Status PushControl(ElementKind kind, int64_t value) {
    std::unique_lock<std::mutex> lock(gate_->mutex());
    if (!WaitForRoom(lock)) return Status::Cancelled("channel cancelled");
    Element<T> e;
    e.kind = kind;
    e.value = value;
    queue_.push_back(std::move(e));
    NoteDepth(queue_.size());
    lock.unlock();
    gate_->NotifyReadable();
    return Status::Ok();
  }

  // Takes the oldest element; false when empty. Reader thread only.
  bool Pop(Element<T>* out) {
    {
      std::lock_guard<std::mutex> lock(gate_->mutex());
      if (queue_.empty()) return false;
      *out = std::move(queue_.front());
      queue_.pop_front();
      NoteDepth(queue_.size());
    }
    writable_.notify_one();
    return true;
  }

  // Returns a consumed batch buffer so the writer can reuse its allocation.
  void Recycle(Batch<T>&& batch) {
    batch.Clear();
    std::lock_guard<std::mutex> lock(gate_->mutex());
    if (pool_.size() < kMaxPooled) pool_.push_back(std::move(batch));
  }

 private:
  static constexpr size_t kMaxPooled = 4;
  bool HasElements() const override { return !queue_.empty(); }

  std::deque<Element<T>> queue_;
  std::vector<Batch<T>> pool_;
};

}  // namespace flow::rt
