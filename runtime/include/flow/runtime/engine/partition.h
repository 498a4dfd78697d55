#pragma once
// Engine-internal consumers that move a subtask's output to the next operators: a fan-out to
// several consumers, and channel writers for the edge kinds (forward, rebalance, broadcast, key
// groups). Control elements are sent to every channel of a writer. Used by one task thread.

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "flow/runtime/common/key_group.h"
#include "flow/runtime/engine/channel.h"
#include "flow/runtime/engine/operator.h"

namespace flow::rt {

enum class Partitioning {
  kDefault,    // forward when the parallelism is equal, else rebalance
  kForward,    // subtask i -> subtask i
  kRebalance,  // whole batches round-robin over all downstream subtasks
  kBroadcast,  // every batch to every downstream subtask
  kHash,       // by key group of the record's key hash
};

// Sends every element to several consumers; the last one may take the batch's buffer.
template <typename T>
class FanOut final : public BatchConsumer<T> {
 public:
  explicit FanOut(std::vector<BatchConsumer<T>*> targets) : targets_(std::move(targets)) {}
  Status ConsumeView(const Batch<T>& batch) override {
    for (BatchConsumer<T>* t : targets_) FLOW_RETURN_IF_ERROR(t->ConsumeView(batch));
    return Status::Ok();
  }
  Status Consume(Batch<T>& batch) override {
    for (size_t i = 0; i + 1 < targets_.size(); ++i)
      FLOW_RETURN_IF_ERROR(targets_[i]->ConsumeView(batch));
    return targets_.back()->Consume(batch);
  }
  Status OnWatermark(TimestampMs wm) override {
    return All([&](Consumer* c) { return c->OnWatermark(wm); });
  }
  Status OnIdle(bool idle) override {
    return All([&](Consumer* c) { return c->OnIdle(idle); });
  }
  Status OnBarrier(int64_t id) override {
    return All([&](Consumer* c) { return c->OnBarrier(id); });
  }
  Status OnCancelCheckpoint(int64_t id) override {
    return All([&](Consumer* c) { return c->OnCancelCheckpoint(id); });
  }
  Status OnEnd(bool drained) override {
    return All([&](Consumer* c) { return c->OnEnd(drained); });
  }

 private:
  template <typename F>
  Status All(F f) {
    for (BatchConsumer<T>* t : targets_) FLOW_RETURN_IF_ERROR(f(t));
    return Status::Ok();
  }
  std::vector<BatchConsumer<T>*> targets_;
};

// Output of an operator nobody reads: records are dropped.
template <typename T>
class DiscardConsumer final : public BatchConsumer<T> {
 public:
  Status ConsumeView(const Batch<T>&) override { return Status::Ok(); }
  Status OnWatermark(TimestampMs) override { return Status::Ok(); }
  Status OnIdle(bool) override { return Status::Ok(); }
  Status OnBarrier(int64_t) override { return Status::Ok(); }
  Status OnEnd(bool) override { return Status::Ok(); }
};

// Base of the channel writers: control elements go to every channel.
template <typename T>
class ChannelWriter : public BatchConsumer<T> {
 public:
  explicit ChannelWriter(std::vector<Channel<T>*> channels) : channels_(std::move(channels)) {}
  Status OnWatermark(TimestampMs wm) override { return Control(ElementKind::kWatermark, wm); }
  Status OnIdle(bool idle) override {
    return Control(idle ? ElementKind::kIdle : ElementKind::kActive, 0);
  }
  Status OnBarrier(int64_t id) override { return Control(ElementKind::kBarrier, id); }
  Status OnCancelCheckpoint(int64_t id) override {
    return Control(ElementKind::kCancelCheckpoint, id);
  }
  Status OnEnd(bool drained) override { return Control(ElementKind::kEnd, drained ? 1 : 0); }

 protected:
  Status Control(ElementKind kind, int64_t value) {
    for (Channel<T>* c : channels_) FLOW_RETURN_IF_ERROR(c->PushControl(kind, value));
    return Status::Ok();
  }
  Status PushCopy(Channel<T>* c, const Batch<T>& batch) {
    copy_.Clear();
    copy_.Append(batch);
    return c->PushBatch(copy_);
  }
  std::vector<Channel<T>*> channels_;
  Batch<T> copy_;
};

// Forward (one channel) and rebalance (round-robin over channels, whole batches).
template <typename T>
class RoundRobinWriter final : public ChannelWriter<T> {
 public:
  RoundRobinWriter(std::vector<Channel<T>*> channels, size_t start)
      : ChannelWriter<T>(std::move(channels)), next_(start % this->channels_.size()) {}
  Status ConsumeView(const Batch<T>& batch) override {
    if (batch.empty()) return Status::Ok();
    return this->PushCopy(Next(), batch);
  }
  Status Consume(Batch<T>& batch) override {
    if (batch.empty()) return Status::Ok();
    return Next()->PushBatch(batch);
  }

 private:
  Channel<T>* Next() {
    Channel<T>* c = this->channels_[next_];
    next_ = (next_ + 1) % this->channels_.size();
    return c;
  }
  size_t next_;
};

template <typename T>
class BroadcastWriter final : public ChannelWriter<T> {
 public:
  using ChannelWriter<T>::ChannelWriter;
  Status ConsumeView(const Batch<T>& batch) override {
    if (batch.empty()) return Status::Ok();
    for (Channel<T>* c : this->channels_) FLOW_RETURN_IF_ERROR(this->PushCopy(c, batch));
    return Status::Ok();
  }
};

// channels[j] leads to downstream subtask j. key_hash: uint64_t(const T&) (StableHash of the key).
template <typename T, typename KeyHash>
class HashWriter final : public ChannelWriter<T> {
 public:
  HashWriter(std::vector<Channel<T>*> channels, KeyHash key_hash, uint32_t max_parallelism,
             size_t batch_size)
      : ChannelWriter<T>(std::move(channels)),
        key_hash_(std::move(key_hash)),
        max_parallelism_(max_parallelism),
        batch_size_(batch_size),
        pending_(this->channels_.size()) {}

  Status ConsumeView(const Batch<T>& batch) override {
    const uint32_t p = static_cast<uint32_t>(this->channels_.size());
    for (size_t i = 0; i < batch.size(); ++i) {
      uint32_t group = KeyGroupForHash(key_hash_(batch.records[i]), max_parallelism_);
      uint32_t target = SubtaskForKeyGroup(group, max_parallelism_, p);
      Batch<T>& b = pending_[target];
      b.Add(batch.records[i], batch.timestamps[i]);
      if (b.size() >= batch_size_) FLOW_RETURN_IF_ERROR(this->channels_[target]->PushBatch(b));
    }
    // Partial batches go out at once: holding them would add latency and reorder them with
    // control elements.
    for (size_t j = 0; j < pending_.size(); ++j) {
      if (!pending_[j].empty()) FLOW_RETURN_IF_ERROR(this->channels_[j]->PushBatch(pending_[j]));
    }
    return Status::Ok();
  }

 private:
  KeyHash key_hash_;
  uint32_t max_parallelism_;
  size_t batch_size_;
  std::vector<Batch<T>> pending_;
};

}  // namespace flow::rt
