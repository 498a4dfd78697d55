#include "flow/runtime/state/keyed_state_backend.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

namespace flow::rt {
namespace {

TEST(KeyGroupSpanTest, ForSubtaskMatchesSubtaskForKeyGroup) {
  for (uint32_t parallelism : {1u, 2u, 3u, 4u, 7u, 128u}) {
    for (uint32_t g = 0; g < kDefaultMaxParallelism; ++g) {
      uint32_t owner = SubtaskForKeyGroup(g, kDefaultMaxParallelism, parallelism);
      for (uint32_t s = 0; s < parallelism; ++s) {
        EXPECT_EQ(KeyGroupSpan::ForSubtask(s, parallelism).Contains(g), s == owner)
            << "group " << g << " parallelism " << parallelism;
      }
    }
  }
}

TEST(KeyedStateTest, ValueListMapBasics) {
  KeyedStateBackend b(KeyGroupSpan::All());
  auto* v = b.CreateValueState<std::string, int64_t>("v");
  auto* l = b.CreateListState<int64_t, std::string>("l");
  auto* m = b.CreateMapState<int64_t, int64_t, double>("m");
  EXPECT_EQ(v->Get("a"), nullptr);
  v->Put("a", 5);
  v->GetOrInsert("b") += 3;
  v->GetOrInsert("b") += 4;
  ASSERT_NE(v->Get("a"), nullptr);
  EXPECT_EQ(*v->Get("a"), 5);
  EXPECT_EQ(*v->Get("b"), 7);
  EXPECT_TRUE(v->Remove("a"));
  EXPECT_FALSE(v->Remove("a"));
  l->Add(1, "x");
  l->Add(1, "y");
  EXPECT_EQ(*l->Get(1), (std::vector<std::string>{"x", "y"}));
  m->Put(1, 10, 1.5);
  m->Put(1, 11, 2.5);
  m->GetOrInsert(2, 20) = 9;
  double sum = 0;
  m->ForEach(1, [&](const int64_t&, double& x) { sum += x; });
  EXPECT_EQ(sum, 4.0);
  EXPECT_EQ(b.TotalEntries(), 1u + 1u + 3u);
  EXPECT_TRUE(m->Remove(1, 10));
  EXPECT_TRUE(m->Remove(1, 11));
  EXPECT_TRUE(m->RemoveKey(2));
  v->Remove("b");
  l->Remove(1);
  EXPECT_EQ(b.TotalEntries(), 0u);
}

// Reference contents kept by the test, independent of the backend.
struct Contents {
  std::map<int64_t, int64_t> values;
  std::map<int64_t, std::vector<int64_t>> lists;
  std::map<std::pair<int64_t, int64_t>, std::string> maps;
};

struct States {
  explicit States(KeyGroupSpan range) : backend(range) {
    v = backend.CreateValueState<int64_t, int64_t>("v");
    l = backend.CreateListState<int64_t, int64_t>("l");
    m = backend.CreateMapState<int64_t, int64_t, std::string>("m");
    t = backend.CreateTimerService<int64_t>("t");
  }
  KeyedStateBackend backend;
  ValueState<int64_t, int64_t>* v;
  ListState<int64_t, int64_t>* l;
  MapState<int64_t, int64_t, std::string>* m;
  TimerService<int64_t>* t;
};

Contents Fill(States* s, uint32_t seed) {
  std::mt19937 rng(seed);
  Contents c;
  for (int i = 0; i < 3000; ++i) {
    int64_t key = static_cast<int64_t>(rng() % 500);
    int64_t x = static_cast<int64_t>(rng() % 1000);
    switch (rng() % 3) {
      case 0:
        s->v->Put(key, x);
        c.values[key] = x;
        break;
      case 1:
        s->l->Add(key, x);
        c.lists[key].push_back(x);
        break;
      default:
        s->m->Put(key, x % 7, std::to_string(x));
        c.maps[{key, x % 7}] = std::to_string(x);
    }
    s->t->Register(key, x);
  }
  return c;
}

// Checks `s` holds exactly the entries of `c` whose key group lies in its range.
void ExpectHolds(States* s, const Contents& c) {
  size_t expected = 0;
  for (const auto& [k, x] : c.values) {
    bool owned = s->backend.Owns(s->backend.KeyGroupFor(k));
    expected += owned;
    if (owned) {
      int64_t* got = s->v->Get(k);
      ASSERT_NE(got, nullptr);
      EXPECT_EQ(*got, x);
    }
  }
  for (const auto& [k, xs] : c.lists) {
    if (!s->backend.Owns(s->backend.KeyGroupFor(k))) continue;
    ++expected;
    ASSERT_NE(s->l->Get(k), nullptr);
    EXPECT_EQ(*s->l->Get(k), xs);
  }
  for (const auto& [kk, x] : c.maps) {
    if (!s->backend.Owns(s->backend.KeyGroupFor(kk.first))) continue;
    ++expected;
    ASSERT_NE(s->m->Get(kk.first, kk.second), nullptr);
    EXPECT_EQ(*s->m->Get(kk.first, kk.second), x);
  }
  EXPECT_EQ(s->backend.TotalEntries() - s->t->size(), expected);
}

TEST(KeyedStateTest, SnapshotRestoresAtOtherParallelism) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    States full(KeyGroupSpan::All());
    Contents c = Fill(&full, seed);
    BinaryWriter w;
    full.backend.SnapshotState(&w);
    size_t timers = full.t->size();

