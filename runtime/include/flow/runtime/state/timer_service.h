#pragma once
// TimerService<K, N>: event-time timers per (key, namespace, timestamp), stored per key group and
// snapshotted with the rest of the keyed state. Created by KeyedStateBackend::CreateTimerService.
//
// Contract: registering an existing timer is a no-op (timers are a set); Advance(w) fires every
// timer with timestamp <= w in timestamp order (ties in unspecified order), removing each before
// its callback runs; callbacks may register or delete timers (a timer registered at <= w during
// Advance fires in the same call). Threading: one subtask thread.

#include <cstdint>
#include <queue>
#include <string>
#include <vector>

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

#include "flow/runtime/state/state_table.h"

namespace flow::rt {

// The namespace of timers that need none.
struct VoidNamespace {
  bool operator==(const VoidNamespace&) const = default;
  uint64_t Hash() const { return 0; }
  void Serialize(BinaryWriter&) const {}
  Status Deserialize(BinaryReader&) { return Status::Ok(); }
};

template <StateKey K, typename N = VoidNamespace>
class TimerService : public StateTable {
 public:
  struct Timer {
    TimestampMs timestamp = 0;
    K key{};
    N ns{};
    bool operator==(const Timer&) const = default;
  };

  TimerService(std::string name, const StateContext* ctx)
      : name_(std::move(name)), ctx_(ctx), groups_(ctx->range.size()) {}

  const std::string& name() const override { return name_; }

  void Register(const K& key, const N& ns, TimestampMs timestamp) {
    Register(KeyGroupOf(key, ctx_->max_parallelism), Timer{timestamp, key, ns});
  }
  void Register(const K& key, TimestampMs timestamp) { Register(key, N{}, timestamp); }
  // True when the timer existed.
  bool Delete(const K& key, const N& ns, TimestampMs timestamp) {
    uint32_t kg = KeyGroupOf(key, ctx_->max_parallelism);
    return Set(kg).erase(Timer{timestamp, key, ns}) > 0;
    // Its bucket entry stays and is skipped when fired (lazy deletion).
  }
  bool Delete(const K& key, TimestampMs timestamp) { return Delete(key, N{}, timestamp); }

  // Fires due timers: fn(const K& key, const N& ns, TimestampMs timestamp).
  template <typename Fn>
  void Advance(TimestampMs watermark, Fn&& fn) {
    while (!times_.empty() && times_.top() <= watermark) {
      TimestampMs t = times_.top();
      times_.pop();
      // Taken out first: a callback that registers at `t` starts a new bucket, fired next.
      auto node = buckets_.extract(t);
      if (node.empty()) continue;
      for (QueueEntry& e : node.mapped()) {
        if (Set(e.key_group).erase(e.timer) == 0) continue;  // deleted or already fired
        fn(e.timer.key, e.timer.ns, e.timer.timestamp);
      }
    }
  }

  // Earliest pending timestamp, or kMaxWatermark when none.
  TimestampMs NextTimestamp() {
    while (!times_.empty()) {
      auto it = buckets_.find(times_.top());
      if (it != buckets_.end()) {
        for (const QueueEntry& e : it->second) {
          if (Set(e.key_group).contains(e.timer)) return it->first;
        }
        buckets_.erase(it);  // only deleted timers left
      }
      times_.pop();
    }
    return kMaxWatermark;
  }

  size_t size() const {
    size_t n = 0;
    for (const auto& s : groups_) n += s.size();
    return n;
  }

  size_t KeyGroupSize(uint32_t key_group) const override { return Set(key_group).size(); }
  void SnapshotKeyGroup(uint32_t key_group, BinaryWriter* out) const override {
    const auto& s = Set(key_group);
    out->PutU64(s.size());
    for (const Timer& t : s) {
      out->PutI64(t.timestamp);
      WriteValue(*out, t.key);
      WriteValue(*out, t.ns);
    }
  }
  Status RestoreKeyGroup(uint32_t key_group, BinaryReader* in) override {
    uint64_t n = 0;
    FLOW_RETURN_IF_ERROR(ReadCount(*in, &n, name_.c_str()));
    for (uint64_t i = 0; i < n; ++i) {
      Timer t;
      FLOW_RETURN_IF_ERROR(in->GetI64(&t.timestamp));
      FLOW_RETURN_IF_ERROR(ReadValue(*in, &t.key));
      FLOW_RETURN_IF_ERROR(ReadValue(*in, &t.ns));
      uint32_t kg = KeyGroupOf(t.key, ctx_->max_parallelism);
      if (kg != key_group) {
        return Status::Corruption("timers '" + name_ + "': a key of key group " +
                                  std::to_string(kg) + " was stored under group " +
                                  std::to_string(key_group));
      }
      Register(kg, std::move(t));
    }
    return Status::Ok();
  }
  void Clear() override {
    for (auto& s : groups_) s.clear();
    buckets_.clear();
    times_ = {};
  }

 private:
  struct TimerHash {
    size_t operator()(const Timer& t) const {
      return static_cast<size_t>(HashCombine(
          HashCombine(StableHash(t.timestamp), KeyHash<K>{}(t.key)), KeyHash<N>{}(t.ns)));
    }
  };
  // Flat (open addressing): no allocation per timer; windows register one per key and window.
  using TimerSet = absl::flat_hash_set<Timer, TimerHash>;
  struct QueueEntry {
    Timer timer;
    uint32_t key_group;
  };

  void Register(uint32_t key_group, Timer timer) {
    if (!Set(key_group).insert(timer).second) return;
    auto [it, fresh] = buckets_.try_emplace(timer.timestamp);
    if (fresh) times_.push(timer.timestamp);
    it->second.push_back(QueueEntry{std::move(timer), key_group});
  }
  TimerSet& Set(uint32_t key_group) {
    assert(ctx_->range.Contains(key_group) && "timer key group not owned by this backend");
    return groups_[key_group - ctx_->range.first];
  }
  const TimerSet& Set(uint32_t key_group) const {
    assert(ctx_->range.Contains(key_group) && "timer key group not owned by this backend");
    return groups_[key_group - ctx_->range.first];
  }

  std::string name_;
  const StateContext* ctx_;
  std::vector<TimerSet> groups_;
  // Timers in firing order, bucketed by timestamp: windows give every key the same few window
  // ends, so most registrations append to a bucket instead of sifting through a heap. Deleted
  // timers stay in their bucket and are skipped (the sets above are the truth).
  absl::flat_hash_map<TimestampMs, std::vector<QueueEntry>, KeyHasher<TimestampMs>> buckets_;
  std::priority_queue<TimestampMs, std::vector<TimestampMs>, std::greater<TimestampMs>> times_;
};

}  // namespace flow::rt
