#pragma once
// Shared by the operator tests: a small record type, hand-made accumulators, a generator of
// out-of-order streams with interleaved watermarks (as a bounded-out-of-orderness source emits
// them), and a driver that runs an operator at changing parallelism with snapshots in between.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "flow/runtime/common/serde.h"
#include "flow/runtime/common/status.h"
#include "flow/runtime/operators/collector.h"
#include "flow/runtime/state/key_group_span.h"
#include "flow/runtime/state/key_hash.h"

namespace flow::rt::testing {

struct Event {
  int64_t key = 0;
  int64_t value = 0;
  int64_t id = 0;  // unique per generated record
  void Serialize(BinaryWriter& w) const {
    w.PutI64(key);
    w.PutI64(value);
    w.PutI64(id);
  }
  Status Deserialize(BinaryReader& r) {
    FLOW_RETURN_IF_ERROR(r.GetI64(&key));
    FLOW_RETURN_IF_ERROR(r.GetI64(&value));
    return r.GetI64(&id);
  }
};

// count(), sum(value), max(value) as one composite accumulator, as code generation would make it.
struct CountSumMax {
  int64_t count = 0;
  int64_t sum = 0;
  int64_t max = INT64_MIN;
  void Add(const Event& e) {
    ++count;
    sum += e.value;
    max = std::max(max, e.value);
  }
  void Merge(const CountSumMax& o) {
    count += o.count;
    sum += o.sum;
    max = std::max(max, o.max);
  }
  std::tuple<int64_t, int64_t, int64_t> Result() const { return {count, sum, max}; }
  void Serialize(BinaryWriter& w) const {
    w.PutI64(count);
    w.PutI64(sum);
    w.PutI64(max);
  }
  Status Deserialize(BinaryReader& r) {
    FLOW_RETURN_IF_ERROR(r.GetI64(&count));
    FLOW_RETURN_IF_ERROR(r.GetI64(&sum));
    return r.GetI64(&max);
  }
};

// A window result row: (key, start, end, count, sum, max, emitted timestamp).
using WindowRow = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t>;

struct Step {
  enum class Kind { kRecord, kWatermark } kind = Kind::kRecord;
  Event event;
  TimestampMs timestamp = 0;  // record time, or the watermark
  int side = 0;               // joins: 0 left, 1 right
};

struct StreamShape {
  int records = 2000;
  int keys = 7;
  DurationMs max_delay = 20;    // the source's out-of-orderness bound
  int late_percent = 0;         // records delayed beyond the bound (may be late)
  DurationMs extra_delay = 60;  // how much beyond
  int watermark_every = 5;      // records between watermarks
  TimestampMs start = -500;     // negative times check pre-1970 alignment
};

// Records whose time advances by 0..3 ms, displaced back by up to max_delay; a watermark
// max_seen - max_delay - 1 after every few records; kMaxWatermark at the end.
inline std::vector<Step> GenerateStream(uint32_t seed, const StreamShape& shape) {
  std::mt19937 rng(seed);
  std::vector<Step> steps;
  TimestampMs base = shape.start, max_seen = kMinWatermark;
  for (int i = 0; i < shape.records; ++i) {
    base += static_cast<TimestampMs>(rng() % 4);
    TimestampMs t = base - static_cast<TimestampMs>(rng() % (shape.max_delay + 1));
    if (static_cast<int>(rng() % 100) < shape.late_percent) {
      t -= static_cast<TimestampMs>(rng() % (shape.extra_delay + 1));
    }
    Step s;
    s.event = Event{static_cast<int64_t>(rng() % shape.keys),
                    static_cast<int64_t>(rng() % 1000) - 300, i};
    s.timestamp = t;
    s.side = static_cast<int>(rng() % 2);
    steps.push_back(s);
    max_seen = std::max(max_seen, t);
    if ((i + 1) % shape.watermark_every == 0) {
      Step w;
      w.kind = Step::Kind::kWatermark;
      w.timestamp = max_seen - shape.max_delay - 1;
      steps.push_back(w);
    }
  }
  Step end;
  end.kind = Step::Kind::kWatermark;
  end.timestamp = kMaxWatermark;
  steps.push_back(end);
  return steps;
}

// Runs `steps` through an operator whose parallelism changes at snapshot points: phases[i] =
// (first step of the phase, parallelism). At each phase change every subtask snapshots and each
// new subtask restores all the old snapshots (keeping its own key groups). Records go to the
// subtask owning their key group; watermarks go to every subtask.
// Op needs: RestoreState, SnapshotState, OnWatermark, StateSize, counters(); `feed(op, step)`
// delivers a record. Returns the final subtasks.
template <typename Op, typename MakeOp, typename Feed>
std::vector<std::unique_ptr<Op>> RunPhases(const std::vector<Step>& steps,
                                           const std::vector<std::pair<size_t, uint32_t>>& phases,
                                           MakeOp make_op, Feed feed, uint64_t* late_dropped) {
  std::vector<std::unique_ptr<Op>> ops;
  size_t phase = 0;
  *late_dropped = 0;
  for (size_t i = 0; i <= steps.size(); ++i) {
    if (phase < phases.size() && phases[phase].first == i) {
      std::vector<std::string> snapshots;
      for (auto& op : ops) {
        BinaryWriter w;
        op->SnapshotState(&w);
        snapshots.push_back(w.Release());
        *late_dropped += op->counters().late_records_dropped;
      }
      uint32_t parallelism = phases[phase].second;
      std::vector<std::unique_ptr<Op>> next;
      for (uint32_t s = 0; s < parallelism; ++s) {
        next.push_back(make_op(KeyGroupSpan::ForSubtask(s, parallelism)));
        for (const std::string& snap : snapshots) {
          BinaryReader r(snap);
          Status st = next.back()->RestoreState(&r);
          EXPECT_TRUE(st.ok()) << st.ToString();
        }
      }
      ops = std::move(next);
      ++phase;
    }
    if (i == steps.size()) break;
    const Step& step = steps[i];
    if (step.kind == Step::Kind::kWatermark) {
      for (auto& op : ops) op->OnWatermark(step.timestamp);
    } else {
      uint32_t kg = KeyGroupOf(step.event.key, kDefaultMaxParallelism);
      feed(*ops[SubtaskForKeyGroup(kg, kDefaultMaxParallelism, static_cast<uint32_t>(ops.size()))],
           step);
    }
  }
  for (auto& op : ops) *late_dropped += op->counters().late_records_dropped;
  return ops;
}

// The phase plans every snapshot test runs: uninterrupted; 1 -> 1 mid-run; 1 -> 2 -> 4 -> 1.
inline std::vector<std::vector<std::pair<size_t, uint32_t>>> PhasePlans(size_t n) {
  return {{{0, 1}},
          {{0, 1}, {n / 2, 1}},
          {{0, 1}, {n / 4, 2}, {n / 2, 4}, {3 * n / 4, 1}},
          {{0, 3}, {n / 3, 2}}};
}

template <typename T>
std::vector<T> Sorted(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace flow::rt::testing
