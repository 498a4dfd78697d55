// A keyed running-count job over a deterministic split source, shared by the engine's recovery
// and restart tests: SplitSource (positions per split, rescalable), KeyedCount (a map of counts
// as its state, results reported at end of input) and Reference(), the counts computed directly.

#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "flow/runtime/common/key_group.h"
#include "flow/runtime/engine/job.h"

namespace flow::rt::split_count {

constexpr uint32_t kSplits = 12;
constexpr int64_t kPerSplit = 2000;
constexpr int64_t kKeys = 53;
constexpr int64_t kTotal = kSplits * kPerSplit;

// The value of record `i` of split `s` (its key is value % kKeys).
inline int64_t ValueOf(uint32_t s, int64_t i) {
  return static_cast<int64_t>(s) * 1000003 + i * 7;
}

inline uint64_t KeyHash(int64_t v) {
  return StableHash(v % kKeys);
}

struct SourceOptions {
  int sleep_every = 2;  // sleep 1 ms every this many polls (0: never), so runs last a while
  // > 0: stop at this index of every split and stay idle (so checkpoints are taken mid-input)
  // while `hold` is null or true.
  int64_t hold_at = 0;
  const std::atomic<bool>* hold = nullptr;
};

// kSplits splits; split s belongs to subtask s % parallelism. Position: per owned split, the next
// index. Rescaling takes each split's index from whichever old subtask owned it.
class SplitSource final : public SourceFunction<int64_t> {
 public:
  SplitSource(uint32_t subtask, uint32_t parallelism, SourceOptions options) : options_(options) {
    for (uint32_t s = subtask; s < kSplits; s += parallelism) next_[s] = 0;
  }
  Result<PollResult> PollBatch(Batch<int64_t>& out, size_t max) override {
    const bool held = options_.hold_at > 0 && (options_.hold == nullptr || options_.hold->load());
    const int64_t limit = held ? options_.hold_at : kPerSplit;
    size_t n = 0;
    for (auto& [split, next] : next_) {
      while (next < limit && n < std::min<size_t>(max, 16)) {
        out.Add(ValueOf(split, next), kNoEventTime);
        ++next;
        ++n;
      }
    }
    if (n == 0 && limit < kPerSplit) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return PollResult::kIdle;
    }
    if (options_.sleep_every > 0 && ++polls_ % options_.sleep_every == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    for (auto& [split, next] : next_) {
      if (next < kPerSplit) return PollResult::kRecords;
    }
    return PollResult::kEnd;
  }
  Status SnapshotPosition(BinaryWriter* out) const override {
    out->PutU32(static_cast<uint32_t>(next_.size()));
    for (const auto& [split, next] : next_) {
      out->PutU32(split);
      out->PutI64(next);
    }
    return Status::Ok();
  }
  Status RestorePosition(BinaryReader* in) override {
    uint32_t n = 0;
    FLOW_RETURN_IF_ERROR(in->GetU32(&n));
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t split = 0;
      int64_t next = 0;
      FLOW_RETURN_IF_ERROR(in->GetU32(&split));
      FLOW_RETURN_IF_ERROR(in->GetI64(&next));
      if (auto it = next_.find(split); it != next_.end()) it->second = next;
    }
    return Status::Ok();
  }
  Status RestoreRescaled(const std::vector<OldSourcePosition>& old,
                         uint32_t old_parallelism) override {
    for (const OldSourcePosition& o : old) {
      if (o.finished) {
        for (uint32_t s = o.subtask; s < kSplits; s += old_parallelism) {
          if (auto it = next_.find(s); it != next_.end()) it->second = kPerSplit;
        }
        continue;
      }
      BinaryReader r(o.position);
      FLOW_RETURN_IF_ERROR(RestorePosition(&r));
    }
    return Status::Ok();
  }

 private:
  SourceOptions options_;
  std::map<uint32_t, int64_t> next_;
  uint64_t polls_ = 0;
};

struct Results {
  std::mutex mu;
  std::map<int64_t, int64_t> counts;  // key -> final count, from every subtask's Finish
};

// What KeyedCount fails with: `status`, while the shared budget lasts, once a subtask has seen
// `after` records.
struct FailSpec {
  std::atomic<int>* budget = nullptr;
  Status status = Status::Ok();
  int64_t after = 0;
};

// Keyed running count; the map is its state. RestoreState keeps only the owned key groups.
class KeyedCount final : public OneInputOperator<int64_t, int64_t> {
 public:
  explicit KeyedCount(Results* results, FailSpec fail = {})
      : results_(results), fail_(std::move(fail)) {}
  Status Open(OperatorContext& ctx) override {
    ctx_ = &ctx;
    return Status::Ok();
  }
  Status ProcessBatch(const Batch<int64_t>& batch, Output<int64_t>&) override {
    for (int64_t v : batch.records) ++counts_[v % kKeys];
    seen_ += static_cast<int64_t>(batch.size());
    if (fail_.budget != nullptr && seen_ >= fail_.after && fail_.budget->load() > 0) {
      fail_.budget->fetch_sub(1);
      return fail_.status;
    }
    return Status::Ok();
  }
  Status SnapshotState(BinaryWriter* out) override {
    out->PutU64(counts_.size());
    for (const auto& [k, c] : counts_) {
      out->PutI64(k);
      out->PutI64(c);
    }
    return Status::Ok();
  }
  Status RestoreState(BinaryReader* in) override {
    uint64_t n = 0;
    FLOW_RETURN_IF_ERROR(in->GetU64(&n));
    for (uint64_t i = 0; i < n; ++i) {
      int64_t k = 0, c = 0;
      FLOW_RETURN_IF_ERROR(in->GetI64(&k));
      FLOW_RETURN_IF_ERROR(in->GetI64(&c));
      if (ctx_->key_groups.Contains(KeyGroupForHash(StableHash(k), ctx_->max_parallelism)))
        counts_[k] += c;
    }
    return Status::Ok();
  }
  Status Finish(Output<int64_t>&) override {
    std::lock_guard<std::mutex> lock(results_->mu);
    for (const auto& [k, c] : counts_) results_->counts[k] += c;
    return Status::Ok();
  }

 private:
  Results* results_;
  FailSpec fail_;
  OperatorContext* ctx_ = nullptr;
  std::unordered_map<int64_t, int64_t> counts_;
  int64_t seen_ = 0;
};

// The final count of every key, computed from the record formula.
inline std::map<int64_t, int64_t> Reference() {
  std::map<int64_t, int64_t> ref;
  for (uint32_t s = 0; s < kSplits; ++s) {
    for (int64_t i = 0; i < kPerSplit; ++i) ++ref[ValueOf(s, i) % kKeys];
  }
  return ref;
}

}  // namespace flow::rt::split_count
