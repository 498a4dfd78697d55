#include "flow/runtime/state/timer_service.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "flow/runtime/state/keyed_state_backend.h"

namespace flow::rt {
namespace {

using Fired = std::tuple<TimestampMs, int64_t, int64_t>;

TEST(TimerServiceTest, FiresDueTimersInOrderOnceEach) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    std::mt19937 rng(seed);
    KeyedStateBackend b(KeyGroupSpan::All());
    auto* t = b.CreateTimerService<int64_t, int64_t>("t");
    std::set<Fired> pending;  // reference: a set of (timestamp, key, ns)
    for (int i = 0; i < 2000; ++i) {
      Fired f{static_cast<TimestampMs>(rng() % 1000), rng() % 50, rng() % 3};
      t->Register(std::get<1>(f), std::get<2>(f), std::get<0>(f));
      pending.insert(f);
      if (rng() % 4 == 0) {  // delete a random pending timer
        auto it = pending.begin();
        std::advance(it, rng() % pending.size());
        EXPECT_TRUE(t->Delete(std::get<1>(*it), std::get<2>(*it), std::get<0>(*it)));
        pending.erase(it);
      }
    }
    EXPECT_EQ(t->size(), pending.size());
    std::vector<Fired> fired;
    for (TimestampMs w = -1; w < 1100; w += 37) {
      t->Advance(w, [&](const int64_t& k, const int64_t& ns, TimestampMs ts) {
        EXPECT_LE(ts, w);
        fired.emplace_back(ts, k, ns);
      });
    }
    EXPECT_TRUE(std::is_sorted(fired.begin(), fired.end(), [](const Fired& a, const Fired& b) {
      return std::get<0>(a) < std::get<0>(b);
    }));
    std::sort(fired.begin(), fired.end());
    EXPECT_EQ(fired, std::vector<Fired>(pending.begin(), pending.end()));
    EXPECT_EQ(t->size(), 0u);
  }
}

TEST(TimerServiceTest, CallbackMayRegisterTimers) {
  KeyedStateBackend b(KeyGroupSpan::All());
  auto* t = b.CreateTimerService<int64_t>("t");
  t->Register(1, 10);
  std::vector<TimestampMs> fired;
  t->Advance(100, [&](const int64_t& k, const VoidNamespace&, TimestampMs ts) {
    fired.push_back(ts);
    if (ts < 30) t->Register(k, ts + 10);
  });
  EXPECT_EQ(fired, (std::vector<TimestampMs>{10, 20, 30}));
  EXPECT_EQ(t->NextTimestamp(), kMaxWatermark);
}

TEST(TimerServiceTest, SnapshotSplitsByKeyGroup) {
  KeyedStateBackend b(KeyGroupSpan::All());
  auto* t = b.CreateTimerService<int64_t>("t");
  for (int64_t k = 0; k < 100; ++k) t->Register(k, 1000 - k);
  BinaryWriter w;
  b.SnapshotState(&w);
  std::vector<int64_t> keys;
  for (uint32_t sub = 0; sub < 3; ++sub) {
    KeyedStateBackend part(KeyGroupSpan::ForSubtask(sub, 3));
    auto* pt = part.CreateTimerService<int64_t>("t");
    BinaryReader r(w.data());
    ASSERT_TRUE(part.RestoreState(&r).ok());
    pt->Advance(kMaxWatermark, [&](const int64_t& k, const VoidNamespace&, TimestampMs ts) {
      EXPECT_EQ(ts, 1000 - k);
      EXPECT_EQ(SubtaskForKeyGroup(KeyGroupOf(k, kDefaultMaxParallelism), 128, 3), sub);
      keys.push_back(k);
    });
  }
  std::sort(keys.begin(), keys.end());
  ASSERT_EQ(keys.size(), 100u);
  for (int64_t k = 0; k < 100; ++k) EXPECT_EQ(keys[k], k);
}

}  // namespace
}  // namespace flow::rt