    for (uint32_t parallelism : {2u, 4u}) {
      std::vector<std::string> parts;
      size_t timers_sum = 0;
      for (uint32_t sub = 0; sub < parallelism; ++sub) {
        States part(KeyGroupSpan::ForSubtask(sub, parallelism));
        BinaryReader r(w.data());
        ASSERT_TRUE(part.backend.RestoreState(&r).ok());
        ExpectHolds(&part, c);
        timers_sum += part.t->size();
        BinaryWriter pw;
        part.backend.SnapshotState(&pw);
        parts.push_back(pw.Release());
      }
      EXPECT_EQ(timers_sum, timers);
      // Scale back in: restoring every part into one backend gives the original contents.
      States merged(KeyGroupSpan::All());
      for (const std::string& p : parts) {
        BinaryReader r(p);
        ASSERT_TRUE(merged.backend.RestoreState(&r).ok());
      }
      ExpectHolds(&merged, c);
      EXPECT_EQ(merged.t->size(), timers);
    }
  }
}

TEST(KeyedStateTest, CorruptSnapshotsAreRejected) {
  States full(KeyGroupSpan::All());
  Fill(&full, 7);
  BinaryWriter w;
  full.backend.SnapshotState(&w);
  const std::string bytes = w.data();
  for (size_t cut = 0; cut < bytes.size(); cut += 97) {
    States s(KeyGroupSpan::All());
    BinaryReader r(std::string_view(bytes).substr(0, cut));
    EXPECT_FALSE(s.backend.RestoreState(&r).ok()) << "cut " << cut;
  }
  std::mt19937 rng(7);
  for (int i = 0; i < 200; ++i) {
    std::string flipped = bytes;
    flipped[16 + rng() % (flipped.size() - 16)] ^= static_cast<char>(1 + rng() % 255);
    States s(KeyGroupSpan::All());
    BinaryReader r(flipped);
    EXPECT_FALSE(s.backend.RestoreState(&r).ok());
  }
  KeyedStateBackend other_max(KeyGroupSpan::All(64), 64);
  BinaryReader r(bytes);
  EXPECT_EQ(other_max.RestoreState(&r).code(), StatusCode::kInvalidArgument);
  KeyedStateBackend missing_state(KeyGroupSpan::All());
  BinaryReader r2(bytes);
  EXPECT_EQ(missing_state.RestoreState(&r2).code(), StatusCode::kInvalidArgument);
}

TEST(KeyedStateTest, ProcessingTimeTtl) {
  TimestampMs now = 1000;
  KeyedStateBackend b(KeyGroupSpan::All(), kDefaultMaxParallelism, [&now] { return now; });
  auto* v = b.CreateValueState<int64_t, int64_t>("v", StateTtl{100});
  auto* r = b.CreateValueState<int64_t, int64_t>(
      "r", StateTtl{100, TtlTimeDomain::kProcessingTime, TtlUpdate::kOnReadAndWrite});
  auto* m = b.CreateMapState<int64_t, int64_t, int64_t>("m", StateTtl{100});
  v->Put(1, 10);
  r->Put(1, 10);
  m->Put(1, 1, 1);
  now = 1050;
  m->Put(1, 2, 2);
  now = 1099;
  EXPECT_NE(v->Get(1), nullptr);
  EXPECT_NE(r->Get(1), nullptr);  // refreshed: now lives until 1199
  now = 1100;
  EXPECT_EQ(v->Get(1), nullptr);
  EXPECT_NE(r->Get(1), nullptr);
  EXPECT_EQ(m->Get(1, 1), nullptr);
  EXPECT_NE(m->Get(1, 2), nullptr);
  now = 1150;
  b.CleanupExpired();
  EXPECT_EQ(b.TotalEntries(), 1u);  // only r survives: m's entry 2 expired at 1150
  v->GetOrInsert(2) += 1;
  now = 1249;
  EXPECT_EQ(*v->Get(2), 1);
  now = 1250;
  EXPECT_EQ(v->GetOrInsert(2), 0);  // expired: starts again from a fresh value
}

TEST(KeyedStateTest, EventTimeTtlFollowsTheWatermark) {
  KeyedStateBackend b(KeyGroupSpan::All());
  auto* l = b.CreateListState<int64_t, int64_t>("l", StateTtl{50, TtlTimeDomain::kEventTime});
  b.AdvanceWatermark(100);
  l->Add(1, 1);
  b.AdvanceWatermark(149);
  l->Add(2, 2);
  EXPECT_NE(l->Get(1), nullptr);
  b.AdvanceWatermark(150);
  EXPECT_EQ(l->Get(1), nullptr);
  EXPECT_NE(l->Get(2), nullptr);
  b.AdvanceWatermark(120);  // watermarks never go back
  EXPECT_EQ(b.watermark(), 150);
  b.AdvanceWatermark(199);
  b.CleanupExpired();
  EXPECT_EQ(b.TotalEntries(), 0u);
}

}  // namespace
}  // namespace flow::rt
